"""A live /metrics window as one measured load step (advisor/perf/live.py), on windows recorded from a
real vLLM 0.32 CPU server (tests/fixtures/vllm_cpu), and the split a one-batch-size fit holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.perf.calibrate import UNBATCHED_DECODE_SHARE, held_decode_seq_s
from advisor.perf.cost import StepCost
from advisor.perf.live import live_ramp
from advisor.triage.collect import collect
from advisor.triage.result import TriageRequest
from benchmarks.fitting import fitted
from rules import signals

CORPUS = Path(__file__).parents[3] / "fixtures" / "vllm_cpu"


def _facts(case: str, interval_s: float = 8):
    files = [str(CORPUS / f"{case}_before.prom"), str(CORPUS / f"{case}_after.prom")]
    request = TriageRequest(logs=str(CORPUS / f"{case}.log"), metrics_files=files, metrics_interval_s=interval_s)
    return collect(request).facts


def test_the_window_becomes_the_measured_step_of_a_ramp_around_its_load():
    """Recorded at 4 closed-loop streams: 4 running, none waiting; the step at 4 carries the window's
    own histogram percentiles and generation rate, the levels around it are replayed, not measured."""
    facts = _facts("moderate")
    ramp, said = live_ramp(facts)
    assert ramp["config"]["levels"] == [1.0, 2.0, 4.0, 8.0]
    measured = [s for s in ramp["steps"] if s["valid"]]
    assert [s["offered"] for s in measured] == [4.0]
    [step] = measured
    assert step["ttft_s"]["p50"] == signals.quantile(facts, "vllm:time_to_first_token_seconds", "p50").value
    assert step["itl_s"]["p99"] == signals.quantile(facts, "vllm:inter_token_latency_seconds", "p99").value
    assert step["output_tokens_per_s"] == signals.counter_rate(facts, "vllm:generation_tokens_total").value
    assert step["server"]["decode_time_mean_s"] == signals.histogram_mean(facts, "vllm:request_decode_time_seconds")
    workload = ramp["config"]["workload"]
    assert workload["input_len"]["mean"] == step["prompt_tokens"]["p50"] == 164  # the server's own token count
    assert "4 request(s) in flight" in said


def test_request_lengths_are_as_wide_as_the_windows_p95():
    """p95 of a uniform on [m - s, m + s] is m + 0.9 s; the spread stops at m - 1 (lengths >= 1)."""
    facts = _facts("preempting")
    ramp, _ = live_ramp(facts)
    prompt = ramp["config"]["workload"]["input_len"]
    p95 = signals.quantile(facts, "vllm:request_prompt_tokens", "p95").value
    mean = signals.histogram_mean(facts, "vllm:request_prompt_tokens")
    assert prompt["distribution"] == "uniform"
    assert prompt["spread"] == pytest.approx(min(round(mean) - 1, (p95 - mean) / 0.9), abs=0.05)


def test_an_idle_window_is_no_load_step():
    assert live_ramp(_facts("idle")) is None


def test_a_fit_pinned_at_one_batch_size_holds_the_per_sequence_share_of_the_batch_of_one_step():
    """Measured only at a batch of 8: base + 8c = 0.18 s whatever the split. Held: c = 0.05 x step(1)
    with step(1) = 0.18 / (1 + 0.05 x 7) = 0.13333, so c = 0.0066667 and base = 0.12667."""
    cost = StepCost(base_s=0.10, prefill_token_s=0.0, decode_seq_s=0.01, context_token_s=0.0)
    held = held_decode_seq_s(cost, 8)
    assert held == pytest.approx(0.05 * 0.18 / 1.35)
    base = 0.18 - 8 * held
    assert held / (base + held) == pytest.approx(UNBATCHED_DECODE_SHARE)
    assert held_decode_seq_s(cost, 1) == pytest.approx(UNBATCHED_DECODE_SHARE * 0.11)


def test_a_window_puts_no_time_outside_the_engine_and_predicts_a_lone_request_as_its_ramp_measured():
    """One step cannot split TTFT between the engine and the outside (advisor/perf/calibrate.py,
    OVERHEAD_RIDGE). The chunked window (8 streams, vLLM's TTFT histogram p50 2.9 s, where the ramp
    the window was taken in measured 1.3 s) once put 1.7 s of every request outside the engine and
    predicted a lone request's first token at 2.4 s; the same server's ramp measured 0.79 s. With the
    overhead held at 0 the miss stays in the fit's stated error, and the lone request is predicted
    within that error of what the ramp measured."""
    from advisor.cli.result_files import load_result
    from advisor.collect.server_args import parse_command

    facts = _facts("chunked", interval_s=10)  # recording.json: the chunked window's length
    window, _ = live_ramp(facts)
    command = parse_command("vllm serve smol --dtype float32 --max-num-batched-tokens 64 --enforce-eager")
    forecaster = fitted(window, "the live window", command, engine="vllm-cpu")
    assert forecaster.cost.overhead_s == 0.0
    error = forecaster.cost.relative_error
    assert error > 0.25  # the window's TTFT is not the engine's alone: the fit says so, the rules stand
    lone = next(s for s in forecaster.baseline.steps if s.offered == 1.0)
    measured = next(s for s in load_result(CORPUS / "chunked_ramp.json")["steps"] if s["offered"] == 1.0)
    assert lone.ttft_s.p50 == pytest.approx(measured["ttft_s"]["p50"], rel=error)


@pytest.mark.parametrize(
    ("case", "interval_s", "steady"),
    [
        ("moderate", 8, True),
        ("client_overload", 8, True),
        ("preempting", 8, True),
        ("saturated", 8, False),
        ("preempting_float32", 8.035, False),
        ("chunked", 10, False),
        ("saturated_steady", 30, True),
    ],
)
def test_a_window_whose_finished_requests_do_not_carry_its_output_is_named_a_transient(
    case: str, interval_s: float, steady: bool
):
    """Little's law over the window: finished/s x output tokens per request = generation tokens/s in a steady
    window. 32 closed-loop streams on the 2-core box (saturated): the 32 requests that finished in the 8 s
    carry 32 / 8 x 64 = 256 tok/s while vLLM generated 74, and TTFT p50 is 4.7 s: a wave in prefill, which
    no step cost reproduces (its fit's in-sample error is 160 %). The note says so and what window would
    do: 3 request lifetimes."""
    facts = _facts(case, interval_s)
    _, said = live_ramp(facts)
    assert ("not a steady state" not in said) == steady, said
    if case == "saturated":
        assert "the 32 request(s) that finished in it carry 256 output tok/s, vLLM generated 74 tok/s" in said
        lifetime = signals.histogram_mean(facts, "vllm:e2e_request_latency_seconds")
        assert f"--metrics-interval of {3 * lifetime:.0f} s or more" in said


def test_the_same_saturated_server_over_a_steady_30_s_window_is_reproduced_by_the_fit():
    """The advice, taken: the same 32 streams on the same vLLM, the window opened after 32 completions and
    held 30 s (saturated_steady, recorded 2026-11-28). Its finished requests carry what vLLM generated,
    and the one-step fit reproduces it within the 25 % triage trusts, where the 8 s wave missed by 160 %."""
    from advisor.triage.forecast import TRUSTED_RELATIVE_ERROR

    errors = {}
    for case, interval_s in (("saturated", 8), ("saturated_steady", 30)):
        window, _ = live_ramp(_facts(case, interval_s))
        forecaster = fitted(window, "the live window", "vllm serve smol", engine="vllm-cpu")
        errors[case] = forecaster.cost.relative_error
    assert errors["saturated_steady"] <= TRUSTED_RELATIVE_ERROR < 1.0 < errors["saturated"], errors
