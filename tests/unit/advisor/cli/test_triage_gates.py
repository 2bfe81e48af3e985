"""CI gates: `servops triage --fail-on SEVERITY` exits 1 on a finding at or above it, and `--junit`
writes one test case per rule evaluated, failed when it fired."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[3] / "fixtures"
NO_FIT = str(FIXTURES / "vllm" / "v0_15_max_model_len_no_fit.log")  # OP-1.1 critical
IDLE = ["--metrics", str(FIXTURES / "vllm_cpu" / "idle_before.prom")]
IDLE += ["--metrics", str(FIXTURES / "vllm_cpu" / "idle_after.prom"), "--metrics-interval", "8"]


@pytest.mark.parametrize(("fail_on", "code"), [("critical", 1), ("high", 1), ("info", 1)])
def test_a_finding_at_or_above_the_bar_exits_1_after_printing_it(servops, fail_on, code):
    outcome = servops("triage", "--logs", NO_FIT, "--fail-on", fail_on)
    assert outcome.code == code and "OP-1.1" in outcome.out
    assert f"at or above {fail_on} (--fail-on): exit 1" in outcome.err


def test_an_idle_server_passes_a_medium_gate(servops):
    outcome = servops("triage", *IDLE, "--fail-on", "medium")
    assert outcome.code == 0, outcome.err


def test_without_fail_on_findings_exit_0(servops):
    assert servops("triage", "--logs", NO_FIT).code == 0


def test_junit_has_a_case_per_rule_evaluated_failed_where_it_fired(servops, tmp_path):
    report, result = tmp_path / "triage.xml", tmp_path / "triage.json"
    assert servops("triage", "--logs", NO_FIT, "--junit", str(report), "--json", str(result)).code == 0
    document = json.loads(result.read_text())
    suite = ET.parse(report).getroot()
    cases = suite.findall("testcase")
    assert len(cases) == len(document["rules_run"]) + len(document["rules_skipped"]) == int(suite.get("tests"))
    failed = {case.get("name").split()[0] for case in cases if case.find("failure") is not None}
    assert failed == {finding["rule"] for finding in document["findings"]} and "OP-1.1" in failed
    assert int(suite.get("failures")) == len(failed)
    skipped = {case.get("name").split()[0] for case in cases if case.find("skipped") is not None}
    assert skipped == set(document["rules_skipped"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fail-on", "severe"], "--fail-on"),
        (["--junit", "/proc/servops/triage.xml"], "--junit"),
    ],
)
def test_bad_gate_flags_are_one_line_errors(servops, argv, message):
    outcome = servops("triage", "--logs", NO_FIT, *argv)
    assert outcome.code == 2 and message in outcome.err and "Traceback" not in outcome.err
