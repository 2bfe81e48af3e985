"""Per-step statistics from full-precision request records (never from Locust's rounded stats).

Which requests belong to a step: those the step's schedule issued with an *intended* send
time inside its measured window [step start + warm-up, step end). Requests that finish after
the step ended still count for the step that sent them. The formulas are declared once, in
METRIC_DEFINITIONS, and copied into every result document.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from loadtest.config import ramp_default
from loadtest.errors import LoadTestError
from loadtest.plan import RampPlan
from loadtest.records import RequestRecord
from loadtest.results import ClientHealth, Percentiles, StepResult
from loadtest.slo import SLO

METRIC_DEFINITIONS: dict[str, str] = {
    "percentiles": "linear interpolation between closest ranks: value at rank p/100*(n-1) of the sorted sample",
    "measured_requests": "requests whose intended send time lies in [step start + warmup_s, step end)",
    "offered": "rate ramp: scheduled requests/s; concurrency ramp: concurrent closed-loop streams",
    "achieved_rate": "requests actually sent (socket write) inside the measured window / window length",
    "ttft_s": "actual send -> receipt of the first SSE event carrying output text (successful requests)",
    "itl_s": "pooled: every gap between consecutive content-carrying SSE events of successful requests",
    "itl_request_mean_s": "per request: mean of its gaps; percentiles over requests with at least one gap",
    "tpot_s": "(e2e_s - ttft_s) / (output_tokens - 1), per successful request with output_tokens > 1",
    "e2e_s": "actual send -> receipt of data: [DONE]",
    "output_tokens": "server usage.completion_tokens (stream_options include_usage/continuous_usage_stats); "
    "else a tokenizer's count of the streamed text when --tokenizer is given; else content events",
    "prompt_tokens": "server usage.prompt_tokens per successful request (the prompt after the chat template)",
    "output_tokens_per_s": "sum of output tokens of successful measured requests / window length",
    "streamed_tokens_per_s": "output tokens received inside the measured window, from any request that streamed "
    "content (sent in this step or before, finished or not) / window length; a content event's receipt time is "
    "send + ttft + the gaps before it, and each event carries its request's output tokens / content events",
    "goodput_rps": "successful measured requests whose own ttft, mean itl, tpot and e2e are within every "
    "--slo bound / window length (without SLOs: successful requests / window length)",
    "errors": "count of measured requests by error type (http_<status>, connect_refused, timeout, "
    "not_streaming, malformed_sse, stream_error, incomplete_stream, empty_response, cancelled)",
    "send_lateness_s": "actual send time - intended send time (open loop); p99 above the bound invalidates the step",
    "valid": "false when the measured window has no requests, the load generator's CPU exceeded its bound, "
    "or send lateness p99 exceeded its bound; invalid steps are ignored by knee detection",
    "server": "/metrics sampled during the step: KV usage (vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc) "
    "mean/max, running and waiting mean/max, preemptions/s = delta of vllm:num_preemptions_total / time; "
    "engine steps/s and tokens per step from vllm:iteration_tokens_total, mean queue/prefill/decode time "
    "of requests that finished (vllm:request_*_time_seconds), prompt and generation tokens/s",
    "knee": "first valid step (by offered load) from which p99 ITL or p99 TTFT stays above "
    "max(factor x baseline, baseline + floor); baseline = the lowest-load valid step; see docs/loadtest.md",
    "safe_operating_point": "highest valid step meeting every SLO with error rate <= max_error_rate; "
    "without SLOs, the highest valid step below the knee",
}


def percentile(values: Sequence[float], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = pct / 100.0 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def percentiles(values: Sequence[float], shift_points: float = 0.0) -> Percentiles:
    """p50/p90/p95/p99; `shift_points` reads each one that many ranks away (p99 at +0.5 is p99.5).

    Why the shift: a *predicted* distribution's tail share is itself uncertain, and a p99 that
    sits on the edge between two kinds of gap (a plain decode step, a step that carries a
    prefill) jumps between them for a tenth of a percent of share. Reading the neighbours tells
    whether a p99 is a figure or a coin toss (advisor/perf/forecast.py)."""
    return Percentiles(
        **{f"p{q}": percentile(values, min(100.0, max(0.0, q + shift_points))) for q in (50, 90, 95, 99)},
        count=len(values),
    )


def tpot_of(record: RequestRecord) -> float | None:
    if record.e2e_s is None or record.ttft_s is None or record.tokens <= 1:
        return None
    return (record.e2e_s - record.ttft_s) / (record.tokens - 1)


def request_meets(record: RequestRecord, slos: Sequence[SLO]) -> bool:
    """Per-request SLO conformance used for goodput (see slo.py)."""
    if not record.ok:
        return False
    values = {
        "ttft": record.ttft_s,
        "e2e": record.e2e_s,
        "tpot": tpot_of(record),
        "itl": sum(record.gaps_s) / len(record.gaps_s) if record.gaps_s else 0.0,
    }
    for slo in slos:
        value = values[slo.metric]
        if value is not None and value > slo.bound_s:
            return False
    return True


def step_stats(
    plan: RampPlan,
    step: int,
    records: Sequence[RequestRecord],
    slos: Sequence[SLO] = (),
    cpu_percents: Sequence[float] = (),
    max_client_cpu_percent: float = ramp_default("max_client_cpu_percent"),
    max_send_lateness_s: float = ramp_default("max_send_lateness_s"),
    max_error_rate: float = 0.01,
    quantile_shift: float = 0.0,
    until_ts: float | None = None,
) -> StepResult:
    """Statistics of one step from all records of the run; `quantile_shift`: see `percentiles`;
    `until_ts`: the moment an interrupted ramp stopped, which ends this step's window early."""
    win_start, win_end = _window(plan, step, until_ts)
    window_s = win_end - win_start
    measured = [r for r in records if r.step == step and win_start <= r.intended_send_ts < win_end]
    sent_in_window = sum(1 for r in records if win_start <= r.actual_send_ts < win_end)
    ok = [r for r in measured if r.ok]
    failed = [r for r in measured if not r.ok]
    tokens = sum(r.tokens for r in ok)
    client = _client_health(plan, measured, cpu_percents)
    by_metric = _latencies(ok, quantile_shift)
    slo_met = _slos_met(slos, by_metric, len(ok), len(failed), max_error_rate) if slos else None
    invalid = _invalid_reason(measured, client, max_client_cpu_percent, max_send_lateness_s)
    return StepResult(
        step=step,
        offered=plan.levels[step],
        offered_unit="rps" if plan.mode == "rate" else "concurrency",
        window_s=window_s,
        window_start_ts=win_start,
        window_end_ts=win_end,
        achieved_rate=sent_in_window / window_s,
        requests=len(measured),
        ok_requests=len(ok),
        errors=dict(Counter(r.error_type for r in failed)),
        error_examples=_error_examples(failed),
        ttft_s=by_metric["ttft"],
        itl_s=by_metric["itl"],
        itl_request_mean_s=percentiles([sum(r.gaps_s) / len(r.gaps_s) for r in ok if r.gaps_s]),
        tpot_s=by_metric["tpot"],
        e2e_s=by_metric["e2e"],
        output_tokens=tokens,
        output_tokens_per_s=tokens / window_s,
        streamed_tokens_per_s=streamed_tokens(records, win_start, win_end) / window_s,
        prompt_tokens=_prompt_tokens(ok),
        goodput_rps=sum(1 for r in ok if request_meets(r, slos)) / window_s,
        slo_met=slo_met,
        valid=invalid is None,
        invalid_reason=invalid,
        client=client,
    )


