"""The OpenMP wait policy the engine server runs with: set before PyTorch loads libgomp.

Why the server sets one: PyTorch's CPU wheel runs its parallel regions, and the native kernels
theirs, on GNU libgomp. With `OMP_WAIT_POLICY` unset, a libgomp thread that has finished its share
of a region keeps its core busy for 300,000 turns of a spin loop before it sleeps (GCC's libgomp
manual, "GOMP_SPINCOUNT" and "OMP_WAIT_POLICY"). A step runs hundreds of short regions with
Python in between, so the second compute thread spins through nearly the whole step, on the core
that the HTTP loop, the tokenizer and often the load generator need. Two things follow.

- In a server the spinning thread is preempted, and the next barrier waits for it: one stream's
  ITL p50 was 57-71 ms on two threads against a 38 ms step in process (2-core AMD EPYC, AVX2).
- The start-up timing that picks the thread count for few-row steps (engine/api/threads.py) ran
  in process, where spinning is free, so it saw two threads win (1.5-1.7x) where the server lost.

With `PASSIVE` an idle thread sleeps at once, so a region pays a wake-up instead (on that VM about
0.1 ms: the one-row pass took 28-37 ms on one thread, 42-71 ms on two), and the start-up timing
pays it too: it now keeps few-row steps on one thread there, which is what served best. A/B on
that box, short prompts, one run each in the order D C B D C B (BENCHMARKS.md, "OpenMP wait
policy"): passive with one thread for decode (B, what this gives) 19 tok/s at one stream, 44-48 at
four, 75-78 at sixteen; spinning with one thread for decode (D) 17-19, 36-43, 49-70; passive with
two (C) 11-14, 37-39, 81. The old default (spinning, two) gave 14-17 tok/s at one stream.

The setting is read once, when libgomp initialises, so it must be in the environment before
`import torch`; `python -m engine serve` calls `apply_server_wait_policy` before it imports the
server. A user's own `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` always wins.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping

WAIT_POLICY_ENV = "OMP_WAIT_POLICY"
SPIN_COUNT_ENV = "GOMP_SPINCOUNT"
SERVER_WAIT_POLICY = "PASSIVE"


def apply_server_wait_policy(environ: MutableMapping[str, str]) -> str:
    """Set `OMP_WAIT_POLICY=PASSIVE` in `environ` unless the user chose a wait policy or spin count,
    or PyTorch (and with it libgomp) is already loaded; returns the line the server logs."""
    chosen = {name: environ[name] for name in (WAIT_POLICY_ENV, SPIN_COUNT_ENV) if environ.get(name, "").strip()}
    if chosen:
        settings = ", ".join(f"{name}={value}" for name, value in chosen.items())
        return f"OpenMP wait: {settings} from the environment"
    if "torch" in sys.modules:
        return (
            f"OpenMP wait: libgomp's default (PyTorch was loaded before the server could set "
            f"{WAIT_POLICY_ENV}={SERVER_WAIT_POLICY})"
        )
    environ[WAIT_POLICY_ENV] = SERVER_WAIT_POLICY
    return (
        f"OpenMP wait: {WAIT_POLICY_ENV}={SERVER_WAIT_POLICY} (idle compute threads sleep instead of spinning "
        f"on the cores the HTTP loop needs; set {WAIT_POLICY_ENV} or {SPIN_COUNT_ENV} to choose otherwise)"
    )
