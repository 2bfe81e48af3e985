"""How far a real server's token gaps spread around its engine step, measured and replayed.

Why: the replay's gaps are its engine steps, so a step that decodes the same batch every iteration
has an ITL p99 equal to its p50. Real vLLM's do not: on every recorded CPU ramp, at loads where no
prefill lands between two tokens (one stream, or `--max-num-seqs 1`), the measured ITL p99 was
1.3-1.6x its p50 (the host's scheduling, the front end's detokenising and streaming, the client's
reads), and the model fitted on those very steps put the p99 25-48 % low (BENCHMARKS.md, "Token
gaps spread"). That tail is not in the step cost: the fit is on medians, and the engine's step
does not spread so.

So the spread is measured where the replay has none of its own: the ramp's steps whose replayed ITL
p99 is within TAIL_FREE of its p50, and whose measured p99 is within MOST_SPREAD of its p50 (beyond,
the replay missed a stall: on a 4-stream step its p99 was 11x the p50). There, each measured
percentile over the median (p90, p95, p99) is the delivery's spread, and their median over those
steps is the server's. The replay then moves each gap by a draw from that spread: a quantile
function through 1 at the median and the measured ratios above it, mirrored below (a late chunk
makes one long gap and the next one short, so the spread moves gaps, not their mean), read at a
low-discrepancy sequence so that a step of a few hundred gaps has its 1 % of tail. The move is
added, in units of the request's median gap (its plain decode step): delivery is late by
milliseconds whatever the engine did, so a gap that carries a prefill stall moves by as much as a
plain one, and a stall far above the spread's tail stays the p99 it was.

Without such a step (a live window under load, a prior), no spread is measured and the gaps are the
steps, as before; the prediction's note says which.
"""

from __future__ import annotations

import statistics

import numpy as np
from pydantic import BaseModel, Field

from loadtest.results import StepResult

# The percentile ranks whose spread is measured and replayed, as fractions.
SPREAD_RANKS = (0.90, 0.95, 0.99)
# A replayed step whose ITL p99 is within this factor of its p50 has no tail of its own (every gap
# about one decode step): its measured tail is the delivery's. At one stream an occasional overlap puts
# another request's prefill between two tokens: the recorded ramps' replays had p99/p50 1.10 and 1.15
# there, and 4.8x and more from two streams on. 1.15 itself sat on that value, and the fit's last digits
# differ between CPUs: `data_parallel_1`'s step came out 1.1515 on an AVX-512 host and
# under 1.15 on the AVX2 ones, so one recording was measured on one machine and not on the other.
TAIL_FREE = 1.25
# A measured p99 above this multiple of its p50 is not delivery's spread but a stall the replay missed (a
# prefill it placed elsewhere): such a step is not measured on. Real vLLM's CPU spreads were 1.3-1.6x.
MOST_SPREAD = 2.0
# A gap is never replayed shorter than this share of its step (the mirror of a long tail would
# otherwise reach zero or below).
SHORTEST = 0.25
# The golden ratio's fractional part: successive multiples fill [0, 1) evenly, so every stretch of
# a request's gaps draws from the whole spread.
_STRIDE = 0.6180339887498949


# Said when a ramp has no step to measure the spread on.
SPREAD_UNMEASURED = (
    "token gaps: every step of this ramp has a tail of its own in the replay (prefills between tokens), so "
    "the spread of the server's gaps around its step is not measured; ITL p90-p99 where the replay has no "
    "tail are its steps alone (real vLLM's CPU gaps spread to 1.3-1.6x their median there, BENCHMARKS.md)"
)


class GapSpread(BaseModel):
    """The measured spread of token gaps around the engine step: each SPREAD_RANKS percentile over
    the median, and the steps it was measured on."""

    ratios: list[float] = Field(description="ITL p90/p50, p95/p50, p99/p50 measured where the replay has no tail")
    steps: list[float] = Field(description="the offered loads of the steps it was measured on")

    def describe(self) -> str:
        p90, p95, p99 = self.ratios
        loads = ", ".join(f"{s:g}" for s in self.steps)
        return (
            f"token gaps spread around the engine step: measured ITL p90/p95/p99 = {p90:.2f}/{p95:.2f}/{p99:.2f}x "
            f"p50 at the step(s) whose replay has no tail of its own (offered {loads}); replayed on every gap"
        )


def measure_spread(measured: list[StepResult], replayed: list[StepResult]) -> GapSpread | None:
    """The spread from the ramp's `measured` steps and the same steps `replayed` without one; None when no
    step qualifies (every replayed step has a tail of its own, or nothing measured its percentiles)."""
    rows: list[list[float]] = []
    loads: list[float] = []
    by_step = {model.step: model for model in replayed}
    for real in measured:
        model = by_step.get(real.step)
        if model is None or not (real.valid and real.ok_requests and model.valid):
            continue
        mp50, mp99 = model.itl_s.p50, model.itl_s.p99
        if not mp50 or not mp99 or mp99 > TAIL_FREE * mp50:
            continue
        values = [real.itl_s.p50, real.itl_s.p90, real.itl_s.p95, real.itl_s.p99]
        if any(v is None or v <= 0 for v in values):
            continue
        median = values[0]
        if values[-1] > MOST_SPREAD * median:
            continue
        rows.append([max(1.0, v / median) for v in values[1:]])
        loads.append(real.offered)
    if not rows:
        return None
    ratios = [statistics.median(column) for column in zip(*rows, strict=True)]
    for k in range(1, len(ratios)):  # percentiles never fall with their rank
        ratios[k] = max(ratios[k], ratios[k - 1])
    return GapSpread(ratios=[round(r, 4) for r in ratios], steps=loads)


def factors(spread: list[float], u: np.ndarray) -> np.ndarray:
    """The spread's quantile function at each `u` in [0, 1): 1 at the median, the measured ratios at
    SPREAD_RANKS (linear between), continued past p99 at its last slope, mirrored below the median
    (never under SHORTEST)."""
    ranks = np.array([0.5, *SPREAD_RANKS, 1.0])
    slope = (spread[-1] - spread[-2]) / (SPREAD_RANKS[-1] - SPREAD_RANKS[-2])
    values = np.array([1.0, *spread, spread[-1] + slope * (1.0 - SPREAD_RANKS[-1])])
    upper = np.interp(np.maximum(u, 1.0 - u), ranks, values)
    return np.where(u < 0.5, np.maximum(SHORTEST, 2.0 - upper), upper)


def factor(spread: list[float], u: float) -> float:
    """`factors` at one rank."""
    return float(factors(spread, np.array([u]))[0])


def spread_gaps(gaps: list[float], spread: list[float], request: int) -> list[float]:
    """`gaps` each moved by the spread's draw at a low-discrepancy rank, in units of their median (request
    `request`'s own start, so that no two requests draw the same ranks in the same order). Vectorised: a
    replayed step holds tens of thousands of gaps, and every prediction replays every step."""
    if not spread or not gaps:
        return gaps
    values = np.asarray(gaps, dtype=float)
    step = float(np.median(values))
    start = (request * _STRIDE * _STRIDE) % 1.0
    ranks = (start + np.arange(1, len(values) + 1) * _STRIDE) % 1.0
    return np.maximum(SHORTEST * step, values + (factors(spread, ranks) - 1.0) * step).tolist()
