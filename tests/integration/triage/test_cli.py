"""`servops triage` as a user runs it: exit code, stdout and stderr.

Bad input is one line on stderr, exit 2, never a traceback; partial input still prints
the findings it supports. The error cases run the CLI in a subprocess, exactly as a user
does; the others call the same `advisor.cli.main.main` in-process, because every `servops`
process start costs seconds of imports on a shared 2-core box.
"""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli.main import main

CORPUS = Path(__file__).parents[2] / "fixtures" / "vllm"
COLLECT = Path(__file__).parents[2] / "fixtures" / "collect"


def triage(*args: str, stdin: str | None = None, timeout_s: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "advisor", "triage", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


class CliRun:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run `servops triage …` in-process through the real entry point."""

    def run(*args: str, stdin: str | None = None) -> CliRun:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        try:
            code = main(["triage", *args])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return CliRun(code, captured.out, captured.err)

    return run


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("servops triage: error:"), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_endpoint():
    port = free_port()
    assert_one_line_error(
        triage("--endpoint", f"http://127.0.0.1:{port}", "--timeout", "3"), f"127.0.0.1:{port}", "cannot reach"
    )


def test_endpoint_that_never_answers_times_out():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        assert_one_line_error(triage("--endpoint", f"http://127.0.0.1:{port}", "--timeout", "1"), "within 1 s")


def test_unreachable_prometheus():
    port = free_port()
    assert_one_line_error(
        triage("--prometheus", f"http://127.0.0.1:{port}", "--timeout", "3"), "--prometheus", "cannot reach"
    )


def test_malformed_selector(cli):
    assert_one_line_error(cli("--prometheus", "http://127.0.0.1:9", "--selector", "job=vllm"), "--selector")


def test_malformed_exposition_text(tmp_path):
    bad = tmp_path / "metrics.txt"
    bad.write_text("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=0} 3\n")
    assert_one_line_error(triage("--metrics", str(bad)), str(bad), "line 2")


def test_garbage_log_file(tmp_path):
    garbage = tmp_path / "server.log"
    garbage.write_bytes(bytes(range(256)) * 4)
    assert_one_line_error(triage("--logs", str(garbage)), str(garbage), "vLLM log")


def test_text_that_holds_nothing_known_is_read_and_said_so():
    """Any text is read (a paste is rarely a clean log): nothing found is an answer, not an error."""
    proc = triage("--logs", "-", stdin="lorem ipsum\ndolor sit amet\n")
    assert proc.returncode == 0, proc.stderr
    assert "0 events from 2 lines (0 read as vLLM log)" in proc.stdout


def test_no_input_at_all(cli):
    assert_one_line_error(cli(), "nothing to triage")


def test_unknown_model_named_by_the_user(cli):
    proc = cli("--logs", str(CORPUS / "v0_15_max_model_len_no_fit.log"), "--model", "NoSuchModel-9B")
    assert_one_line_error(proc, "NoSuchModel-9B")


def test_bad_every_duration(cli, tmp_path):
    proc = cli("--metrics", str(COLLECT / "metrics_v0_33_0.txt"), "--every", "often", "--out", str(tmp_path))
    assert_one_line_error(proc, "--every")


def test_partial_input_a_log_alone_prints_its_findings(cli):
    proc = cli("--logs", str(CORPUS / "v0_15_max_model_len_no_fit.log"))
    assert proc.returncode == 0, proc.stderr
    assert "[CRITICAL] OP-1.1" in proc.stdout and "--max-model-len" in proc.stdout


def test_log_on_stdin_with_json_to_stdout(cli):
    log = (CORPUS / "v0_12_preemption_stats.log").read_text()
    proc = cli("--logs", "-", "--json", "-", stdin=log)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["kind"] == "triage" and document["findings"][0]["rule"] == "OP-5.3"


def test_json_file_and_human_output_together(cli, tmp_path):
    out = tmp_path / "triage.json"
    proc = cli(
        "--metrics",
        str(CORPUS / "v0_33_preempting_before.prom"),
        "--metrics",
        str(CORPUS / "v0_33_preempting_after.prom"),
        "--metrics-interval",
        "10",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    assert document["findings"][0]["rule"] == proc.stdout.split("] ", 1)[1].split()[0]


def test_scheduled_two_runs_report_what_changed(cli, tmp_path):
    proc = cli(
        "--metrics", str(COLLECT / "metrics_v0_33_0.txt"), "--every", "0.1s", "--out", str(tmp_path), "--count", "2"
    )
    assert proc.returncode == 0, proc.stderr
    assert "run 1 at" in proc.stdout and "run 2 at" in proc.stdout
    assert "first run" in proc.stdout and "no change since" in proc.stdout
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == 2


def test_scheduled_runs_against_a_dead_endpoint_fail_with_one_line_each(cli, tmp_path):
    port = free_port()
    proc = cli(
        "--endpoint",
        f"http://127.0.0.1:{port}",
        "--timeout",
        "2",
        "--every",
        "0.1s",
        "--out",
        str(tmp_path),
        "--count",
        "2",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 2


@pytest.mark.parametrize("flag", ["--help"])
def test_help_lists_every_flag_with_text(cli, flag):
    proc = cli(flag)
    assert proc.returncode == 0
    for name in (
        "--endpoint",
        "--prometheus",
        "--selector",
        "--metrics",
        "--metrics-interval",
        "--logs",
        "--server-args",
        "--model",
        "--gpu",
        "--gpus",
        "--json",
        "--every",
        "--out",
        "--count",
    ):
        assert name in proc.stdout


def test_stdin_cannot_feed_a_schedule(cli, tmp_path):
    proc = cli("--logs", "-", "--every", "1m", "--out", str(tmp_path), "--count", "2", stdin="INFO x\n")
    assert_one_line_error(proc, "--logs -")


def test_workload_hints_reach_the_rules_and_replicas_are_tabled(cli):
    before, after = str(CORPUS / "v0_33_fleet_before.prom"), str(CORPUS / "v0_33_fleet_after.prom")
    proc = cli(
        "--metrics",
        before,
        "--metrics",
        after,
        "--metrics-interval",
        "10",
        "--prefix-reuse",
        "0.7",
        "--replicas",
        "2",
        "--routing",
        "round_robin",
    )
    assert proc.returncode == 0, proc.stderr
    assert "OP-4.3" in proc.stdout.split("\n\n")[1]  # the first finding: prefix-unaware routing
    table = proc.stdout.split("Replicas (10 s window):")[1].splitlines()[1:]
    rows = [row for row in table if row.startswith("  ")]  # the notes follow the table, unindented
    assert [row.split()[0] for row in rows[1:]] == ["10.0.0.1:8000", "10.0.0.2:8000"]


def test_no_facts_keeps_the_json_small_and_the_text_whole(cli, tmp_path):
    out = tmp_path / "t.json"
    proc = cli("--metrics", str(COLLECT / "metrics_v0_33_0.txt"), "--no-facts", "--json", str(out))
    assert proc.returncode == 0 and proc.stdout.splitlines()[1].startswith("now: running 8")
    document = json.loads(out.read_text())
    assert "facts" not in document and document["findings"]
