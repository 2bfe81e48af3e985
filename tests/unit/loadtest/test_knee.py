"""Knee detection on p99 ITL/TTFT over offered load, and the safe operating point."""

from loadtest.knee import find_knee, safe_operating_point
from loadtest.results import ClientHealth, Percentiles, StepResult


def _step(i, offered, ttft_p99, itl_p99, valid=True, slo_met=None):
    p = lambda v: Percentiles(p50=v, p90=v, p95=v, p99=v, count=10)  # noqa: E731
    return StepResult(
        step=i,
        offered=offered,
        offered_unit="rps",
        window_s=10,
        window_start_ts=0,
        window_end_ts=10,
        achieved_rate=offered,
        requests=10,
        ok_requests=10,
        errors={},
        ttft_s=p(ttft_p99),
        itl_s=p(itl_p99),
        itl_request_mean_s=p(itl_p99),
        tpot_s=p(itl_p99),
        e2e_s=p(1.0),
        output_tokens=100,
        output_tokens_per_s=10,
        goodput_rps=offered,
        slo_met=slo_met,
        valid=valid,
        invalid_reason=None if valid else "client",
        client=ClientHealth(),
    )


def test_queueing_in_ttft_marks_the_knee_where_it_starts():
    steps = [_step(0, 1, 0.10, 0.010), _step(1, 2, 0.11, 0.010), _step(2, 4, 0.40, 0.011), _step(3, 8, 2.0, 0.010)]
    knee = find_knee(steps)
    assert (knee.step, knee.metric) == (2, "ttft_p99")
    assert "TTFT" in knee.reason and "baseline" in knee.reason


def test_itl_growth_is_a_knee_too():
    steps = [_step(0, 1, 0.1, 0.010), _step(1, 2, 0.1, 0.012), _step(2, 4, 0.1, 0.030), _step(3, 8, 0.1, 0.060)]
    assert find_knee(steps).metric == "itl_p99" and find_knee(steps).offered == 4


def test_a_single_spike_that_recovers_is_not_a_knee():
    steps = [_step(0, 1, 0.1, 0.01), _step(1, 2, 0.9, 0.01), _step(2, 4, 0.1, 0.01), _step(3, 8, 0.1, 0.01)]
    assert find_knee(steps) is None


def test_invalid_steps_are_ignored():
    steps = [_step(0, 1, 0.1, 0.01), _step(1, 2, 5.0, 0.01, valid=False), _step(2, 4, 0.1, 0.01)]
    assert find_knee(steps) is None


def test_small_absolute_growth_stays_under_the_floor():
    steps = [_step(0, 1, 0.010, 0.001), _step(1, 2, 0.030, 0.003), _step(2, 4, 0.040, 0.004)]
    assert find_knee(steps) is None


def test_safe_point_is_highest_step_meeting_slos_or_below_the_knee():
    steps = [
        _step(0, 1, 0.1, 0.01, slo_met=True),
        _step(1, 2, 0.1, 0.01, slo_met=True),
        _step(2, 4, 0.5, 0.01, slo_met=False),
        _step(3, 8, 2.0, 0.01, slo_met=False),
    ]
    assert safe_operating_point(steps, None, have_slos=True).offered == 2
    knee = find_knee(steps)
    assert safe_operating_point(steps, knee, have_slos=False).offered == 2
    assert safe_operating_point([_step(0, 1, 1, 1, slo_met=False)], None, have_slos=True) is None


def test_when_both_metrics_turn_together_the_larger_overshoot_names_the_knee():
    steps = [_step(0, 1, 0.10, 0.040), _step(1, 4, 0.11, 0.041), _step(2, 8, 0.60, 0.090)]
    knee = find_knee(steps)
    assert (knee.offered, knee.metric) == (8, "ttft_p99")
    assert knee.value_s == 0.60 and knee.baseline_s == 0.10 and knee.threshold_s == 0.20
