"""run_on_setup_thread: the start-up compute's result or error comes back, and its OpenMP workers go."""

from __future__ import annotations

import os
import threading
import time

import pytest
import torch

from engine.api.setup_thread import run_on_setup_thread


def test_returns_the_result_computed_on_another_thread_that_has_ended() -> None:
    seen: list[threading.Thread] = []

    def work() -> int:
        seen.append(threading.current_thread())
        return 42

    assert run_on_setup_thread(work) == 42
    assert seen[0] is not threading.main_thread()
    assert not seen[0].is_alive()


def test_raises_the_work_s_own_exception_in_the_caller() -> None:
    def work() -> None:
        raise ValueError("no weights at /nowhere")

    with pytest.raises(ValueError, match="/nowhere"):
        run_on_setup_thread(work)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc to count threads")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2+ CPUs for OpenMP to start a worker")
def test_the_openmp_workers_of_the_setup_thread_do_not_outlive_it() -> None:
    """What the server relies on: a parallel region run on the setup thread leaves no pool behind
    (libgomp frees a thread's pool when the thread ends), so the HTTP thread owns no workers. The
    first run also starts a helper thread PyTorch keeps for the process; the second is measured."""
    threads = torch.get_num_threads()

    def work() -> float:
        torch.set_num_threads(2)
        return float(torch.ones(1 << 22).sum())  # large enough to open a two-thread region

    try:
        run_on_setup_thread(work)
        before = _threads()
        run_on_setup_thread(work)
    finally:
        torch.set_num_threads(threads)
    deadline = time.monotonic() + 5.0
    while _threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _threads() <= before
