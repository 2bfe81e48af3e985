"""The Locust user for streaming OpenAI endpoints (chat and completions).

A user is Locust's unit of load; ours is thin on purpose: it asks the process's
`LoadGenerator` (set on the environment as `servops_generator`) for its schedule. In a rate
ramp the first user of each process is the open-loop dispatcher (every request in its own
greenlet, on an absolute schedule); in a concurrency ramp each user is one closed-loop
client that is active while its number is below the step's concurrency.

Importing this module imports Locust, which monkey-patches the process with gevent: only
the load-generator process (loadtest/locust_main.py) may import it.
"""

from __future__ import annotations

import time

import gevent
from locust import LoadTestShape, User, constant, task

from loadtest.generator import LoadGenerator
from loadtest.plan import RampPlan
from loadtest.records import RequestRecord

SHAPE_GRACE_S = 3.0


class StreamingOpenAIUser(User):
    """One simulated client; the schedule comes from the process's LoadGenerator."""

    wait_time = constant(0)

    def on_start(self) -> None:
        self.generator: LoadGenerator = self.environment.servops_generator  # type: ignore[attr-defined]
        self.user_number = self.generator.next_user_number()
        self.schedule_done = False

    @task
    def follow_schedule(self) -> None:
        if self.schedule_done:
            gevent.sleep(1.0)  # idle until the shape stops the test
            return
        plan = self.generator.plan
        if plan.mode == "rate":
            if self.user_number == 0:
                self.generator.run_open_loop()
        else:
            self.generator.run_closed_loop(self.user_number)
        self.schedule_done = True


class RampShape(LoadTestShape):
    """Holds every process at its planned user count until the cool-down is over.

    Locust's shape ticks once a second, too coarse to time steps, so step changes happen in
    the users themselves on the absolute timeline; the shape only starts and stops them.
    """

    def __init__(self, plan: RampPlan) -> None:
        super().__init__()
        self.plan = plan

    def tick(self) -> tuple[int, float] | None:
        if time.time() >= self.plan.run_end + SHAPE_GRACE_S:
            return None
        users = self.plan.users_per_worker() * self.plan.workers
        return users, float(max(users, 1)) * 10.0


def fire_locust_request_event(environment, record: RequestRecord) -> None:
    """Feed Locust's own statistics, which we use for display only (they round to 2 digits)."""
    environment.events.request.fire(
        request_type="SSE",
        name=f"step {record.step}",
        response_time=(record.e2e_s or 0.0) * 1000.0,
        response_length=record.tokens,
        exception=RuntimeError(record.error_type) if record.error_type else None,
        context={},
    )
