"""Keep-or-roll-back decisions and before/after figures, on recorded-shape ramp documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from advisor.perf.comparison import common_top_load, compare_ramps, p99_at, safe_point
from advisor.tune.loop import TuneCriterion, decide
from advisor.tune.measure import top_change

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "reports"


@pytest.fixture()
def ramp() -> dict:
    return json.loads((FIXTURES / "ramp.json").read_text(encoding="utf-8"))


def _with_safe(ramp: dict, offered: float | None) -> dict:
    out = copy.deepcopy(ramp)
    out["safe_operating_point"] = None if offered is None else {"step": 0, "offered": offered, "reason": "test"}
    return out


def _scale_latency(ramp: dict, metric: str, factor: float) -> dict:
    out = copy.deepcopy(ramp)
    for step in out["steps"]:
        step[metric] = {k: v * factor for k, v in step[metric].items()}
    return out


def test_rising_safe_operating_point_keeps_the_change(ramp):
    before, after, kept, why = decide(TuneCriterion(), _with_safe(ramp, 2), _with_safe(ramp, 4))
    assert (before, after, kept) == (2, 4, True)
    assert why.startswith("kept: safe operating point 2 → 4")


def test_falling_safe_operating_point_rolls_back(ramp):
    _, _, kept, why = decide(TuneCriterion(), _with_safe(ramp, 4), _with_safe(ramp, 2))
    assert not kept and why.startswith("rolled back")


def test_equal_safe_point_is_kept_only_when_top_load_ttft_falls_by_the_margin(ramp):
    same = _with_safe(ramp, 2)
    faster = _scale_latency(same, "ttft_s", 0.5)
    slightly = _scale_latency(same, "ttft_s", 0.95)
    assert decide(TuneCriterion(min_improvement=0.1), same, faster)[2] is True
    assert decide(TuneCriterion(min_improvement=0.1), same, slightly)[2] is False


def test_itl_criterion_compares_p99_itl_at_the_target_load(ramp):
    criterion = TuneCriterion(metric="itl_p99", target_load=2.0, min_improvement=0.1)
    before, after, kept, _ = decide(criterion, ramp, _scale_latency(ramp, "itl_s", 0.8))
    assert kept and after == pytest.approx(before * 0.8)
    assert decide(criterion, ramp, _scale_latency(ramp, "itl_s", 1.2))[2] is False


def test_itl_criterion_without_target_uses_top_load_both_ramps_measured_validly(ramp):
    assert common_top_load(ramp, ramp) == 4.0  # the 8 req/s step is invalid in the fixture
    criterion = TuneCriterion(metric="itl_p99")
    before, _, _, _ = decide(criterion, ramp, ramp)
    assert before == p99_at(ramp, "itl_s", 4.0)


def test_comparison_reports_ratio_after_over_before(ramp):
    rows = {r.name: r for r in compare_ramps(_with_safe(ramp, 2), _with_safe(_scale_latency(ramp, "ttft_s", 0.5), 4))}
    assert rows["safe operating point (offered load)"].ratio == 2.0
    assert rows["TTFT p99 (s) at offered 4"].ratio == pytest.approx(0.5)
    assert rows["TTFT p99 (s) at offered 4"].better == "lower"


def test_safe_point_is_none_when_the_ramp_found_none(ramp):
    assert safe_point(_with_safe(ramp, None)) is None


def test_top_change_takes_the_highest_ranked_finding_with_changes_and_skips_tried_ones():
    triage = {
        "findings": [
            {"rule": "OP-5.5", "title": "no change here", "changes": []},
            {
                "rule": "OP-5.2",
                "title": "queue",
                "changes": [{"flag": "--max-num-seqs", "current": "1", "proposed": "2"}],
            },
            {"rule": "AP-3", "title": "prefix", "changes": [{"flag": "--enable-prefix-caching", "proposed": "true"}]},
        ]
    }
    assert top_change(triage)["rule"] == "OP-5.2"
    assert top_change(triage, skip={("--max-num-seqs", "2")})["rule"] == "AP-3"
    assert top_change(None) is None


def test_top_change_leaves_unsafe_changes_to_an_explicit_opt_in():
    triage = {
        "findings": [
            {
                "rule": "AP-2",
                "title": "max-model-len",
                "changes": [{"flag": "--max-model-len", "current": "8192", "proposed": "128", "safety": "unsafe"}],
            },
            {
                "rule": "OP-5.2",
                "title": "queue",
                "changes": [{"flag": "--max-num-seqs", "current": "1", "proposed": "2"}],
            },
        ]
    }
    assert top_change(triage)["rule"] == "OP-5.2"
    assert top_change(triage, allow_unsafe=True)["rule"] == "AP-2"
    assert top_change({"findings": triage["findings"][:1]}) is None