def _window(plan: RampPlan, step: int, until_ts: float | None) -> tuple[float, float]:
    """The step's measured window; a ramp interrupted at `until_ts` ends it there (never before it starts)."""
    win_start, win_end = plan.window(step)
    if until_ts is not None:
        win_end = max(win_start, min(win_end, until_ts))
    return win_start, win_end


def _latencies(ok: Sequence[RequestRecord], quantile_shift: float) -> dict[str, Percentiles]:
    """TTFT, pooled ITL, TPOT and end-to-end percentiles of the successful requests, keyed as SLOs name them."""
    return {
        "ttft": percentiles([r.ttft_s for r in ok if r.ttft_s is not None], quantile_shift),
        "itl": percentiles([g for r in ok for g in r.gaps_s], quantile_shift),
        "tpot": percentiles([t for t in map(tpot_of, ok) if t is not None], quantile_shift),
        "e2e": percentiles([r.e2e_s for r in ok if r.e2e_s is not None], quantile_shift),
    }


def _error_examples(failed: Sequence[RequestRecord]) -> dict[str, str]:
    """The first message of each error type: what a reader needs to see what the count means."""
    examples: dict[str, str] = {}
    for record in failed:
        examples.setdefault(record.error_type, record.error_message)
    return examples


def _client_health(plan: RampPlan, measured: Sequence[RequestRecord], cpu_percents: Sequence[float]) -> ClientHealth:
    """How the load generator itself fared in the step: its CPU and, for an open-loop (rate) ramp, how late it sent
    (a late client measures itself, not the server)."""
    lateness = [r.send_lateness_s for r in measured] if plan.mode == "rate" else []
    return ClientHealth(
        cpu_percent_max=max(cpu_percents) if cpu_percents else None,
        send_lateness_p50_s=percentile(lateness, 50),
        send_lateness_p99_s=percentile(lateness, 99),
        load_processes=plan.workers,
    )


