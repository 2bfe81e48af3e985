"""The vLLM fixture corpora through the real collectors and `run_triage`: every version's log and
/metrics wording must lead to the top finding and flag change its manifest expects. Two corpora:
tests/fixtures/vllm (hand-written, owned by the rules engineer) and tests/fixtures/vllm_cpu
(recorded from a real vLLM 0.32.0 CPU build). This is the collectors' end of the contract the
rules tests check from hand-built Facts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest
from rules.events import LogEventKind
from rules.facts import Workload
from rules.model import Severity

FIXTURES = Path(__file__).parents[3] / "fixtures"
CORPUS = FIXTURES / "vllm"
MANIFEST = CORPUS / "manifest.yaml"
CORPORA = (CORPUS, FIXTURES / "vllm_cpu")
CASES = [
    (folder, case)
    for folder in CORPORA
    if (folder / "manifest.yaml").exists()
    for case in yaml.safe_load((folder / "manifest.yaml").read_text())["cases"]
]


def request_for(case: dict, folder: Path = CORPUS) -> TriageRequest:
    return TriageRequest(
        logs=str(folder / case["log"]) if case.get("log") else None,
        metrics_files=[str(folder / name) for name in case.get("metrics", [])],
        metrics_interval_s=case.get("interval_s"),
        server_args=case.get("server_args"),
        gpu=case.get("gpu"),
        gpus=case.get("gpus"),
        workload=Workload(**case["workload"]) if case.get("workload") else None,
    )


@pytest.mark.skipif(not CASES, reason="no fixture manifest present")
@pytest.mark.parametrize(("folder", "case"), CASES, ids=[f"{folder.name}:{case['id']}" for folder, case in CASES])
def test_corpus_case_gives_its_expected_top_finding(folder, case):
    result = run_triage(request_for(case, folder))
    expect = case["expect"]
    assert not result.rule_errors, result.rule_errors
    rules_fired = [finding.rule for finding in result.findings]
    if expect.get("top_rule") is None:
        worst = Severity(expect.get("max_severity", "medium"))
        assert all(f.severity.rank >= worst.rank for f in result.findings), [
            (f.rule, f.severity.value) for f in result.findings
        ]
    else:
        assert result.top is not None and result.top.rule == expect["top_rule"], rules_fired
        if expect.get("flag"):
            proposed = {change.flag: change.proposed for change in result.top.changes}
            wanted = expect.get("triage_proposed", expect["proposed"])
            if wanted is None:  # the model predicts no value to help: the rule's is listed as rejected
                assert expect["flag"] not in proposed, proposed
                rejected = {(r.rule, r.change.flag, r.change.proposed) for r in result.rejected_changes}
                assert (expect["top_rule"], expect["flag"], expect["proposed"]) in rejected, rejected
            else:
                assert proposed.get(expect["flag"]) == str(wanted), proposed
    for code in expect.get("also", []):
        assert code in rules_fired, rules_fired


MAX_LEN_LOGS = ["v0_8_5_max_model_len_no_fit.log", "v0_15_max_model_len_no_fit.log", "v0_22_max_model_len_no_fit.log"]


@pytest.mark.skipif(not MANIFEST.exists(), reason="corpus not present")
@pytest.mark.parametrize("name", MAX_LEN_LOGS)
def test_each_versions_max_len_error_fills_the_same_event_fields(name):
    result = run_triage(TriageRequest(logs=str(CORPUS / name)))
    (event,) = result.facts.events_of(LogEventKind.MAX_MODEL_LEN_TOO_LARGE)
    for field in ("max_model_len", "kv_needed_gib", "available_kv_gib", "estimated_max_model_len"):
        assert getattr(event, field) is not None, field
    assert result.facts.config.max_model_len == event.max_model_len
    assert result.facts.memory.max_model_len_that_fits == event.estimated_max_model_len


@pytest.mark.skipif(not MANIFEST.exists(), reason="corpus not present")
def test_old_and_new_metric_names_fill_the_same_window_fields():
    old = run_triage(
        TriageRequest(
            metrics_files=[str(CORPUS / "v0_10_2_prefill_before.prom"), str(CORPUS / "v0_10_2_prefill_after.prom")],
            metrics_interval_s=10,
        )
    )
    new = run_triage(
        TriageRequest(
            metrics_files=[str(CORPUS / "v0_33_preempting_before.prom"), str(CORPUS / "v0_33_preempting_after.prom")],
            metrics_interval_s=10,
        )
    )
    for result in (old, new):
        window = result.facts.window.total
        assert window.gauge("vllm:kv_cache_usage_perc") is not None
        assert window.rate("vllm:prefix_cache_queries_total") is not None
        assert window.quantile("vllm:inter_token_latency_seconds", "p99") is not None


COLLECT = Path(__file__).parents[3] / "fixtures" / "collect"


def test_the_same_moment_in_three_versions_spellings_gives_the_same_facts_and_findings():
    results = [
        run_triage(TriageRequest(metrics_files=[str(COLLECT / name)]))
        for name in ("metrics_v0_8_0.txt", "metrics_v0_10_2.txt", "metrics_v0_33_0.txt")
    ]
    first = results[0]
    for other in results[1:]:
        assert other.facts.config.model_dump(exclude={"sources"}) == first.facts.config.model_dump(exclude={"sources"})
        assert other.facts.memory == first.facts.memory
        assert [(f.rule, f.severity, f.title) for f in other.findings] == [
            (f.rule, f.severity, f.title) for f in first.findings
        ]
        for name in ("vllm:kv_cache_usage_perc", "vllm:num_preemptions_total", "vllm:prefix_cache_hits_total"):
            assert other.facts.snapshot.value(name) == first.facts.snapshot.value(name)
