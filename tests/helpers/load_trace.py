"""What a held load did while a situation was observed: vLLM's own running and waiting gauges
every half second, the requests the client finished, and over the whole window how the machine's
CPU time split (busy, idle, I/O wait, hypervisor steal) and which processes used it.

Why: on the CI box a held load of 32 streams once collapsed during the observation (vLLM reported
1 running, 0 waiting and KV usage 0.00 while the client still held 32 streams), so both triages
judged an almost idle server and the saturated tests failed on a situation that was never there.
The trace is the situation's precondition, checked: a load that did not hold is observed again,
and when it never holds the message says which side stopped, vLLM or everything beside it.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.helpers import machine_state

# Seconds between two reads of vLLM's gauges; a read costs vLLM's API server one /metrics render.
TRACE_INTERVAL_S = 0.5
# Upper bound on a trace's length, whatever happens to the observation it accompanies.
TRACE_MAX_S = 300.0
_GAUGE = re.compile(r"^(vllm:num_requests_(?:running|waiting))(?:\{[^}]*\})?\s+([0-9.eE+-]+)\s*$", re.MULTILINE)


def running_and_waiting(metrics_text: str) -> tuple[float, float]:
    """vLLM's running and waiting request gauges, summed over engines."""
    totals = {"vllm:num_requests_running": 0.0, "vllm:num_requests_waiting": 0.0}
    for name, value in _GAUGE.findall(metrics_text):
        totals[name] += float(value)
    return totals["vllm:num_requests_running"], totals["vllm:num_requests_waiting"]


@dataclass
class Sample:
    at_s: float
    running: float
    waiting: float
    client_completed: int


@dataclass
class LoadTrace:
    """Samples vLLM's gauges in a thread while the `with` block runs (bounded by TRACE_MAX_S).

    `metrics` reads the server's /metrics text; `counts` is the load's live tally ({"completed": n}).
    """

    metrics: Callable[[], str]
    counts: dict
    samples: list[Sample] = field(default_factory=list)
    errors: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _started: float = 0.0
    _ticks: dict[str, int] = field(default_factory=dict)
    _processes: dict[int, tuple[str, float]] = field(default_factory=dict)
    _elapsed_s: float = 0.0
    _cpu_split: str = ""
    _top_processes: str = ""

    def __enter__(self) -> LoadTrace:
        self._started = time.monotonic()
        self._ticks = machine_state.cpu_ticks()
        self._processes = machine_state.process_cpu_seconds()
        self._thread = threading.Thread(target=self._sample, name="load trace", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(TRACE_INTERVAL_S + 15.0)  # one /metrics read has a 10 s timeout
        self._elapsed_s = time.monotonic() - self._started
        self._cpu_split = _cpu_split(self._ticks, machine_state.cpu_ticks())
        self._top_processes = _top_processes(self._processes, machine_state.process_cpu_seconds())

    def _sample(self) -> None:
        deadline = self._started + TRACE_MAX_S
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                running, waiting = running_and_waiting(self.metrics())
            except (OSError, http.client.HTTPException):  # a failed read is counted, the trace goes on
                self.errors += 1
            else:
                at_s = time.monotonic() - self._started
                self.samples.append(Sample(at_s, running, waiting, int(self.counts.get("completed", 0))))
            self._stop.wait(TRACE_INTERVAL_S)

    def mean_running(self) -> float:
        """vLLM's mean running count over the samples (0 without any)."""
        return sum(s.running for s in self.samples) / len(self.samples) if self.samples else 0.0

    def held(self, at_least: float) -> bool:
        """Whether vLLM ran `at_least` requests on average while the block ran."""
        return self.mean_running() >= at_least

    def summary(self) -> str:
        """One paragraph for a test's output or a failure message."""
        if not self.samples:
            return f"no gauge read succeeded ({self.errors} failed reads in {self._elapsed_s:.1f} s)"
        running = [s.running for s in self.samples]
        first, last = self.samples[0], self.samples[-1]
        finished = last.client_completed - first.client_completed
        return (
            f"vLLM running min/mean/max {min(running):g}/{self.mean_running():.1f}/{max(running):g} and waiting max "
            f"{max(s.waiting for s in self.samples):g} over {len(self.samples)} reads in {self._elapsed_s:.1f} s "
            f"({self.errors} failed); the client finished {finished} requests meanwhile\n"
            f"  running by time: {_timeline(self.samples)}\n"
            f"  CPU time over the window: {self._cpu_split}\n"
            f"  CPU seconds by process: {self._top_processes}"
        )


def _timeline(samples: list[Sample], points: int = 24) -> str:
    """At most `points` evenly spread samples as 't:running', so a collapse shows when it began."""
    step = max(1, len(samples) // points)
    return " ".join(f"{s.at_s:.1f}s:{s.running:g}" for s in samples[::step])


def _cpu_split(before: dict[str, int], after: dict[str, int]) -> str:
    spent = {kind: after.get(kind, 0) - before.get(kind, 0) for kind in after}
    total = sum(spent.values())
    if total <= 0:
        return "unknown"
    busy = total - spent.get("idle", 0) - spent.get("iowait", 0) - spent.get("steal", 0)
    shares = {"busy": busy, **{kind: spent.get(kind, 0) for kind in ("idle", "iowait", "steal")}}
    return ", ".join(f"{kind} {100 * value / total:.0f}%" for kind, value in shares.items())


def _top_processes(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]], count: int = 6) -> str:
    used = sorted(
        ((seconds - before.get(pid, (name, 0.0))[1], pid, name) for pid, (name, seconds) in after.items()),
        reverse=True,
    )
    shown = [f"{seconds:.1f} s pid {pid} {name}" for seconds, pid, name in used[:count] if seconds > 0]
    return "; ".join(shown) or "none"
