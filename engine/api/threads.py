"""How many threads the engine computes with on a CPU, step by step, and why that many.

Why not one thread per core: the engine's threads meet at a barrier in every layer, so one
descheduled thread stalls them all, and beside the engine the HTTP loop, the tokenizer and often
the load generator want a core too. A step that computes many rows (tokens: a prompt chunk, or
many sequences decoding) is a GEMM bound by arithmetic, and every core pays. A step of a few rows
(up to servops_kernels.cpu_gemm.MEMORY_BOUND_ROWS: a decode of a few sequences) is a matrix-vector pass
bound by how fast the weights are read, and whether the last core pays depends on the machine: where
one core less already reads the memory at full speed, it does not; where each core reads at its own
limit, it does (a 2-core Intel Xeon VM: a one-row pass over SmolLM2's weights 46 ms on one thread,
30 ms on two; at four streams 65-72 tok/s with two threads against 48 with one). So the engine
times that pass at start-up on both counts, on the thread setup that the steps will see
(engine/api/setup_thread.py, engine/api/omp_wait.py), and keeps the last core from few-row steps
only when it speeds the pass up by less than ALL_CORES_MIN_SPEEDUP (docs/engine.md, "CPU threads").

What the spare core is worth to the server is small: under 16 streams the HTTP loop used 3 % of a
core and the load generator 1 % (per-thread CPU time from /proc, 2-core AMD EPYC). An earlier
threshold of 1.3x came from servers whose idle main-thread OpenMP pool made libgomp cut every spin
to 100 turns, so two threads lost served what they won in the timing; with that pool gone, a
2-core AMD EPYC whose pass ran 1.47-1.52x faster on two threads served one stream at 25-27 tok/s
(ITL p50 35-36 ms) with two and 17-19 tok/s (47-55 ms) with one.

Why rows and not requests in flight: a lone long prompt is one request, yet its prefill is a GEMM of
hundreds of rows. Keyed on requests, a server whose start-up timing kept a core back prefilled a
521-token prompt on one thread in 0.55-0.66 s, against 0.19-0.27 s on two in one engine process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from servops_kernels.cpu_gemm import MEMORY_BOUND_ROWS

# The last core joins memory-bound steps only when it makes the weight pass this much faster: below
# that, the gain is within the timing's noise and the core is left to the HTTP loop.
ALL_CORES_MIN_SPEEDUP = 1.1


class ThreadPolicy(BaseModel):
    """Threads for an engine step, given the rows (tokens) it computes (fixed when the user chose)."""

    few: int = Field(ge=1, description="threads for a step of at most MEMORY_BOUND_ROWS rows")
    many: int = Field(ge=1, description="threads above that")
    why: str

    def threads_for(self, rows: int) -> int:
        return self.few if rows <= MEMORY_BOUND_ROWS else self.many

    def describe(self) -> str:
        if self.few == self.many:
            return f"{self.few} ({self.why}; --cpu-threads N fixes it)"
        return (
            f"{self.few} for steps of up to {MEMORY_BOUND_ROWS} tokens, {self.many} above ({self.why}; "
            f"--cpu-threads N fixes it)"
        )


def engine_threads(
    requested: int | None, weight_pass_s: Callable[[Sequence[int]], dict[int, float]] | None = None
) -> ThreadPolicy:
    """--cpu-threads, else $OMP_NUM_THREADS (fixed), else every usable core for many rows and, for
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
