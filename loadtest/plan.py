"""The ramp plan: one absolute timeline that every load-generator process follows.

Why absolute: an open-loop test is only open if a request is sent when the schedule says,
not when the previous one finished or when a shape tick happened to fire. The plan fixes a
start time `start_ts` (wall clock); step k runs over [start + k*step_s, start + (k+1)*step_s)
and its first `warmup_s` seconds are excluded from the statistics by request *intended*
send time. After the last step nothing new is sent; in-flight requests get `cooldown_s` to
finish and are then recorded as `cancelled`.

Arrivals (rate ramps) are generated per step from the seed alone, so the same plan gives the
same schedule on one process or on many: process w of W takes arrivals j with j % W == w.
Concurrency ramps give process w the users n < c with n % W == w.
"""

from __future__ import annotations

import math
import random

from pydantic import Field

from loadtest.config import RampSchedule

MAX_ARRIVALS_PER_STEP = 200_000


def auth_headers(api_key: str | None, authorization: str | None) -> dict[str, str]:
    if api_key:
        return {"Authorization": f"Bearer {api_key}"}
    return {"Authorization": authorization} if authorization else {}


class RampPlan(RampSchedule):
    """Everything a load-generator process needs; travels as JSON to workers.

    The schedule fields and their defaults are `RampSchedule`'s (loadtest/config.py), the same
    fields `RampConfig` has: a plan's defaults cannot drift from the ramp's.
    """

    endpoint: str
    model: str
    max_inflight_per_worker: int = Field(default=4096, ge=1)
    workers: int = Field(default=1, ge=1, description="load processes that share the schedule")
    start_ts: float = 0.0
    api_key: str | None = Field(default=None, repr=False, description="sent as a Bearer token; never echoed")
    authorization: str | None = Field(
        default=None, repr=False, description="a whole Authorization value (Basic from the URL); never echoed"
    )

    def auth_headers(self) -> dict[str, str]:
        """The Authorization header every request carries: --api-key as a bearer token, else the URL's
        user:password as Basic; none without either."""
        return auth_headers(self.api_key, self.authorization)

    @property
    def steps(self) -> int:
        return len(self.levels)

    def step_start(self, step: int) -> float:
        return self.start_ts + step * self.step_s

    def step_end(self, step: int) -> float:
        return self.start_ts + (step + 1) * self.step_s

    def window(self, step: int) -> tuple[float, float]:
        """The measured part of a step: [start + warm-up, end)."""
        return self.step_start(step) + self.warmup_s, self.step_end(step)

    @property
    def send_end(self) -> float:
        return self.start_ts + self.steps * self.step_s

    @property
    def run_end(self) -> float:
        return self.send_end + self.cooldown_s

    def step_at(self, ts: float) -> int | None:
        """The step whose schedule covers wall time `ts`, or None outside the ramp."""
        if ts < self.start_ts or ts >= self.send_end:
            return None
        return min(self.steps - 1, int((ts - self.start_ts) // self.step_s))

    def arrival_offsets(self, step: int) -> list[float]:
        """Send times of step `step`, in seconds from its start, for all processes together."""
        rate = self.levels[step]
        if rate <= 0:
            return []
        if self.arrival == "constant":
            count = min(MAX_ARRIVALS_PER_STEP, math.ceil(self.step_s * rate - 1e-9))
            return [j / rate for j in range(count) if j / rate < self.step_s]
        rng = random.Random(f"{self.workload.seed}:arrivals:{step}")
        offsets: list[float] = []
        t = rng.expovariate(rate)
        while t < self.step_s and len(offsets) < MAX_ARRIVALS_PER_STEP:
            offsets.append(t)
            t += rng.expovariate(rate)
        return offsets

    def my_arrivals(self, step: int, worker: int) -> list[tuple[int, float]]:
        """(global index, absolute send time) of this process's share of step `step`."""
        start = self.step_start(step)
        return [(j, start + off) for j, off in enumerate(self.arrival_offsets(step)) if j % self.workers == worker]

    def my_concurrency(self, step: int, worker: int) -> int:
        """How many of this process's users are active in step `step` (closed loop)."""
        return len(range(worker, int(self.levels[step]), self.workers))

    def users_per_worker(self) -> int:
        """Users each process spawns: one dispatcher for rates, its largest share for concurrency."""
        if self.mode == "rate":
            return 1
        return max(self.my_concurrency(k, 0) for k in range(self.steps))
