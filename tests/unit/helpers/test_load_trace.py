"""The held-load trace that checks a vLLM situation's precondition: it reads vLLM's own gauges,
tells a load that held from one that collapsed, and says when and who had the CPUs.

The /metrics texts are real vLLM 0.32 scrapes from the recorded corpus (tests/fixtures/vllm_cpu)."""

from __future__ import annotations

import subprocess
import sys
import time
from itertools import chain, repeat
from pathlib import Path

from tests.helpers import load_trace

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu"
SATURATED = (CORPUS / "saturated_after.prom").read_text()
IDLE = (CORPUS / "idle_after.prom").read_text()


def test_gauges_are_read_from_a_real_vllm_scrape_without_the_by_reason_series() -> None:
    assert load_trace.running_and_waiting(SATURATED) == (32.0, 0.0)
    assert load_trace.running_and_waiting(IDLE) == (0.0, 0.0)


def test_a_load_that_held_and_one_that_collapsed_are_told_apart() -> None:
    held = _trace(repeat(SATURATED), seconds=1.2)
    assert held.held(16) and held.mean_running() == 32
    # Full for the first reads, then vLLM empties while the client still holds its streams.
    collapsed = _trace(chain(repeat(SATURATED, 2), repeat(IDLE)), seconds=2.6)
    assert not collapsed.held(16)
    summary = collapsed.summary()
    assert summary.startswith("vLLM running min/mean/max 0/")
    assert "running by time: 0.0s:32 " in summary and summary.rstrip().count(":0") >= 1
    assert "CPU time over the window: busy " in summary and "steal " in summary


def test_the_summary_names_the_process_that_had_the_cpu() -> None:
    spin = "import time\nend = time.time() + 3\nwhile time.time() < end: pass"
    burner = subprocess.Popen([sys.executable, "-c", spin])
    try:
        trace = _trace(repeat(SATURATED), seconds=1.5)
    finally:
        burner.kill()
        burner.wait(10)
    assert f"pid {burner.pid} python" in trace.summary()


def test_failed_reads_are_counted_not_raised() -> None:
    def refused() -> str:
        raise ConnectionRefusedError("nothing listens")

    trace = _trace(refused, seconds=1.0)
    assert trace.samples == [] and trace.errors >= 2
    assert trace.summary().startswith("no gauge read succeeded (")
    assert not trace.held(1)


def _trace(texts, seconds: float) -> load_trace.LoadTrace:
    """A trace over `seconds` whose reads come from `texts` (an iterator of scrapes, or a callable)."""
    read = texts if callable(texts) else texts.__next__
    with load_trace.LoadTrace(read, {"completed": 0}) as trace:
        time.sleep(seconds)
    return trace
