"""A/B in one process: the native CPU kernels built for 16 lanes (AVX-512) vs the same source built for 8 (AVX2).

    .venv/bin/python benchmarks/cpu_lanes_ab.py [--skip-engine] [--json out.json]

Both sides are the same source files: the libraries the engine loads (`-march=native`, which on an
AVX-512 CPU compiles the 16-lane paths) and a second build of each with `-mno-avx512f` (the 8-lane
paths only, what the code ran before the 16-lane paths existed, and what an AVX2-only CPU runs).
Three measurements, each side alternating (wide, narrow, narrow, wide, ...), minimum of each side:

1. the layer ops in bfloat16 (SiLU-and-multiply, the fused residual-add RMSNorm, RoPE) at SmolLM2's
   widths over 64 and 512 rows, on 1 and 2 threads, same inputs on both sides;
2. decode attention, SmolLM2's heads (9 query over 3 KV, head_dim 64), bf16, 64 sequences of 130
   tokens, over 30 layers' caches so that the keys and values come from memory as in the engine
   (one layer's cache stays in L3 and flatters the kernel), 2 threads;
3. whole decode steps of one `LLMEngine` (SmolLM2, bf16, prefix caching off, 64 requests of 100
   seeded random tokens), 30 steps timed after 4, with both libraries swapped between sides.

The swap replaces the loaded library the kernels' Python wrappers call (their `NativeLibrary`'s
cached load), so every other part of the engine is the same object on both sides. On a CPU without
AVX-512 there is nothing to compare: the script says so and exits 0. Not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import random
import statistics
import time

import torch
from cpu_attention_ab import HEAD_DIM, HEADS, KV_HEADS, SCALE, paged_inputs

from servops_kernels import cpu_attention, cpu_build, cpu_gemm, cpu_layer_ops

NARROW_FLAG = "-mno-avx512f"
HIDDEN, INTERMEDIATE = 576, 1536  # SmolLM2-135M's (its attention shapes come with cpu_attention_ab)
SIDES = ("16 lanes", "8 lanes")


def both_builds(native: cpu_build.NativeLibrary) -> dict[str, ctypes.CDLL]:
    """By side: the build the engine loads (16 lanes on this CPU) and the same source without AVX-512."""
    return {SIDES[0]: native.library(), SIDES[1]: native.build((NARROW_FLAG,))}


@contextlib.contextmanager
def loaded(native: cpu_build.NativeLibrary, library: ctypes.CDLL):
    """Make `native`'s wrappers call `library` for the duration (the cached load is replaced, then restored)."""
    saved = native._loaded
    native.__dict__["_loaded"] = (library, "")
    try:
        yield
    finally:
        native.__dict__["_loaded"] = saved


def mean_us(function, repeats: int) -> float:
    """Microseconds a call of `function` takes, averaged over `repeats` calls after three warm-up
    calls (the minimum is taken later, over the rounds of each side)."""
    for _ in range(3):
        function()
    start = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - start) / repeats * 1e6


def alternate(sides: dict, measure, rounds: int) -> dict[str, list[float]]:
    """measure(side) per side in the order wide, narrow, narrow, wide, ... for `rounds` pairs."""
    names = list(sides)
    readings: dict[str, list[float]] = {name: [] for name in names}
    for k in range(rounds):
        for name in names if k % 2 == 0 else names[::-1]:
            readings[name].append(measure(name))
    return readings


def layer_op_calls(rows: int) -> dict:
    """One call of each bf16 layer op over `rows` rows of SmolLM2's widths, on inputs made here."""
    gate_up = torch.randn(rows, 2 * INTERMEDIATE).bfloat16()
    hidden, residual = torch.randn(rows, HIDDEN).bfloat16(), torch.randn(rows, HIDDEN).bfloat16()
    weight = torch.ones(HIDDEN).bfloat16()
    qkv = torch.randn(rows, (HEADS + 2 * KV_HEADS) * HEAD_DIM).bfloat16()
    # a norm-preserving rotation, so repeating it in place neither grows nor underflows the values
    cos, sin = torch.full((rows, HEAD_DIM), 0.6).bfloat16(), torch.full((rows, HEAD_DIM), 0.8).bfloat16()

    def add_and_norm():
        residual.mul_(0.5)  # the residual add grows it: keep it in range across repeats
        cpu_layer_ops.fused_add_rms_norm(hidden, residual, weight, 1e-5)

    return {
        "silu_and_mul": lambda: cpu_layer_ops.silu_and_mul(gate_up),
        "fused_add_rms_norm": add_and_norm,
        "rotary_embedding": lambda: cpu_layer_ops.rotary_embedding(qkv, HEADS + KV_HEADS, HEAD_DIM, cos, sin),
    }


def timed_on(native: cpu_build.NativeLibrary, libraries: dict, call, repeats: int):
    """measure(side): mean_us of `call` with `native`'s wrappers on that side's library."""

    def measure(side: str) -> float:
        with loaded(native, libraries[side]):
            return mean_us(call, repeats)

    return measure


