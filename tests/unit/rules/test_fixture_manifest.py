"""The fixture corpus end to end: vLLM text (0.8.0–0.33) → advisor collectors → Facts → rules.

Each case in tests/fixtures/vllm/manifest.yaml names its inputs as `servops triage` takes them
and the expected top finding and flag change; the numbers behind each expectation are in the
fixture's header comment. This runs the collectors' real parsers (advisor.triage.collect).
"""

from pathlib import Path

import pytest
import yaml

from advisor.triage import TriageRequest, collect
from rules.evaluate import evaluate
from rules.facts import Workload
from rules.model import Severity

FIXTURES = Path(__file__).parents[2] / "fixtures" / "vllm"
CASES = yaml.safe_load((FIXTURES / "manifest.yaml").read_text())["cases"]


def _facts(case: dict):
    request = TriageRequest(
        logs=str(FIXTURES / case["log"]) if case.get("log") else None,
        metrics_files=[str(FIXTURES / name) for name in case.get("metrics", [])],
        metrics_interval_s=case.get("interval_s"),
        server_args=case.get("server_args"),
        gpu=case.get("gpu"),
        gpus=case.get("gpus"),
        workload=Workload(**case["workload"]) if case.get("workload") else None,
    )
    return collect(request).facts


def test_every_fixture_file_is_in_the_manifest_and_says_where_its_numbers_come_from():
    named = {case.get("log") for case in CASES} | {m for case in CASES for m in case.get("metrics", [])}
    on_disk = {p.name for p in FIXTURES.iterdir() if p.suffix in (".log", ".prom")}
    assert on_disk == named - {None}
    for name in on_disk:
        assert (FIXTURES / name).read_text().startswith("# fixture:"), name


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_fixture_yields_the_expected_top_finding_and_flag(case):
    expect = case["expect"]
    result = evaluate(_facts(case))
    assert result.errors == []
    if expect.get("top_rule") is None:
        worst = Severity(expect.get("max_severity", "medium"))
        assert all(f.severity.rank >= worst.rank for f in result.findings), [f.title for f in result.findings]
        return
    top = result.top
    assert top is not None and top.rule == expect["top_rule"], [(f.rule, f.title) for f in result.findings]
    if "flag" in expect:
        changes = {c.flag: c.proposed for c in top.changes}
        if expect["flag"] is None:
            assert changes == {}
        else:
            assert changes.get(expect["flag"]) == expect["proposed"], changes
    fired = {f.rule for f in result.findings}
    assert set(expect.get("also", [])) <= fired


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.log")), ids=lambda p: p.name)
def test_header_comments_quote_no_matchable_vllm_text(path):
    from advisor.collect.logs import read_log

    from_comments = [e for e in read_log(str(path)).events if e.raw.lstrip().startswith("#")]
    assert from_comments == [], [(e.kind.value, e.line_no) for e in from_comments]
