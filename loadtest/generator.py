"""What one load-generator process does: follow the plan, measure, hand records on.

Why separate from the Locust user: the user class is the Locust-shaped entry point (one per
simulated client); the schedule, the in-flight registry, step closing and record shipping are
per *process*, shared by all its users, and are the same in local and worker processes.
Only `emit` differs: a local run writes to its stdout, a worker sends a custom message to the
master. Uses gevent (the process runs under Locust's monkey-patching) but not Locust itself.

Step closing: once step k's send window has ended and none of this process's requests from
steps <= k is still in flight (or their time is up), the process emits `step_closed` with
every record it holds. At the end of the cool-down, requests still in flight are recorded as
`cancelled`, so no record is ever lost and no wait is unbounded.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import gevent
import psutil
from gevent.pool import Pool

from loadtest.http_stream import Endpoint
from loadtest.plan import RampPlan
from loadtest.records import RequestRecord, cancelled_record, measure_request
from loadtest.workload import Workload

Emit = Callable[[dict], None]
MAX_CLOSED_LOOP_REQUESTS = 10_000_000


class LoadGenerator:
    """Runs this process's share of a ramp and ships full-precision records through `emit`."""

    def __init__(
        self, plan: RampPlan, worker: int, emit: Emit, on_record: Callable[[RequestRecord], None] | None = None
    ) -> None:
        self.plan = plan
        self.worker = worker
        self.emit = emit
        self.on_record = on_record
        self.endpoint = Endpoint.parse(plan.endpoint)
        self.workload = Workload(plan.workload)
        self.pool = Pool(plan.max_inflight_per_worker)
        self.inflight: dict[tuple[int, int], tuple[float, float]] = {}
        self.buffer: list[dict] = []
        self.finished = False
        self._user_numbers = itertools.count()
        self._closed_loop_counters: dict[int, itertools.count] = {}
        self._headers = plan.auth_headers() or None

    def next_user_number(self) -> int:
        return next(self._user_numbers)

    # --- sending -------------------------------------------------------------------------

    def send(self, step: int, index: int, intended_ts: float) -> None:
        request = self.workload.request(step, index, self.plan.model)
        key = (step, index)
        self.inflight[key] = (intended_ts, time.time())
        record = measure_request(
            self.endpoint,
            request.path,
            request.body,
            step=step,
            index=index,
            intended_send_ts=intended_ts,
            timeout_s=self.plan.request_timeout_s,
            worker=self.worker,
            headers=self._headers,
        )
        if self.inflight.pop(key, None) is None:
            return  # the cool-down already recorded it as cancelled
        self.buffer.append(record.model_dump())
        if self.on_record is not None:
            self.on_record(record)

    def run_open_loop(self) -> None:
        """Dispatch this process's arrivals at their absolute times, each in its own greenlet."""
        for step in range(self.plan.steps):
            for index, send_ts in self.plan.my_arrivals(step, self.worker):
                delay = send_ts - time.time()
                if delay > 0:
                    gevent.sleep(delay)
                if time.time() >= self.plan.send_end:
                    return
                self.pool.spawn(self.send, step, index, send_ts)  # waits if the pool is full: lateness

    def run_closed_loop(self, user_number: int) -> None:
        """Back-to-back requests while this user is within the step's concurrency."""
        for _ in range(MAX_CLOSED_LOOP_REQUESTS):
            now = time.time()
            if now >= self.plan.send_end:
                return
            step = self.plan.step_at(now)
            if step is None:
                gevent.sleep(min(self.plan.start_ts - now, 1.0))
                continue
            if user_number >= self.plan.my_concurrency(step, self.worker):
                gevent.sleep(max(0.0, self.plan.step_end(step) - now))
                continue
            counter = self._closed_loop_counters.setdefault(step, itertools.count())
            index = next(counter) * self.plan.workers + self.worker
            self.send(step, index, now)

    # --- closing steps ---------------------------------------------------------------------

    def run_closer(self) -> None:
        """Emit `step_closed` for each step in order, then the final flush; bounded by the plan."""
        process = psutil.Process()
        gevent.sleep(max(0.0, self.plan.start_ts - time.time()))
        last_cpu, last_wall = _cpu_seconds(process), time.time()
        for step in range(self.plan.steps):
            gevent.sleep(max(0.0, self.plan.step_end(step) - time.time()))
            cpu, wall = _cpu_seconds(process), time.time()
            cpu_percent = 100.0 * (cpu - last_cpu) / max(1e-9, wall - last_wall)
            last_cpu, last_wall = cpu, wall
            limit = min(self.plan.step_end(step) + self.plan.request_timeout_s + 1.0, self.plan.run_end)
            if step == self.plan.steps - 1:
                limit = self.plan.run_end
            self._wait_for_steps_up_to(step, limit)
            if time.time() >= self.plan.run_end:
                self._cancel_inflight()
            self._flush(step, cpu_percent)
        self._cancel_inflight()
        self._flush(None, None)
        self.finished = True

    def interrupt(self) -> None:
        """Ctrl-C or SIGTERM reached this process: hand on everything measured so far, the step in
        progress included, with the moment of the interruption, so the controller keeps the steps
        already done and a partial one instead of nothing. Requests still in flight are recorded as
        `cancelled`. Only the first call emits (the terminal and the controller may both signal)."""
        if self.finished:
            return
        self.finished = True
        self._cancel_inflight()
        records, self.buffer = self.buffer, []
        self.emit({"type": "interrupted", "worker": self.worker, "ts": time.time(), "records": records})

    def _wait_for_steps_up_to(self, step: int, limit_ts: float) -> None:
        while time.time() < limit_ts and any(k[0] <= step for k in self.inflight):
            gevent.sleep(min(0.05, max(0.0, limit_ts - time.time())))

    def _cancel_inflight(self) -> None:
        for (step, index), (intended, actual) in list(self.inflight.items()):
            self.inflight.pop((step, index), None)
            self.buffer.append(cancelled_record(step, index, intended, actual, self.worker).model_dump())

    def _flush(self, step: int | None, cpu_percent: float | None) -> None:
        records, self.buffer = self.buffer, []
        message = {
            "type": "step_closed" if step is not None else "done",
            "step": step,
            "worker": self.worker,
            "cpu_percent": cpu_percent,
            "records": records,
        }
        self.emit(message)


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system
