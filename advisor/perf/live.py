"""A live metrics window as a one-step ramp, so the performance model can calibrate on the server as it runs.

Why: without a ramp, triage's flag values came from the rules' rules of thumb (double the batch
cap) or, offline, from the roofline prior at ±50 %. A window of the server's own /metrics is a
measurement of this server, on this hardware, under its real workload: the requests it held
(running + waiting) are the load, its TTFT/ITL/TPOT/e2e histograms the latencies, its generation
counter the throughput, its request-length histograms the workload and its prefill/decode phase
histograms the split of each request's time. That is one load step of a ramp, measured by the
server instead of a client. Calibrated on it, the model replays a ramp of 1…2N streams around it
with each proposed change applied, as it does with a ramp.

What one step cannot show: how the step time grows with the batch (one batch size was running),
so the calibration holds the per-sequence share (advisor/perf/calibrate.py, held_decode_seq_s),
and predictions away from the measured load carry the extrapolation's uncertainty. The load is
closed-loop at the in-flight count (Little's law: what a server holds is what its clients keep
outstanding); request lengths are uniform around the window's means, as wide as their p95s.
"""

from __future__ import annotations

from advisor.perf.whatif import synthetic_ramp
from loadtest.server_signals import PHASES, TOKEN_COUNTERS
from rules import signals
from rules.catalog.common import ITL, PROMPT_TOKENS, TTFT
from rules.catalog.floors import GENERATION_TOKENS as OUTPUT_TOKENS
from rules.facts import Facts

TPOT = "vllm:request_time_per_output_token_seconds"
E2E = "vllm:e2e_request_latency_seconds"
MIN_FINISHED = 3  # requests finished in the window: fewer, and its medians are one request's figures
# The replayed step: long enough for several request lifetimes, short enough to replay quickly.
STEP_LIFETIMES = 4
MIN_STEP_S, MAX_STEP_S = 20.0, 120.0
# The requests that finished in a steady window carry the output the server generated in it: finished/s x
# output tokens per request = generation tokens/s (Little's law over the window). Beyond this factor either
# way the window holds a transient (a wave of requests that started together, or ended before it).
STEADY_FACTOR = 2.0
# A window this many request lifetimes long averages over the waves of a closed-loop load.
STEADY_LIFETIMES = 3
WINDOW_UNUSABLE = (
    f"the metrics window cannot stand for a load step (it needs {MIN_FINISHED} or more finished requests, "
    "TTFT and ITL histograms and request lengths: two scrapes of a serving vLLM, --metrics-interval apart)"
)


def live_ramp(facts: Facts) -> tuple[dict, str] | None:
    """The window as a ramp document (its measured step among unmeasured levels 1…2N) and a line
    saying what was taken from it; None when the window cannot stand for a load step (no window,
    fewer than MIN_FINISHED finished requests, no TTFT/ITL histograms or request lengths)."""
    if facts.window is None:
        return None
    finished = _observed(facts, E2E) or _observed(facts, TTFT)
    ttft, itl = _percentiles(facts, TTFT), _percentiles(facts, ITL)
    prompt, output = signals.histogram_mean(facts, PROMPT_TOKENS), signals.histogram_mean(facts, OUTPUT_TOKENS)
    running = signals.running(facts)
    if finished < MIN_FINISHED or ttft is None or itl is None or not prompt or not output or running is None:
        return None
    waiting = signals.waiting(facts)
    in_flight = max(1, round(running.value + (waiting.value if waiting is not None else 0.0)))
    e2e_mean = signals.histogram_mean(facts, E2E) or 0.0
    step_s = min(MAX_STEP_S, max(MIN_STEP_S, STEP_LIFETIMES * e2e_mean))
    levels = sorted({float(2**k) for k in range(12) if 2**k < 2 * in_flight} | {float(in_flight), 2.0 * in_flight})
    ramp = synthetic_ramp(levels, round(prompt), round(output), step_s=step_s)
    ramp["config"]["workload"].update(
        input_len=_lengths(facts, PROMPT_TOKENS, prompt), output_len=_lengths(facts, OUTPUT_TOKENS, output)
    )
    step = ramp["steps"][levels.index(float(in_flight))]
    tokens_per_s = signals.counter_rate(facts, TOKEN_COUNTERS["generation"])
    step.update(
        valid=True,
        invalid_reason=None,
        requests=int(finished),
        ok_requests=int(finished),
        achieved_rate=finished / facts.window.interval_s,
        ttft_s=ttft,
        itl_s=itl,
        tpot_s=_percentiles(facts, TPOT) or step["tpot_s"],  # else the shell's "nothing measured"
        e2e_s=_percentiles(facts, E2E) or step["e2e_s"],
        output_tokens=round((tokens_per_s.value if tokens_per_s else 0.0) * facts.window.interval_s),
        output_tokens_per_s=tokens_per_s.value if tokens_per_s else 0.0,
        # The server counted these tokens itself (chat template included): no template to add on top.
        prompt_tokens={"p50": float(round(prompt)), "count": int(finished)},
        server={
            "samples": 2,
            "running_mean": running.value,
            "waiting_mean": waiting.value if waiting is not None else None,
            **{f"{phase}_time_mean_s": signals.histogram_mean(facts, name) for phase, name in PHASES.items()},
        },
    )
    said = (
        f"the live {facts.window.interval_s:.0f} s window: {in_flight} request(s) in flight, {int(finished)} "
        f"finished, {prompt:.0f} prompt and {output:.0f} output tokens per request"
    )
    transient = unsteady(finished, output, tokens_per_s.value if tokens_per_s else 0.0, facts)
    return ramp, f"{said}; {transient}" if transient else said


