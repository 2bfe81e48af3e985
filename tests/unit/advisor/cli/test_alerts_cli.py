"""`servops alerts export`: its output forms and its one-line errors."""

from __future__ import annotations

import json

import pytest
import yaml


def test_export_prints_the_rules_file_on_stdout_with_the_slo_given(servops):
    outcome = servops("alerts", "export", "--slo", "ttft_p99=500ms,itl_p99=50ms")
    assert outcome.code == 0
    pack = yaml.safe_load(outcome.out)
    exprs = {rule["alert"]: rule["expr"] for group in pack["groups"] for rule in group["rules"]}
    assert "> 0.5)" in exprs["VllmTimeToFirstTokenHigh"] and "> 0.05)" in exprs["VllmInterTokenLatencyHigh"]


def test_export_as_json_is_the_same_pack(servops):
    as_yaml = yaml.safe_load(servops("alerts", "export").out)
    assert json.loads(servops("alerts", "export", "--json").out) == as_yaml


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--slo", "e2e_p99=3s"], "the pack alerts on ttft_p99, itl_p99"),
        (["--slo", "ttft=3"], "expected METRIC_PCT=VALUE"),
        (["--format", "prometheusrule", "--label", "release"], "give KEY=VALUE"),
        (["-o", "/proc/servops/pack.yml"], "--output"),
    ],
)
def test_bad_export_flags_are_one_line_errors(servops, argv, message):
    servops("alerts", "export", *argv).assert_one_line_error("alerts", message)


def test_alerts_without_an_action_says_which(servops):
    servops("alerts").assert_one_line_error("alerts", "servops alerts export")
