"""Run the engine's start-up compute on a thread that ends, so the HTTP thread never owns OpenMP workers.

Why: GNU libgomp gives every thread that opens a parallel region a pool of worker threads of its
own, and those workers live as long as that thread. The server used to load, profile, warm up and
time the model on its main thread, which then serves HTTP for the rest of the process: its pool
stayed behind, idle, while the engine thread's own pool ran every step. libgomp counts both pools
against the cores, and once it manages more threads than there are CPUs it cuts the time a waiting
thread spins before it sleeps to 100 turns (1,000 with OMP_WAIT_POLICY=ACTIVE; GCC's libgomp
manual, "GOMP_SPINCOUNT"). Every parallel region then wakes a sleeping worker, whatever spin the
user asked for. Measured on a 2-core AMD EPYC (GOMP_SPINCOUNT=10000, SmolLM2, a one-sequence decode
step on two threads, engine stepped from a second thread): 71-75 ms per step when the engine was
built on the main thread, 30-33 ms when it was built on a thread that had ended (the same as
building and stepping on one thread, 32-41 ms). When the thread ends, libgomp releases its pool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_on_setup_thread(work: Callable[[], T], name: str = "EngineSetup") -> T:
    """Return `work()` computed on a new thread that has ended by the time this returns; its
    exception, if any, is raised here (with its own traceback)."""
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
