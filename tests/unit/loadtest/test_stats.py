"""Per-step statistics from full-precision records: windows, formulas, goodput, validity."""

import pytest

from loadtest.plan import RampPlan
from loadtest.records import RequestRecord
from loadtest.slo import parse_slos
from loadtest.stats import percentile, step_stats, tpot_of

START = 1000.0


def _plan(mode="rate") -> RampPlan:
    return RampPlan(
        endpoint="http://127.0.0.1:1",
        model="m",
        mode=mode,
        levels=[2.0, 4.0],
        step_s=10.0,
        warmup_s=2.0,
        start_ts=START,
    )


def _rec(step, at, ttft=0.1, gaps=(0.01, 0.03), tokens=3, late=0.0, error=""):
    ok = not error
    return RequestRecord(
        step=step,
        index=int(at * 100),
        intended_send_ts=at,
        actual_send_ts=at + late,
        ttft_s=ttft if ok else None,
        gaps_s=list(gaps) if ok else [],
        e2e_s=ttft + sum(gaps) if ok else None,
        output_tokens=tokens if ok else None,
        error_type=error,
        error_message=error and "boom",
    )


def test_percentile_interpolates_between_closest_ranks():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 99) == 5
    assert percentile([], 50) is None
    assert percentile(list(range(101)), 99) == pytest.approx(99.0)


def test_tpot_is_decode_time_over_tokens_after_the_first():
    record = _rec(0, START, ttft=0.2, gaps=(0.1, 0.3), tokens=3)
    assert tpot_of(record) == pytest.approx((0.6 - 0.2) / 2)
    assert tpot_of(_rec(0, START, tokens=1)) is None


def test_requests_sent_during_warmup_are_not_measured():
    records = [_rec(0, START + 1.0, ttft=9.0), _rec(0, START + 3.0, ttft=0.1), _rec(0, START + 9.5, ttft=0.3)]
    stats = step_stats(_plan(), 0, records)
    assert stats.requests == 2
    assert stats.ttft_s.p50 == pytest.approx(0.2)
    assert stats.window_s == 8.0


def test_pooled_and_per_request_itl_differ_as_defined():
    records = [_rec(0, START + 3, gaps=(0.01, 0.01, 0.01, 0.01)), _rec(0, START + 4, gaps=(0.05,), tokens=2)]
    stats = step_stats(_plan(), 0, records)
    assert stats.itl_s.count == 5 and stats.itl_s.p50 == pytest.approx(0.01)
    assert stats.itl_request_mean_s.count == 2 and stats.itl_request_mean_s.p50 == pytest.approx(0.03)


def test_errors_are_counted_by_type_and_excluded_from_latency():
    records = [
        _rec(0, START + 3),
        _rec(0, START + 4, error="http_500"),
        _rec(0, START + 5, error="timeout"),
        _rec(0, START + 6, error="http_500"),
    ]
    stats = step_stats(_plan(), 0, records)
    assert stats.errors == {"http_500": 2, "timeout": 1}
    assert stats.ok_requests == 1 and stats.ttft_s.count == 1
    assert stats.error_examples["http_500"] == "boom"


def test_achieved_rate_and_token_throughput_use_the_window():
    records = [_rec(0, START + 2 + i * 0.5, tokens=10) for i in range(16)]
    stats = step_stats(_plan(), 0, records)
    assert stats.achieved_rate == pytest.approx(2.0)
    assert stats.output_tokens_per_s == pytest.approx(160 / 8.0)


def test_streamed_tokens_count_every_event_received_inside_the_window_whoever_sent_it():
    """Window [1002, 1010). A: sent in the warm-up, 5 events (2 tokens each) at 1001.5 ... 1005.5, 4
    inside. B: 4 events (1 token each) at 1009, 1009.5, 1010, 1010.5, 2 inside. C: failed after 2
    events at 1003.2 and 1003.5 (no usage: one token per event). D: sent in step 1. E: cancelled."""
    a = _rec(0, START + 1.0, ttft=0.5, gaps=(1.0,) * 4, tokens=10)
    b = _rec(0, START + 8.0, ttft=1.0, gaps=(0.5,) * 3, tokens=4)
    c = RequestRecord(
        step=0,
        index=3,
        intended_send_ts=START + 3,
        actual_send_ts=START + 3,
        ttft_s=0.2,
        gaps_s=[0.3],
        content_chunks=2,
        error_type="stream_error",
    )
    d = _rec(1, START + 10.2, ttft=0.1, gaps=(0.1,), tokens=2)
    e = RequestRecord(step=0, index=5, intended_send_ts=START + 9, actual_send_ts=START + 9, error_type="cancelled")
    for record, chunks in ((a, 5), (b, 4), (d, 2)):
        record.content_chunks = chunks
    stats = step_stats(_plan(mode="concurrency"), 0, [a, b, c, d, e])
    assert stats.streamed_tokens_per_s == pytest.approx((4 * 2 + 2 * 1 + 2) / 8.0)
    assert stats.output_tokens_per_s == pytest.approx(4 / 8.0)  # B alone: sent in the window and ok


def test_goodput_counts_only_requests_meeting_every_slo():
    records = [_rec(0, START + 3, ttft=0.1), _rec(0, START + 4, ttft=0.5), _rec(0, START + 5, ttft=0.2)]
    stats = step_stats(_plan(), 0, records, slos=parse_slos("ttft_p99=250ms"))
    assert stats.goodput_rps == pytest.approx(2 / 8.0)
    assert stats.slo_met is False


def test_send_lateness_beyond_bound_invalidates_an_open_loop_step():
    records = [_rec(0, START + 3 + i * 0.1, late=0.2) for i in range(10)]
    stats = step_stats(_plan(), 0, records, max_send_lateness_s=0.025)
    assert not stats.valid and "lateness" in stats.invalid_reason
    closed = step_stats(_plan(mode="concurrency"), 0, records)
    assert closed.valid


def test_busy_client_cpu_or_empty_window_invalidates_a_step():
    records = [_rec(0, START + 3)]
    assert "CPU" in step_stats(_plan(), 0, records, cpu_percents=[40.0, 97.0]).invalid_reason
    assert not step_stats(_plan(), 1, records).valid


def test_prompt_tokens_come_from_server_usage_of_ok_requests_only():
    records = [
        _rec(0, START + 3.0).model_copy(update={"prompt_tokens": 150}),
        _rec(0, START + 4.0).model_copy(update={"prompt_tokens": 170}),
        _rec(0, START + 5.0, error="http_500"),
    ]
    step = step_stats(_plan(), 0, records)
    assert step.prompt_tokens.p50 == pytest.approx(160.0) and step.prompt_tokens.count == 2
    assert step_stats(_plan(), 0, [_rec(0, START + 3.0)]).prompt_tokens is None
