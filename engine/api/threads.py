"""How many threads the engine computes with on a CPU, step by step, and why that many.

Why not one thread per core: the engine's threads meet at a barrier in every layer, so one
descheduled thread stalls them all, and beside the engine the HTTP loop, the tokenizer and often
the load generator want a core too. With few requests in flight a decode step is a matrix-vector
pass bound by memory, which a second thread barely speeds up, so the engine leaves one core to the
rest (as vLLM's CPU backend always does: it binds its engine to the cores minus a reserved one).
With many in flight the step is a GEMM bound by arithmetic, and every core pays. Measured on the
2-core box (docs/engine.md): ITL p50 at one stream 50-67 ms with 2 threads, 41-45 ms with 1; at 16
streams 152 tok/s with 2 threads, 130 with 1.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

# Up to this many requests in flight the engine leaves one core to the server.
MEMORY_BOUND_REQUESTS = 4


class ThreadPolicy(BaseModel):
    """Threads for the next engine step, given the requests in flight (fixed when the user chose)."""

    few: int = Field(ge=1, description="threads while at most MEMORY_BOUND_REQUESTS requests are in flight")
    many: int = Field(ge=1, description="threads above that")
    why: str

    def threads_for(self, in_flight: int) -> int:
        return self.few if in_flight <= MEMORY_BOUND_REQUESTS else self.many

    def describe(self) -> str:
        if self.few == self.many:
            return f"{self.few} ({self.why})"
        return (
            f"{self.few} with up to {MEMORY_BOUND_REQUESTS} requests in flight, {self.many} above ({self.why}; "
            f"--cpu-threads N fixes it)"
        )


def engine_threads(requested: int | None) -> ThreadPolicy:
    """--cpu-threads, else $OMP_NUM_THREADS (fixed), else the usable cores minus one for few requests
    and all of them for many."""
    if requested:
        return ThreadPolicy(few=requested, many=requested, why="--cpu-threads")
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return ThreadPolicy(few=int(env), many=int(env), why="OMP_NUM_THREADS")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return ThreadPolicy(few=max(1, cores - 1), many=cores, why=f"{cores} usable cores")
