"""Triage's files: the ramp it is given and the live window it keeps, read and written here.

Why in the CLI: `advisor.triage.run` is the decision (facts in, findings out) and reads or writes no
result document; the command and the scheduled runs hand it the ramp they read, and save the window
it calibrated on, with the same one-line errors every other result file gets.
"""

from __future__ import annotations

from advisor.cli.output import write_result
from advisor.cli.result_files import load_ramp
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest, TriageResult


def triage_with_files(request: TriageRequest) -> TriageResult:
    """Triage with the request's files: its ramp read first, its live window saved after."""
    ramp = load_ramp(request.ramp, "--ramp") if request.ramp else None
    result = run_triage(request, ramp=ramp)
    if request.save_window and result.window_ramp is not None:
        write_result(request.save_window, result.window_ramp, "--save-window", indent=1)
    return result