def _slos_met(
    slos: Sequence[SLO], by_metric: dict[str, Percentiles], ok: int, failed: int, max_error_rate: float
) -> bool:
    """Whether the step met every SLO: some requests succeeded, the error rate stayed within its bound and each
    SLO's percentile is measured and within its bound (an unmeasured percentile is not met)."""
    error_rate = failed / (ok + failed) if ok + failed else 1.0
    return (
        ok > 0
        and error_rate <= max_error_rate
        and all((v := getattr(by_metric[s.metric], s.percentile)) is not None and v <= s.bound_s for s in slos)
    )


def streamed_tokens(records: Sequence[RequestRecord], start_ts: float, end_ts: float) -> float:
    """Output tokens received in [start_ts, end_ts), whichever request carried them.

    Why beside output_tokens_per_s: that figure counts whole requests sent inside the window, so
    a step only a few request lives long rounds to whole requests (one stream in a 15 s window
    finishes 3 or 4 requests of 4.4 s: 25 % apart), and a step shorter than one request's life
    counts nothing. The tokens the server delivered while the step's load was on are smooth at
    any step length: the rate a user watching the streams sees."""
    total = 0.0
    for record in records:
        if record.ttft_s is None or not record.content_chunks:
            continue
        received = record.actual_send_ts + record.ttft_s
        # a finished request's end bounds its last event: no pass over its gaps to skip it
        last = record.actual_send_ts + record.e2e_s if record.e2e_s is not None else received + sum(record.gaps_s)
        if received >= end_ts or last < start_ts:
            continue
        inside = int(start_ts <= received)
        for gap in record.gaps_s:
            received += gap
            inside += start_ts <= received < end_ts
        total += inside * record.tokens / record.content_chunks
    return total


def _prompt_tokens(ok: Sequence[RequestRecord]) -> Percentiles | None:
    counts = [float(r.prompt_tokens) for r in ok if r.prompt_tokens is not None]
    return percentiles(counts) if counts else None


def _invalid_reason(
    measured: Sequence[RequestRecord], client: ClientHealth, max_cpu: float, max_lateness_s: float
) -> str | None:
    if not measured:
        return "no requests in the measured window (step shorter than warm-up or nothing sent)"
    if client.cpu_percent_max is not None and client.cpu_percent_max > max_cpu:
        return (
            f"load generator CPU {client.cpu_percent_max:.0f}% > {max_cpu:.0f}% of a core: "
            f"its timings are not trustworthy; add --workers"
        )
    if client.send_lateness_p99_s is not None and client.send_lateness_p99_s > max_lateness_s:
        return (
            f"send lateness p99 {client.send_lateness_p99_s * 1e3:.1f} ms > {max_lateness_s * 1e3:.0f} ms: "
            f"the load generator could not keep the schedule; add --workers"
        )
    return None


def load_tokenizer(path: str):
    """A local Hugging Face tokenizer for counting tokens when the server sends no usage."""
    try:
        from transformers import AutoTokenizer  # heavy; only when asked for

        return AutoTokenizer.from_pretrained(path)
    except Exception as exc:  # transformers raises many types for a bad path
        raise LoadTestError(
            f"--tokenizer {path!r}: cannot load a tokenizer there ({type(exc).__name__}); "
            f"pass a local Hugging Face model or tokenizer directory"
        ) from exc


def fill_tokens_with_tokenizer(records: Sequence[RequestRecord], tokenizer) -> None:
    """Count output tokens of records without server usage with `tokenizer` (None: leave chunk counts)."""
    missing = [r for r in records if r.output_tokens is None and r.output_text is not None]
    if not missing or tokenizer is None:
        return
    for record in missing:
        record.output_tokens = len(tokenizer.encode(record.output_text or "", add_special_tokens=False))
        record.token_source = "tokenizer"
