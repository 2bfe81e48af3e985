"""How long the server's idle OpenMP threads spin before they sleep: set before PyTorch loads libgomp.

PyTorch's CPU wheel runs its parallel regions, and the native kernels theirs, on GNU libgomp. A
thread that has finished its share of a region spins for a number of turns, then sleeps on a futex
until the next region wakes it (GCC's libgomp manual, "GOMP_SPINCOUNT" and "OMP_WAIT_POLICY").
A decode step opens about 150 regions (SmolLM2: four GEMMs and one attention per layer, 30
layers, counted with an LD_PRELOAD shim on `GOMP_parallel`) with Python in between, so what a step
pays depends on whether the partner thread is still spinning when the next region opens.

- Never spinning (`OMP_WAIT_POLICY=PASSIVE`, this server's default before) makes every region wake
  a sleeping thread. In process, a 16-sequence decode step took 124-133 ms that way against 80-84 ms
  with libgomp's default spin and 95-98 ms with 10,000 turns (2-core AMD EPYC, AVX2, two threads).
- Spinning without bound (`ACTIVE`) keeps an idle pool's threads on the cores the HTTP loop and the
  load generator need.
- A bounded spin, SERVER_SPIN_COUNT turns, keeps the partner thread through the gaps inside a step
  and lets it sleep soon after the step ends. Served, with the engine built on a setup thread
  (engine/api/setup_thread.py: without that, libgomp cut every spin to 100 turns and no setting
  here mattered), 10,000 turns and libgomp's default 300,000 measured alike: 1 / 4 / 16 short
  streams 25-27 / 60 / 86-91 tok/s against PASSIVE's 17 / 39-43 / 72-80, ITL p50 at 16 streams
  116-117 ms against 144-147 (BENCHMARKS.md, "OpenMP pools and spin"). The bounded one is kept:
  it leaves the cores sooner when the engine idles.

The setting is read once, when libgomp initialises, so it must be in the environment before
`import torch`; `python -m engine serve` calls `apply_server_wait_policy` before it imports the
server. A user's own `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` always wins.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping

WAIT_POLICY_ENV = "OMP_WAIT_POLICY"
SPIN_COUNT_ENV = "GOMP_SPINCOUNT"
SERVER_SPIN_COUNT = "10000"


def apply_server_wait_policy(environ: MutableMapping[str, str]) -> str:
    """Set `GOMP_SPINCOUNT=SERVER_SPIN_COUNT` in `environ` unless the user chose a wait policy or
    spin count, or PyTorch (and with it libgomp) is already loaded; returns the line the server logs."""
    chosen = {name: environ[name] for name in (WAIT_POLICY_ENV, SPIN_COUNT_ENV) if environ.get(name, "").strip()}
    if chosen:
        settings = ", ".join(f"{name}={value}" for name, value in chosen.items())
        return f"OpenMP wait: {settings} from the environment"
    if "torch" in sys.modules:
        return (
            f"OpenMP wait: libgomp's default (PyTorch was loaded before the server could set "
            f"{SPIN_COUNT_ENV}={SERVER_SPIN_COUNT})"
        )
    environ[SPIN_COUNT_ENV] = SERVER_SPIN_COUNT
    return (
        f"OpenMP wait: {SPIN_COUNT_ENV}={SERVER_SPIN_COUNT} (an idle compute thread spins through the gaps "
        f"inside a step, then sleeps; set {WAIT_POLICY_ENV} or {SPIN_COUNT_ENV} to choose otherwise)"
    )