def unsteady(finished: float, output: float, tokens_per_s: float, facts: Facts) -> str | None:
    """Why the window is not a steady state, or None when it is one (as far as its counters tell).

    Why it matters: the fit takes the window as one load step in equilibrium. When the requests that
    finished in it carry several times the output vLLM generated in it (or a fraction of it), their
    latency histograms describe a wave: closed-loop streams that started together and are all in
    prefill at once, say, with TTFT in seconds while the generation counter crawls. No step cost
    reproduces such a window, and the fit's in-sample error says only that; this says why, and what
    window would do."""
    window_s = facts.window.interval_s if facts.window else 0.0
    if window_s <= 0 or output <= 0:
        return None
    carried = finished / window_s * output
    if tokens_per_s > 0 and 1 / STEADY_FACTOR <= carried / tokens_per_s <= STEADY_FACTOR:
        return None
    lifetime = signals.histogram_mean(facts, E2E)
    longer = (
        f"a --metrics-interval of {STEADY_LIFETIMES * lifetime:.0f} s or more ({STEADY_LIFETIMES} request "
        f"lifetimes of {lifetime:.1f} s)"
        if lifetime
        else "a longer --metrics-interval"
    )
    return (
        f"not a steady state: the {finished:.0f} request(s) that finished in it carry {carried:.0f} output tok/s, "
        f"vLLM generated {tokens_per_s:.0f} tok/s, so its latencies describe the requests that happened to end "
        f"in it, not the server in equilibrium; {longer} or a ramp measures the steady server"
    )


def _lengths(facts: Facts, metric: str, mean: float) -> dict:
    """The window's request lengths as the replay draws them: uniform around the mean, as wide as the
    histogram's p95 says (p95 of a uniform on [m - s, m + s] is m + 0.9 s), at least 1.

    Why not the mean alone: whether a batch cap preempts depends on the long requests, not the
    typical one; a fixed length would let a cap through that the real tail overflows."""
    center = max(1, round(mean))
    p95 = signals.quantile(facts, metric, "p95")
    spread = min(center - 1, max(0.0, ((p95.value if p95 else mean) - mean) / 0.9))
    if spread < 1:
        return {"distribution": "fixed", "mean": center}
    return {"distribution": "uniform", "mean": center, "spread": round(spread, 1)}


def _observed(facts: Facts, metric: str) -> int:
    """Observations of a histogram over the window (finished requests, for the per-request ones)."""
    rate = signals.observation_rate(facts, metric)
    return round(rate.value * facts.window.interval_s) if rate is not None else 0  # a rate implies a window


def _percentiles(facts: Facts, metric: str) -> dict | None:
    """The window's histogram percentiles, or None when it observed nothing."""
    values = {which: signals.quantile(facts, metric, which) for which in ("p50", "p90", "p95", "p99")}
    if values["p50"] is None:
        return None
    return {which: s.value if s is not None else None for which, s in values.items()} | {
        "count": _observed(facts, metric)
    }
