"""OP-5.38: a serving benchmark's TTFT that is time spent queued, not prefill.

Why a rule of its own: "TTFT is 98 seconds" is a common performance report, and its figure comes from `vllm bench
serve` (benchmarks/benchmark_serving.py before it), which times each request from when it sends it. Its default
load is `--request-rate inf` with no `--max-concurrency` (vllm/benchmarks/serve.py, 0.32): every prompt is sent at
the start, the server takes as many as its batch holds (--max-num-seqs, the KV cache) and the rest wait their turn,
so the last requests' first token comes near the end of the run and the mean TTFT is a large share of the run's
duration. A prefill takes well under a second for ordinary prompts on a GPU; a mean TTFT that is a tenth of the
whole run or more is a queue, whatever the flags. The maintainers answered the same in vllm#4252 (TTFT includes the
time a request waits to be scheduled), and vLLM's own example of `vllm bench serve` at its defaults (PR #18566: 1000
prompts, mean TTFT 9.6 s of a 30.9 s run) shows the shape.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# A mean TTFT at least this share of the whole run is requests waiting their turn, not their prefill.
QUEUED_SHARE = 0.10
# A TTFT this long without the run's duration beside it: a prefill of ordinary prompts takes well under a second on a
# GPU, so ten seconds is a prompt of far over a hundred thousand tokens, or a queue (vllm#7567 pasted 31 s alone)
LONG_TTFT_S = 10.0


def _figures(facts: Facts) -> dict[str, LogEvent]:
    """The last value of each figure the text holds (a paste of two runs: the second's)."""
    return {e.label or "": e for e in facts.events_of(LogEventKind.BENCHMARK_FIGURE)}


def _check(facts: Facts) -> list[Finding]:
    figures = _figures(facts)
    ttft = figures.get("Mean TTFT (ms)") or figures.get("Median TTFT (ms)")
    duration = figures.get("Benchmark duration (s)")
    if ttft is None or not ttft.figure:
        return []
    if duration is None or not duration.figure:
        return [_without_duration(ttft)] if ttft.figure / 1000 >= LONG_TTFT_S else []
    share = ttft.figure / 1000 / duration.figure
    if share < QUEUED_SHARE:
        return []
    return [_finding(figures, ttft, duration, share)]


def _load(figures: dict[str, LogEvent]) -> tuple[str, str]:
    """How the benchmark sent its requests, as its own lines say, and what to run instead."""
    rate = figures.get("Traffic request rate") or figures.get("Request rate configured (RPS)")
    cap = figures.get("Maximum request concurrency")
    sent = figures.get("Successful requests")
    every = f"all {sent.figure:,.0f}" if sent is not None and sent.figure else "all its"
    if rate is not None and rate.message == "inf" and (cap is None or cap.figure is None):
        return f"it sent {every} requests at once (request rate inf, the default, and no concurrency cap)", "burst"
    if rate is not None and rate.figure:
        served = figures.get("Request throughput (req/s)")
        if served is not None and served.figure and served.figure < rate.figure:
            return (
                f"it sent {rate.figure:g} requests/s, and the server finished {served.figure:g}/s",
                "overload",
            )
    return "requests were sent faster than the server took them in", "unknown"


def _finding(figures: dict[str, LogEvent], ttft: LogEvent, duration: LogEvent, share: float) -> Finding:
    how, kind = _load(figures)
    tpot = figures.get("Mean TPOT (ms)")
    decode = f" Its decode was steady (mean TPOT {tpot.figure:g} ms)." if tpot is not None and tpot.figure else ""
    return RULE.finding(
        Severity.MEDIUM,
        f"the benchmark's TTFT is time spent queued, not prefill: mean TTFT {ttft.figure / 1000:,.1f} s is "
        f"{share:.0%} of its {duration.figure:,.0f} s run: {how}",
        summary="`vllm bench serve` times each request from when it sends it. Requests sent faster than the server "
        "takes them in wait for a place in its batch (--max-num-seqs, and room in the KV cache), and that wait is "
        "their TTFT: the figure measures the load the benchmark chose, not how fast the server prefills."
        + decode
        + (" Its throughput (req/s) is the server's capacity at this mix, a fair figure." if kind == "burst" else ""),
        evidence=[
            c.log_evidence(ttft, name=ttft.label or "TTFT", value=round(ttft.figure / 1000, 1), unit="s"),
            c.log_evidence(duration, name="benchmark duration", value=duration.figure, unit="s"),
        ],
        actions=[
            "Measure TTFT at the load the server must carry: `--request-rate R` (your traffic's requests per second) "
            "or `--max-concurrency C` (your clients'), below the throughput this run found.",
            "To find where TTFT starts to climb, step the rate up (a sweep of `--request-rate`, or `servops ramp` "
            "with a TTFT target); compare two servers or two flags at the same rate, not at inf.",
        ],
        confidence=0.8 if kind != "unknown" else 0.65,
    )


def _without_duration(ttft: LogEvent) -> Finding:
    """A long TTFT pasted without the run it came from: the same reading, as a likelihood."""
    return RULE.finding(
        Severity.MEDIUM,
        f"the benchmark's {(ttft.label or 'TTFT').removesuffix(' (ms)').lower().replace('ttft', 'TTFT')} of "
        f"{ttft.figure / 1000:,.1f} s is most likely time spent queued, not "
        "prefill (the run's duration and load are not in the text)",
        summary="`vllm bench serve` times each request from when it sends it, and at its defaults (request rate inf, "
        "no concurrency cap) sends every prompt at once: all but a batch's worth wait their turn, and the wait is "
        f"their TTFT. A prefill of ordinary prompts takes well under a second on a GPU; {LONG_TTFT_S:g} s or more "
        "is a prompt of far over a hundred thousand tokens, or a queue.",
        evidence=[c.log_evidence(ttft, name=ttft.label or "TTFT", value=round(ttft.figure / 1000, 1), unit="s")],
        actions=[
            "Paste the whole result block (`Benchmark duration (s)`, `Traffic request rate`, `Maximum request "
            "concurrency`): a TTFT that is a large share of the duration is the queue the load made.",
            "Measure TTFT at the load the server must carry: `--request-rate R` or `--max-concurrency C`, below the "
            "run's request throughput.",
        ],
        confidence=0.55,
    )


RULE = Rule(
    code="OP-5.38",
    title="a serving benchmark's TTFT is queueing, not prefill",
    category=Category.LATENCY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks=f"A serving benchmark's result block (`vllm bench serve`, benchmark_serving.py): mean (or median) TTFT "
        f"at least {QUEUED_SHARE:.0%} of the benchmark's duration; its load from its own lines (`Traffic request rate: "
        "inf`, `Maximum request concurrency: None`, `Request rate configured (RPS)`, the request throughput).",
        why="A TTFT that is a large share of the whole run is requests waiting their turn, which the benchmark's "
        "load decides; a server tuned against it is tuned against a queue it created.",
        example="`vllm bench serve` at its defaults, 1000 prompts: mean TTFT 9.6 s of a 30.9 s run (vLLM PR #18566's "
        "own output); vllm#4252, answered by the maintainers: TTFT includes the time waiting to be scheduled.",
        fix="Benchmark at the rate or concurrency the server must carry (`--request-rate`, `--max-concurrency`), or "
        "sweep the rate; compare servers at one rate below saturation.",
        limits="Reads the figures a pasted run prints (a TTFT of 10 s or more pasted without the run's duration is "
        "named as a likely queue, at lower confidence); a prefill truly that slow (prompts of hundreds of thousands "
        "of tokens) is told apart only by the prompt lengths, which the block's total input tokens give on average.",
        references=[
            "https://github.com/vllm-project/vllm/issues/4252",
            "https://github.com/vllm-project/vllm/pull/18566",
            "https://docs.vllm.ai/en/latest/cli/bench/serve.html",
        ],
    ),
)

RULES: list[Rule] = [RULE]
