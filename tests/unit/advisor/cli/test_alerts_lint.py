"""`servops alerts lint`: servops's own pack is clean, the public packs' known mistakes are found, and
each kind of problem is named with its fix on one line (exit 1; 0 when clean; 2 for a bad file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from advisor.oncall.rules_lint import expression_problems, lint_file

PUBLISHED = Path(__file__).parents[3] / "fixtures" / "published" / "alert_packs"
DOCS = Path(__file__).parents[4] / "docs"


def _problems(path: Path) -> set[tuple[str, str]]:
    """(alert, the start of each problem) for a file."""
    return {(p.where.split("/")[-1], p.message.split(":")[0]) for p in lint_file(path).problems}


def test_servops_own_pack_is_clean(servops, tmp_path):
    for form in ("rules", "prometheusrule"):
        pack = tmp_path / f"{form}.yml"
        assert servops("alerts", "export", "--format", form, "--runbook-base", str(DOCS), "-o", str(pack)).code == 0
        outcome = servops("alerts", "lint", str(pack))
        assert outcome.code == 0 and outcome.out == "", outcome.out
        assert "0 problem(s) in 9 vLLM queries of 1 file(s)" in outcome.err


def test_the_public_packs_mistakes_are_found_and_nothing_else(servops):
    """As README.md beside the fixtures says, written from vLLM's exposition before the run."""
    vllm = PUBLISHED / "vllm-k8s-prometheusrule.yaml"
    no_runbook = "no runbook_url annotation"
    vllm_alerts = ["VllmE2ELatencyP99TooHigh", "VllmTTFTP99TooHigh", "VllmITLP99TooHigh", "VllmSlowRequestsPresent"]
    vllm_alerts += ["VllmKVCacheNearFull", "VllmHighQueueDepth", "VllmPreemptionSpike"]
    assert _problems(vllm) == {
        *((name, no_runbook) for name in vllm_alerts),
        ("VllmPreemptionSpike", "vllm"),  # "vllm:num_preemptions does not exist…"
        ("VllmTTFTP99TooHigh", "threshold 30 s falls between vllm"),
    }
    llm_d = PUBLISHED / "llm-d-prometheus-alerting-rules.excerpt.yaml"
    assert _problems(llm_d) == {
        ("LLMDHighPreemptions", "vllm"),
        ("LLMDExtremeTTFT", "threshold 30 s falls between vllm"),
        ("LLMDTTFTSLO", "threshold 3 s falls between vllm"),
    }
    outcome = servops("alerts", "lint", str(vllm), str(llm_d))
    assert outcome.code == 1 and len(outcome.out.splitlines()) == 12
    assert "vllm:num_preemptions does not exist" in outcome.out and "query vllm:num_preemptions_total" in outcome.out


@pytest.mark.parametrize(
    ("expr", "version", "problem"),
    [
        ("rate(vllm:num_requests_waiting[5m]) > 1", None, "is a gauge, not a counter"),
        ("histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_sum[5m])))", None, "_bucket"),
        ("vllm:time_to_first_token_seconds > 1", None, "is a histogram: its series are"),
        ("vllm:gpu_cache_usage_perc > 0.9", None, "is gone from vLLM after 0.11"),
        ("vllm:gpu_cache_usage_perc > 0.9", (0, 33, 0), "is not exposed by vLLM 0.33"),
        ("vllm:kv_cache_usage_perc > 0.9", (0, 8, 5), "is not exposed by vLLM 0.8.5"),
        ("vllm:num_requests_swapped > 0", None, "it has no successor in V1"),
        ("vllm:made_up_total > 0", None, "is not a series any vLLM 0.8–0.34 exposes"),
    ],
)
def test_each_kind_of_expression_problem_is_named(expr, version, problem):
    problems = expression_problems(expr, version)
    assert len(problems) == 1 and problem in problems[0], problems


@pytest.mark.parametrize(
    "expr",
    [
        "(vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc) > 0.9",  # old and new servers both
        "histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2.5",
        "delta(vllm:num_requests_waiting[5m]) > 3",  # delta is for gauges
        "sum(rate(vllm:num_preemptions_total[5m])) > 0",
    ],
)
def test_correct_expressions_pass(expr):
    assert expression_problems(expr) == []


def test_alert_rules_need_a_for_and_a_runbook_that_is_there(tmp_path):
    (tmp_path / "runbooks.md").write_text("# Runbooks\n\n## KV cache full\n")
    rules = {
        "groups": [
            {
                "name": "g",
                "rules": [
                    {"alert": "NoFor", "expr": "vllm:num_requests_waiting > 5"},
                    {"alert": "Dead", "expr": "vllm:num_requests_waiting > 5", "for": "5m"},
                    {"alert": "Fine", "expr": "vllm:kv_cache_usage_perc > 0.9", "for": "5m"},
                    {"record": "job:waiting", "expr": "sum(vllm:num_requests_waiting)"},
                ],
            }
        ]
    }
    rules["groups"][0]["rules"][0]["annotations"] = {"runbook_url": "runbooks.md#kv-cache-full"}
    rules["groups"][0]["rules"][1]["annotations"] = {"runbook_url": "runbooks.md#queue-long"}
    rules["groups"][0]["rules"][2]["annotations"] = {"runbook_url": "runbooks.md#kv-cache-full"}
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump(rules))
    checked = lint_file(path)
    assert checked.queries == 4
    assert {(p.where, p.message.split(":")[0]) for p in checked.problems} == {
        ("g/NoFor", "no `for"),
        ("g/Dead", "runbook_url runbooks.md#queue-long"),
    }


def test_a_grafana_dashboard_is_read_panel_by_panel(tmp_path):
    dashboard = {
        "panels": [
            {"title": "Queue", "targets": [{"expr": "rate(vllm:num_requests_waiting[1m])"}]},
            {"title": "Row", "panels": [{"title": "Preempt", "targets": [{"expr": "rate(vllm:num_preemptions[1m])"}]}]},
        ]
    }
    path = tmp_path / "dashboard.json"
    path.write_text(json.dumps({"dashboard": dashboard}))
    wheres = {p.where for p in lint_file(path).problems}
    assert wheres == {"panel 'Queue'", "panel 'Preempt'"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.yml", "groups: [\n", "not valid YAML"),
        ("bad.json", "{", "not valid JSON"),
        ("other.yml", "scrape_configs: []\n", "not a Prometheus rules file"),
        ("binary.yml", b"\xff\xfe\x00", "cannot read it"),
    ],
)
def test_a_file_it_cannot_read_is_one_line_and_exit_2(servops, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    servops("alerts", "lint", str(path)).assert_one_line_error("alerts", str(path), message)
