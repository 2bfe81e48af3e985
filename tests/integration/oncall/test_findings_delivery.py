"""Scheduled triage's findings reaching the on-call stack for real:

- `--serve-metrics`: a real Prometheus scrapes servops's own /metrics and stores
  `servops_triage_finding{rule,severity,target}` and the run counters;
- `--alertmanager`: a real Alertmanager (Debian's prometheus-alertmanager, on 127.0.0.1) shows the
  finding as an active alert with the pack's labels, resolves it when a later run no longer finds it,
  and the schedule keeps running after Alertmanager goes away;
- a taken port and an absent Alertmanager are one line and exit 2, before any run.

The triaged input is a log file the test rewrites between runs: first vLLM 0.15's "max-model-len does
not fit" start-up failure (OP-1.1, critical), then a healthy start (no finding).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.server_process import stop_server
from tests.integration.triage.prometheus_proc import prometheus_binary, query, running_prometheus

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).parents[2] / "fixtures" / "vllm"
NO_FIT, HEALTHY = FIXTURES / "v0_15_max_model_len_no_fit.log", FIXTURES / "v0_30_healthy.log"
WAIT_S = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _until(check: Callable[[], object], what: str, timeout_s: float = WAIT_S) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            if found := check():
                return found
        time.sleep(0.5)
    raise AssertionError(f"{what} within {timeout_s:.0f} s")


@contextlib.contextmanager
def scheduled_triage(log: Path, out: Path, *flags: str) -> Iterator[subprocess.Popen]:
    """`servops triage --logs LOG --every 1s` in the background (at most 120 runs), always stopped."""
    argv = [sys.executable, "-m", "advisor", "triage", "--logs", str(log), "--every", "1s", "--count", "120"]
    with open(out.parent / "triage.stderr", "w") as err:
        process = subprocess.Popen([*argv, "--out", str(out), *flags], stdout=subprocess.DEVNULL, stderr=err)
    try:
        yield process
    finally:
        if process.poll() is None:
            # SIGTERM, not SIGINT: a suite run in the background hands its children SIGINT ignored (POSIX), and
            # the schedule then ran on until the 20 s wait below killed it, in each test that used it.
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def _runs(out: Path) -> int:
    history = out / "history.jsonl"
    return len(history.read_text().splitlines()) if history.exists() else 0


def test_prometheus_scrapes_the_last_runs_findings(tmp_path: Path):
    prometheus_binary()  # skips, saying why, without Prometheus
    port = _free_port()
    with (
        scheduled_triage(NO_FIT, tmp_path / "runs", "--serve-metrics", f"127.0.0.1:{port}") as triage,
        running_prometheus([f"127.0.0.1:{port}"], tmp_path / "prometheus", job="servops") as url,
    ):
        rows = _until(lambda: query(url, 'servops_triage_finding{rule="OP-1.1"}'), "no OP-1.1 finding in Prometheus")
        runs = query(url, "servops_triage_runs_total")
        assert triage.poll() is None
    labels = rows[0]["metric"]
    assert labels["severity"] == "critical" and labels["target"] == str(NO_FIT) and rows[0]["value"][1] == "1"
    assert any(r["metric"]["outcome"] == "ok" and float(r["value"][1]) >= 1 for r in runs), runs


def test_a_taken_port_is_one_line_and_exit_2_before_any_run(tmp_path: Path, capsys):
    from advisor.cli.main import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["triage", "--logs", str(NO_FIT), "--every", "1s", "--count", "1", "--out", str(tmp_path / "runs")]
        code = main([*argv, "--serve-metrics", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2 and f"--serve-metrics 127.0.0.1:{port}: cannot listen there" in err and "Traceback" not in err
    assert _runs(tmp_path / "runs") == 0


@contextlib.contextmanager
def running_alertmanager(workdir: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    binary = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if binary is None:
        pytest.skip("Alertmanager is not installed (apt-get install prometheus-alertmanager; scripts/install.sh does)")
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "alertmanager.yml"
    config.write_text('route:\n  receiver: "null"\n  group_wait: 1s\nreceivers:\n  - name: "null"\n')
    port = _free_port()
    with open(workdir / "alertmanager.log", "wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200, "Alertmanager not ready")
        yield url, process
    finally:
        stop_server(process, timeout_s=20)


def _active(url: str) -> list[dict]:
    with urllib.request.urlopen(f"{url}/api/v2/alerts?active=true", timeout=5) as response:
        return [a for a in json.loads(response.read()) if a["status"]["state"] == "active"]


def test_alertmanager_shows_the_finding_resolves_it_and_the_schedule_outlives_it(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(NO_FIT.read_bytes())
    out = tmp_path / "runs"
    with running_alertmanager(tmp_path / "am") as (url, alertmanager):
        with scheduled_triage(log, out, "--alertmanager", url, "--runbook-base", "https://docs.example/servops") as run:
            active = _until(lambda: [a for a in _active(url) if a["labels"]["rule"] == "OP-1.1"], "no OP-1.1 alert")
            alert = active[0]
            assert alert["labels"]["alertname"] == "ServopsOP1_1" and alert["labels"]["severity"] == "critical"
            assert alert["labels"]["target"] == str(log)
            assert alert["annotations"]["runbook_url"].startswith(
                "https://docs.example/servops/rule-pages.md#op-11-max-model-len-does-not-fit-the-kv-cache"
            )
            assert "max-model-len 262,144" in alert["annotations"]["description"]
            log.write_bytes(HEALTHY.read_bytes())  # the next run finds nothing: the alert resolves
            _until(lambda: not [a for a in _active(url) if a["labels"]["rule"] == "OP-1.1"], "OP-1.1 still active")
            alertmanager.terminate()
            alertmanager.wait(20)
            runs_when_down = _runs(out)
            _until(lambda: _runs(out) >= runs_when_down + 2, "the schedule stopped when Alertmanager went away")
            assert run.poll() is None
    assert "did not take" in (tmp_path / "triage.stderr").read_text()


def test_an_absent_alertmanager_is_one_line_and_exit_2_before_any_run(tmp_path: Path, capsys):
    from advisor.cli.main import main

    argv = ["triage", "--logs", str(NO_FIT), "--every", "1s", "--count", "1", "--out", str(tmp_path / "runs")]
    code = main([*argv, "--alertmanager", f"http://127.0.0.1:{_free_port()}"])
    err = capsys.readouterr().err
    assert code == 2 and "no Alertmanager answers at" in err and "Traceback" not in err
    assert _runs(tmp_path / "runs") == 0
