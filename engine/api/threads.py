"""How many threads the engine computes with on a CPU, step by step, and why that many.

Why not one thread per core: the engine's threads meet at a barrier in every layer, so one
descheduled thread stalls them all, and beside the engine the HTTP loop, the tokenizer and often
the load generator want a core too. With many requests in flight a step is a GEMM bound by
arithmetic, and every core pays. With few, a decode step is a matrix-vector pass bound by how fast
the weights are read, and whether the last core pays depends on the machine: where one core less
already reads the memory at full speed, the spare core is worth more to the server (a 2-core AMD
EPYC: ITL p50 at one stream 41-45 ms with one thread, 50-67 ms with two); where each core reads at
its own limit, it is not (a 2-core Intel Xeon VM: a one-row pass over SmolLM2's weights 46 ms on
one thread, 30 ms on two; at four streams 65-72 tok/s with two threads against 48 with one). So
the engine times that pass at start-up on both counts and keeps the last core for few requests
only when it speeds the pass up by ALL_CORES_MIN_SPEEDUP or more (docs/engine.md, "CPU threads").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

# Up to this many requests in flight a decode step is a pass over the weights, bound by memory.
MEMORY_BOUND_REQUESTS = 4
# The last core joins memory-bound steps only when it makes the weight pass this much faster: below
# that, what it takes from the HTTP loop and the load generator outweighs the step it saves.
ALL_CORES_MIN_SPEEDUP = 1.3


class ThreadPolicy(BaseModel):
    """Threads for the next engine step, given the requests in flight (fixed when the user chose)."""

    few: int = Field(ge=1, description="threads while at most MEMORY_BOUND_REQUESTS requests are in flight")
    many: int = Field(ge=1, description="threads above that")
    why: str

    def threads_for(self, in_flight: int) -> int:
        return self.few if in_flight <= MEMORY_BOUND_REQUESTS else self.many

    def describe(self) -> str:
        if self.few == self.many:
            return f"{self.few} ({self.why}; --cpu-threads N fixes it)"
        return (
            f"{self.few} with up to {MEMORY_BOUND_REQUESTS} requests in flight, {self.many} above ({self.why}; "
            f"--cpu-threads N fixes it)"
        )


def engine_threads(
    requested: int | None, weight_pass_s: Callable[[Sequence[int]], dict[int, float]] | None = None
) -> ThreadPolicy:
    """--cpu-threads, else $OMP_NUM_THREADS (fixed), else every usable core for many requests and, for
    few, every core or one less, whichever the measured `weight_pass_s((spare, cores))` favours (one
    less when there is nothing to measure with)."""
    if requested:
        return ThreadPolicy(few=requested, many=requested, why="--cpu-threads")
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return ThreadPolicy(few=int(env), many=int(env), why="OMP_NUM_THREADS")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    spare = max(1, cores - 1)
    if spare == cores or weight_pass_s is None:
        return ThreadPolicy(few=spare, many=cores, why=f"{cores} usable cores")
    timed = weight_pass_s((spare, cores))
    with_spare, with_all = timed[spare], timed[cores]
    speedup = with_spare / with_all
    few = cores if speedup >= ALL_CORES_MIN_SPEEDUP else spare
    return ThreadPolicy(
        few=few,
        many=cores,
        why=(
            f"{cores} usable cores; a one-row pass over the weights took {with_spare * 1e3:.1f} ms on {spare} "
            f"thread(s), {with_all * 1e3:.1f} ms on {cores}: {speedup:.2f}x, "
            f"{'at or above' if few == cores else 'below'} the {ALL_CORES_MIN_SPEEDUP}x that pays for the last core"
        ),
    )
