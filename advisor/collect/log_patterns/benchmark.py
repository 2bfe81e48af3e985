"""What vLLM's own benchmark prints, pasted in a performance report: `benchmarks/benchmark_throughput.py` (and
`vllm bench throughput`) ends with `Throughput: 20.13 requests/s, 10308.29 tokens/s` (later releases: `…
total tokens/s, … output tokens/s`).

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


PATTERNS: tuple[Pattern, ...] = (
    wording(
        ("Throughput: ",),
        K.BENCHMARK_THROUGHPUT,
        r"^(?:(?P<label>[^:]{1,40}):\s*)?Throughput: (?P<rps>[\d.]+) requests/s, (?P<tps>[\d.]+) (?:total )?tokens/s",
        _throughput,
    ),
)
