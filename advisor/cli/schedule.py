"""Scheduled triage: run every N minutes, keep a history, say what changed since last time.

On-call wants "is it getting worse?" more than a fresh wall of findings. Each run writes
its full `TriageResult` to `DIR/triage-<time>.json` (what `servops report` renders), the
same document to `DIR/latest.json`, the live window it calibrated on (when one could stand
for a load step) to `DIR/window-<time>.json`, so the `servops predict` commands it printed still
run after the server has moved on, and one line to `DIR/history.jsonl`; the comparison
with the previous line — new findings, resolved findings, severity changes — goes into the
result's `changes_since_last` and the terminal. The history survives restarts, so a
cron-driven `--count 1` compares with the run before it just the same.

A run that fails (the endpoint went down) is recorded as such and the schedule continues:
an unreachable server is exactly what a scheduled triage must report, not die on.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from advisor.cli.output import result_json, write_result
from advisor.cli.triage_io import triage_with_files
from advisor.errors import UserError, is_user_facing
from advisor.triage.result import TriageRequest, TriageResult
from advisor.triage.run_diff import FindingState, RunDiff, diff_runs, finding_states

HISTORY_FILE = "history.jsonl"
LATEST_FILE = "latest.json"
WINDOW_PREFIX = "window-"  # DIR/window-<time>.json: the live window a run calibrated on, as a ramp
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?")
_UNIT_S = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class HistoryEntry(BaseModel):
    kind: str = "triage_history_entry"
    created_at: str
    result_file: str | None = None
    findings: list[FindingState] = Field(default_factory=list)
    error: str | None = None
    diff: RunDiff | None = None


def parse_duration(text: str, flag: str = "--every") -> float:
    """`5m`, `30s`, `1h30m`, `90` (seconds) → seconds; anything else is a one-line error."""
    cleaned = text.strip().lower()
    matches = list(_DURATION.finditer(cleaned))
    if not cleaned or "".join(m.group(0) for m in matches).replace(" ", "") != cleaned.replace(" ", ""):
        raise UserError(f"{flag} {text!r}: not a duration; write it like 30s, 5m or 1h")
    seconds = sum(float(m.group(1)) * _UNIT_S[m.group(2)] for m in matches)
    if seconds <= 0:
        raise UserError(f"{flag} {text!r}: must be longer than zero; write it like 30s, 5m or 1h")
    return seconds


def last_entry(out_dir: Path) -> HistoryEntry | None:
    """The history's last readable entry; None when there is none or the history cannot be read."""
    return _last_in(history_file(out_dir)[0])


def _last_in(history: Path) -> HistoryEntry | None:
    if not history.exists():
        return None
    last = None
    for line in history.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                last = HistoryEntry.model_validate_json(line)
            except ValueError:
                continue  # a torn line from a killed run: skip it, keep the rest
    return last


def history_file(out_dir: Path) -> tuple[Path, str | None]:
    """The history this run reads and appends to, and a note when it is not `history.jsonl`.

    Why a second file rather than an error: a history that is not UTF-8 (edited, or another tool's)
    or cannot be written must not end every scheduled run; the runs go on in `history-2.jsonl`
    (then -3, …) beside it, and each result says so."""
    main = out_dir / HISTORY_FILE
    problem = _history_problem(main)
    if problem is None:
        return main, None
    for number in range(2, 1000):
        spare = out_dir / f"history-{number}.jsonl"
        if _history_problem(spare) is None:
            return spare, f"{main} {problem}: this run's history is {spare.name}"
    return main, f"{main} {problem}, and so are history-2 … history-999.jsonl"


def _history_problem(path: Path) -> str | None:
    """Why a history file cannot be used (not UTF-8, not writable), or None."""
    if not path.exists():
        return None if os.access(path.parent, os.W_OK) else "cannot be created (folder not writable)"
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return None if os.access(path, os.W_OK) else "is not writable"


def run_once(request: TriageRequest, out_dir: Path) -> tuple[HistoryEntry, TriageResult | None]:
    """One scheduled iteration: triage, compare with the previous entry, write the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    history, history_note = history_file(out_dir)  # checked once a run: it reads the whole file
    previous = _last_in(history)
    now = datetime.now(timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"
    if request.ramp is None:  # each run's window, kept so the predictions it made can be run again
        request = request.model_copy(update={"save_window": str(out_dir / f"{WINDOW_PREFIX}{stamp}.json")})
    try:
        result = triage_with_files(request)
    except Exception as exc:
        entry = HistoryEntry(created_at=now.isoformat(timespec="seconds"), error=str(exc).splitlines()[0][:300])
        entry.diff = diff_runs(previous, [])
        _append(history, entry)
        if not is_user_facing(exc):
            raise
        return entry, None
    if history_note:
        result.notes.append(history_note)
    states = finding_states(result.findings)
    result.changes_since_last = diff_runs(previous, states)
    result_file = out_dir / f"triage-{stamp}.json"
    write_result(result_file, result, "--out")
    write_result(out_dir / LATEST_FILE, result, "--out")
    entry = HistoryEntry(
        created_at=result.created_at, result_file=result_file.name, findings=states, diff=result.changes_since_last
    )
    _append(history, entry)
    return entry, result


def run_schedule(
    request: TriageRequest,
    every_s: float,
    out_dir: Path,
    count: int | None,
    report: Callable[[int, HistoryEntry, TriageResult | None], None],
    sleep: Callable[[float], None] = time.sleep,
) -> list[HistoryEntry]:
    """Run `count` times (forever when None, until interrupted), `every_s` apart start to start."""
    entries: list[HistoryEntry] = []
    run = 0
    while count is None or run < count:
        run += 1
        started = time.monotonic()
        entry, result = run_once(request, out_dir)
        entries.append(entry)
        report(run, entry, result)
        if count is not None and run >= count:
            break
        sleep(max(0.0, every_s - (time.monotonic() - started)))
    return entries


def _append(history: Path, entry: HistoryEntry) -> None:
    try:
        with open(history, "a", encoding="utf-8") as handle:
            handle.write(result_json(entry, indent=None))
    except OSError:
        pass  # the run's own result says why (history_file's note); a history must not end the schedule
