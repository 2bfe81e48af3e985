"""Scheduled triage: bounded runs, a history on disk, and what changed since the last run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.cli.schedule import HISTORY_FILE, LATEST_FILE, HistoryEntry, last_entry, parse_duration, run_schedule
from advisor.errors import UserError
from advisor.triage.result import TriageRequest
from advisor.triage.run_diff import FindingState, diff_runs

CORPUS = Path(__file__).parents[3] / "fixtures" / "vllm"
COLLECT = Path(__file__).parents[3] / "fixtures" / "collect"


@pytest.mark.parametrize(("text", "seconds"), [("5m", 300), ("30s", 30), ("1h30m", 5400), ("90", 90), ("0.5s", 0.5)])
def test_durations_parse(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5 minutes", "0s", "-5m"])
def test_bad_durations_are_one_line_user_errors(text):
    with pytest.raises(UserError, match="--every"):
        parse_duration(text)


def state(rule: str, severity: str) -> FindingState:
    return FindingState(key=rule, rule=rule, severity=severity, title=f"{rule} title")


def test_diff_names_new_resolved_and_regraded_findings():
    previous = HistoryEntry(created_at="t0", findings=[state("OP-5.3", "medium"), state("OP-4.1", "low")])
    diff = diff_runs(previous, [state("OP-5.3", "high"), state("OP-5.2", "medium")])
    assert [f.rule for f in diff.new] == ["OP-5.2"]
    assert [f.rule for f in diff.resolved] == ["OP-4.1"]
    assert diff.severity_changed == [{"rule": "OP-5.3", "before": "medium", "after": "high"}]
    assert "since t0" in diff.summary()
    assert diff_runs(None, []).summary().startswith("first run")


def test_two_runs_write_results_history_and_a_diff(tmp_path):
    request = TriageRequest(metrics_files=[str(COLLECT / "metrics_v0_33_0.txt")])
    seen = []
    entries = run_schedule(
        request, every_s=0.01, out_dir=tmp_path, count=2, report=lambda run, entry, result: seen.append((run, result))
    )
    assert [run for run, _ in seen] == [1, 2]
    assert len(entries) == 2 and all(entry.error is None for entry in entries)
    history = (tmp_path / HISTORY_FILE).read_text().splitlines()
    assert len(history) == 2
    second = seen[1][1]
    assert second.changes_since_last.previous_run_at == entries[0].created_at
    assert second.changes_since_last.unchanged == len(second.findings) > 0
    assert not second.changes_since_last.new and not second.changes_since_last.resolved
    latest = json.loads((tmp_path / LATEST_FILE).read_text())
    assert latest["kind"] == "triage" and latest["changes_since_last"]["previous_run_at"]
    assert (tmp_path / entries[1].result_file).exists()


def test_history_survives_restarts_and_sees_a_fix(tmp_path):
    saturated = TriageRequest(metrics_files=[str(COLLECT / "metrics_v0_33_0.txt")])
    run_schedule(saturated, 0.01, tmp_path, 1, report=lambda *a: None)
    healthy_files = [str(CORPUS / "v0_33_healthy_before.prom"), str(CORPUS / "v0_33_healthy_after.prom")]
    healthy = TriageRequest(metrics_files=healthy_files, metrics_interval_s=10)
    results = []
    run_schedule(healthy, 0.01, tmp_path, 1, report=lambda run, entry, result: results.append(result))
    diff = results[0].changes_since_last
    assert diff.previous_run_at is not None
    assert "OP-5.3" in [f.rule for f in diff.resolved]


def test_a_failing_run_is_recorded_and_the_schedule_continues(tmp_path):
    request = TriageRequest(metrics_files=[str(tmp_path / "missing.txt")])
    entries = run_schedule(request, 0.01, tmp_path / "out", 2, report=lambda *a: None)
    assert [bool(entry.error) for entry in entries] == [True, True]
    assert "missing.txt" in entries[0].error
    assert last_entry(tmp_path / "out").error == entries[1].error
    assert entries[1].diff.previous_error == entries[0].error


def test_torn_history_line_is_skipped(tmp_path):
    (tmp_path / HISTORY_FILE).write_text('{"kind": "triage_history_entry", "created_at": "t0"}\n{"kind": "tri')
    assert last_entry(tmp_path).created_at == "t0"


def test_each_scheduled_run_keeps_its_window_so_its_predictions_rerun(tmp_path):
    """Real vLLM's recorded preempting window: the run's --max-num-seqs predictions (the values the
    model rejects) name the window file written beside its JSON, and that file is a ramp `servops
    predict` reads."""
    recorded = Path(__file__).parents[3] / "fixtures" / "vllm_cpu"
    request = TriageRequest(
        logs=str(recorded / "preempting.log"),
        metrics_files=[str(recorded / "preempting_before.prom"), str(recorded / "preempting_after.prom")],
        metrics_interval_s=8,
    )
    [entry] = run_schedule(request, every_s=0.01, out_dir=tmp_path, count=1, report=lambda *_: None)
    [window] = tmp_path.glob("window-*.json")
    assert window.name == entry.result_file.replace("triage-", "window-")
    assert json.loads(window.read_text())["kind"] == "ramp"
    result = json.loads((tmp_path / entry.result_file).read_text())
    commands = [r["command"] for r in result["rejected_changes"] if r["change"]["flag"] == "--max-num-seqs"]
    assert commands and all(f"--ramp {window}" in c for c in commands)
    assert result["inputs"]["save_window"] == str(window)


def test_a_history_that_is_not_utf8_is_reported_and_the_runs_go_on_beside_it(tmp_path):
    (tmp_path / HISTORY_FILE).write_bytes(b'{"kind": "triage_history_entry", "created_at": "t\xff\xfe"}\n')
    request = TriageRequest(metrics_files=[str(COLLECT / "metrics_v0_33_0.txt")])
    seen = []
    entries = run_schedule(request, every_s=0.01, out_dir=tmp_path, count=2, report=lambda *a: seen.append(a[2]))
    assert all(entry.error is None for entry in entries)
    assert any("is not UTF-8 text: this run's history is history-2.jsonl" in note for note in seen[0].notes)
    assert len((tmp_path / "history-2.jsonl").read_text().splitlines()) == 2
    assert seen[1].changes_since_last.previous_run_at == entries[0].created_at  # the new history is read back
    assert (tmp_path / HISTORY_FILE).read_bytes().endswith(b'\xfe"}\n')  # the old one is left as it was
