"""How many threads the engine computes with on a CPU, and why that many.

Why one core is left out by default: the engine's threads meet at a barrier in every layer, so
one descheduled thread stalls them all; on a box where the HTTP loop, the tokenizer and often the
load generator want a core too, a thread per core makes every step wait on one of them (measured:
ITL p50 at one stream 50-67 ms with 2 threads on 2 cores, 41-45 ms with 1; docs/engine.md). vLLM's
CPU backend makes the same choice: it binds its engine to the cores minus a reserved one.
"""

from __future__ import annotations

import os


def engine_threads(requested: int | None) -> tuple[int, str]:
    """The engine's CPU thread count and where it came from: --cpu-threads, $OMP_NUM_THREADS, or the
    cores this process may use minus one (at least one)."""
    if requested:
        return requested, "--cpu-threads"
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env), "OMP_NUM_THREADS"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1), f"{cores} usable cores, one left for the server"