def layer_ops(libraries: dict, rounds: int) -> list[dict]:
    rows_out = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for rows in (64, 512):
            for op, call in layer_op_calls(rows).items():
                measure = timed_on(cpu_layer_ops._NATIVE, libraries, call, 200 if rows == 64 else 40)
                rows_out.append(
                    _row({"op": op, "rows": rows, "threads": threads}, alternate(libraries, measure, rounds))
                )
    return rows_out


def decode_attention(libraries: dict, rounds: int, sequences: int = 64, context: int = 130, layers: int = 30) -> dict:
    caches = [paged_inputs([context] * sequences, torch.bfloat16, seed=layer) for layer in range(layers)]
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(sequences, HEADS, HEAD_DIM, generator=generator).bfloat16()
    torch.set_num_threads(2)

    def every_layer():
        for k_cache, v_cache, tables, lens in caches:
            cpu_attention.paged_decode_attention(query, k_cache, v_cache, tables, lens, SCALE)

    outputs = {}
    for side in libraries:
        with loaded(cpu_attention._NATIVE, libraries[side]):
            outputs[side] = cpu_attention.paged_decode_attention(query, *caches[0], SCALE).float()
    wide, narrow = (outputs[s] for s in SIDES)
    difference = float((wide - narrow).abs().max() / narrow.abs().max())
    readings = alternate(libraries, timed_on(cpu_attention._NATIVE, libraries, every_layer, 5), rounds)
    per_layer = {side: [us / layers for us in values] for side, values in readings.items()}
    row = _row({"op": "paged_decode_attention per layer", "rows": sequences, "threads": 2}, per_layer)
    row["max_relative_difference"] = difference
    return row


def engine_steps(layer_libraries: dict, attention_libraries: dict, rounds: int, batch: int = 64) -> dict:
    from engine.core.config import EngineConfig
    from engine.core.llm_engine import LLMEngine
    from engine.core.sampling_params import SamplingParams
    from engine.model.default_model import ensure_default_model

    torch.set_num_threads(2)
    engine = LLMEngine(
        EngineConfig(
            model=str(ensure_default_model()), dtype="bfloat16", max_model_len=2048, enable_prefix_caching=False
        )
    )
    rng = random.Random(0)

    def measure(side):
        with (
            loaded(cpu_layer_ops._NATIVE, layer_libraries[side]),
            loaded(cpu_attention._NATIVE, attention_libraries[side]),
        ):
            params = SamplingParams(temperature=0.0, max_tokens=40, ignore_eos=True)
            for index in range(batch):
                engine.add_request(
                    f"{side}-{rng.random()}-{index}", [rng.randrange(1000, 40000) for _ in range(100)], params
                )
            for _ in range(4):  # the prefill and warm-up steps
                engine.step()
            times = []
            for _ in range(30):
                start = time.perf_counter()
                engine.step()
                times.append(time.perf_counter() - start)
            while engine.has_unfinished_requests():
                engine.step()
            return statistics.median(times) * 1e3

    readings = alternate(layer_libraries, measure, rounds)
    return _row({"op": "engine decode step (ms, median of 30)", "rows": batch, "threads": 2}, readings)


def _row(what: dict, readings: dict[str, list[float]]) -> dict:
    wide, narrow = (min(readings[s]) for s in SIDES)
    return {**what, "readings": readings, "best": {"16 lanes": wide, "8 lanes": narrow}, "speedup": narrow / wide}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4, help="runs per side, alternating (default 4)")
    parser.add_argument("--skip-engine", action="store_true", help="kernels only, no engine decode steps")
    parser.add_argument("--json", default=None, help="write the results here as JSON")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more runs per side")
    if cpu_gemm.eight_lanes():
        print("cpu_lanes_ab: this CPU has no AVX-512, so the kernels run 8 lanes only: nothing to compare")
        return 0
    for native in (cpu_layer_ops._NATIVE, cpu_attention._NATIVE):
        if not native.available():
            raise SystemExit(f"cpu_lanes_ab: {native.source_name} does not build here: {native.unavailable_reason()}")
    layer_libraries, attention_libraries = both_builds(cpu_layer_ops._NATIVE), both_builds(cpu_attention._NATIVE)
    rows = [*layer_ops(layer_libraries, args.rounds), decode_attention(attention_libraries, args.rounds)]
    if not args.skip_engine:
        rows.append(engine_steps(layer_libraries, attention_libraries, args.rounds))
    for row in rows:
        unit = "ms" if row["op"].startswith("engine") else "us"
        wide, narrow = row["best"]["16 lanes"], row["best"]["8 lanes"]
        print(
            f"{row['op']:40s} rows {row['rows']:4d} threads {row['threads']}: 16 lanes {wide:8.1f} {unit}, "
            f"8 lanes {narrow:8.1f} {unit}: {row['speedup']:.2f}x"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"rows": rows, "threads_available": torch.get_num_threads()}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
