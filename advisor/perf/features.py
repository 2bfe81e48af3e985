"""The linear features of a replayed request: what its TTFT, gaps and phases are made of.

Why: with the schedule fixed, every latency is a sum of step times, and a step time is
linear in the cost's coefficients, so each latency is `features · coefficients` (+ the
per-request overhead where the client's clock runs). Calibration solves for the
coefficients that make the replay's median request match the measured median; the replay is
then re-run with the new coefficients until the schedule stops changing (a fixed point).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from advisor.perf.cost import StepCost
from advisor.perf.replay import EngineStep, ReplayedRequest


class StepIndex:
    """Prefix sums of step features (in `cost`'s form: a line or a curve over the decode batch),
    to sum any run of steps in O(log n)."""

    def __init__(self, steps: Sequence[EngineStep], cost: StepCost) -> None:
        self.steps = steps
        self.ends = [s.end for s in steps]
        self.width = len(cost.columns())
        self.rows = np.array([cost.feature_row(s.shape) for s in steps], dtype=float).reshape(-1, self.width)
        self.cumulative = np.vstack([np.zeros((1, self.width)), np.cumsum(self.rows, axis=0)])

    def between(self, t0: float, t1: float) -> np.ndarray:
        """Features of the engine time in (t0, t1]: whole steps ending inside, the step that
        was running at t0 only for its part after t0."""
        first = bisect.bisect_right(self.ends, t0 + 1e-12)
        last = bisect.bisect_right(self.ends, t1 + 1e-12)
        total = self.cumulative[last] - self.cumulative[first]
        if first < len(self.steps) and first < last:
            step = self.steps[first]
            if step.start < t0 < step.end:
                total = total - self.rows[first] * (t0 - step.start) / (step.end - step.start)
        return total


def ttft(index: StepIndex, r: ReplayedRequest) -> np.ndarray:
    """TTFT = overhead + engine time from arrival to the first token: features + [overhead coefficient 1]."""
    return np.append(index.between(r.arrival, r.token_times[0]), 1.0)


def gap(index: StepIndex, r: ReplayedRequest, j: int) -> np.ndarray:
    return np.append(index.between(r.token_times[j], r.token_times[j + 1]), 0.0)


def tpot(index: StepIndex, r: ReplayedRequest) -> np.ndarray:
    n = len(r.token_times)
    return np.append(index.between(r.token_times[0], r.token_times[-1]) / max(1, n - 1), 0.0)


def prefill_phase(index: StepIndex, r: ReplayedRequest) -> np.ndarray:
    """vLLM's request_prefill_time: first scheduled → first token (engine time only)."""
    start = r.first_scheduled if r.first_scheduled is not None else r.arrival
    return np.append(index.between(start, r.token_times[0]), 0.0)


def decode_phase(index: StepIndex, r: ReplayedRequest) -> np.ndarray:
    return np.append(index.between(r.token_times[0], r.token_times[-1]), 0.0)
