"""OP-7.167: pyairports, which outlines 0.0.43 to 0.0.46 (and so vLLM 0.5.0 to 0.6.4.post1) need, left PyPI: read
in pip's, uv's and Python's words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import PIP_CONFLICT, LogEventKind
from tests.unit.rules.factories import top_finding

# vllm#23983, verbatim: `pip install vllm==0.6.3` in August 2025, its resolver's summary and one of its causes
CANNOT_INSTALL = "ERROR: Cannot install vllm because these package versions have conflicting dependencies."
CAUSE = "    outlines 0.0.46 depends on pyairports"
# zeroQiaoba/AffectGPT#21, verbatim: uv on vLLM 0.6.1's requirements (the reporter moved to vLLM 0.8.5.post1)
UV_NOT_FOUND = (
    "  ╰─▶ Because pyairports was not found in the package registry and you require pyairports, we can conclude "
    "that your requirements are unsatisfiable"
)
# Simplified-Reasoning/LUFFY#32, verbatim: vllm 0.5.4's outlines pin
PIP_NOT_FOUND = "ERROR: No matching distribution found for pyairports"


def test_uv_and_pips_conflict_lines_are_read_as_the_installer_finding_nothing():
    events = parse_lines([CANNOT_INSTALL, CAUSE, UV_NOT_FOUND]).events
    assert [e.kind for e in events] == [LogEventKind.PIP_NO_DISTRIBUTION] * 3
    assert [e.component for e in events] == ["vllm", "pyairports", "pyairports"]
    assert events[0].versions_offered == PIP_CONFLICT
    assert events[1].versions_offered == f"{PIP_CONFLICT}outlines 0.0.46"


def test_each_installer_wording_names_the_release_that_no_longer_needs_it():
    for lines in ([CANNOT_INSTALL, CAUSE], [UV_NOT_FOUND], [PIP_NOT_FOUND]):
        top = top_finding(*lines)
        assert top.rule == "OP-7.167", lines
        assert "no longer installable from PyPI" in top.title and "vLLM 0.5.0 to 0.6.4.post1" in top.title
        assert "vLLM 0.6.5 or later" in top.actions[0] and "airportsdata" in top.actions[0]
        assert "git+https://github.com/ozeliger/pyairports" in top.actions[1]
        assert "pip uninstall pyairports" in top.actions[2]


def test_the_module_missing_at_run_time_is_the_same_cause():
    top = top_finding("ModuleNotFoundError: No module named 'pyairports'")
    assert top.rule == "OP-7.167" and "installs no such module" in top.title
