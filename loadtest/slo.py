"""Service-level objectives: `--slo ttft_p99=2s,itl_p99=100ms`, and per-request conformance.

A step *meets* the SLOs when each named percentile of the step is within its bound and at
most `max_error_rate` of its requests failed. A *request* counts toward goodput when it
succeeded and its own value of each named metric is within the bound (its TTFT, its mean
inter-token gap, its TPOT, its e2e): the percentile names the step-level check only.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from loadtest.errors import LoadTestError

METRICS = ("ttft", "itl", "tpot", "e2e")
PERCENTILES = ("p50", "p90", "p95", "p99")
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_TERM = re.compile(r"^(ttft|itl|tpot|e2e)_(p50|p90|p95|p99)=([0-9]*\.?[0-9]+)(s|ms|us)?$")


class SLO(BaseModel):
    metric: str
    percentile: str
    bound_s: float

    @property
    def key(self) -> str:
        return f"{self.metric}_{self.percentile}"


def parse_slos(text: str | None) -> list[SLO]:
    """Parse `ttft_p99=2s,itl_p99=100ms`; bare numbers are seconds."""
    if not text:
        return []
    slos = []
    for term in (t.strip() for t in text.split(",")):
        if not term:
            continue
        match = _TERM.match(term)
        if not match:
            raise LoadTestError(
                f"--slo {term!r}: expected METRIC_PCT=VALUE[s|ms|us] with METRIC in {'/'.join(METRICS)} "
                f"and PCT in {'/'.join(PERCENTILES)}, e.g. ttft_p99=2s,itl_p99=100ms"
            )
        metric, pct, value, unit = match.groups()
        slos.append(SLO(metric=metric, percentile=pct, bound_s=float(value) * _UNITS[unit or "s"]))
    return slos
