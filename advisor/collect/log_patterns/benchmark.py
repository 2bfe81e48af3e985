"""What vLLM's own benchmark prints, pasted in a performance report: `benchmarks/benchmark_throughput.py` (and
`vllm bench throughput`) ends with `Throughput: 20.13 requests/s, 10308.29 tokens/s` (later releases: `…
total tokens/s, … output tokens/s`); `vllm bench serve` (benchmarks/benchmark_serving.py) prints its load settings
before the run and a result block after it, one `name: value` figure a line.

Why read: a regression is reported as two of these lines under two labels (`Before:` / `After:`, or two
releases, vllm#4210); the same benchmark on the same machine is a controlled comparison, unlike two stats
lines taken under whatever load the server had.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Fields, Pattern, to_float, wording
from rules.events import LogEventKind as K


def _throughput(match: re.Match[str]) -> Fields:
    label = (match["label"] or "").strip(" `*-") or None
    return {"requests_per_s": to_float(match["rps"]), "tokens_per_s": to_float(match["tps"]), "label": label}


# The figures of a serving benchmark's run (printed before it) and result block (after) that tell a queue from a
# slow prefill: vllm/benchmarks/serve.py (0.32) prints each as `{name}:` padded to 40 columns, then its value.
SERVING_FIGURES = (
    "Successful requests",
    "Benchmark duration (s)",
    "Total input tokens",
    "Request throughput (req/s)",
    "Mean TTFT (ms)",
    "Median TTFT (ms)",
    "Mean TPOT (ms)",
    "Traffic request rate",
    "Maximum request concurrency",
    "Request rate configured (RPS)",
    "Peak concurrent requests",
)


def _figure(match: re.Match[str]) -> Fields:
    value = match["value"]
    number = to_float(value) if re.fullmatch(r"[\d.,]+", value) else None
    return {"label": match["name"], "message": value, "figure": number}


PATTERNS: tuple[Pattern, ...] = (
    wording(
        ("Throughput: ",),
        K.BENCHMARK_THROUGHPUT,
        r"^(?:(?P<label>[^:]{1,40}):\s*)?Throughput: (?P<rps>[\d.]+) requests/s, (?P<tps>[\d.]+) (?:total )?tokens/s",
        _throughput,
    ),
    wording(
        tuple(f"{name}:" for name in SERVING_FIGURES),
        K.BENCHMARK_FIGURE,
        rf"^\s*(?P<name>{'|'.join(map(re.escape, SERVING_FIGURES))}):\s+(?P<value>\S+)\s*$",
        _figure,
    ),
)
