"""A/B in one run: the native bfloat16 linear layer against PyTorch's bf16 `F.linear`.

    .venv/bin/python benchmarks/cpu_gemm_ab.py                  # GEMMs, then the engine in bf16
    .venv/bin/python benchmarks/cpu_gemm_ab.py --skip-engine    # GEMMs only (about a minute)
    .venv/bin/python benchmarks/cpu_gemm_ab.py --skip-engine --rows 1,2,4,8,16 --layers 30
                                                  # decode-step shapes, weights streamed from memory

- GEMMs: SmolLM2's linear layers (fused qkv 960 x 576, o 576 x 576, fused gate/up 3,072 x
  576, down 576 x 1,536, the tied LM head 49,152 x 576) at the row counts the engine feeds
  them (1 for a lone decode, 16-240 for decode batches, 2,048 for a prompt step), bf16 weights
  and activations. Baseline: PyTorch's bf16 `F.linear` in the same run. Also timed, for
  scale, float32 `F.linear` on the same shapes: what the native kernel, doing float32 FMAs,
  can at best approach. Each case records how many outputs differ from PyTorch's bf16 result
  and by how much (one bf16 rounding of float32 sums taken in another order).
- Engine: the same bf16 `LLM` generating the seeded benchmark workload with the linear layers
  on PyTorch's bf16 path (the baseline, patched in this process only) and natively,
  alternating; greedy tokens are compared (bf16 sums in another order may flip a near-tie).
- Packed: where the CPU has bf16 arithmetic, also oneDNN on each weight packed once
  (servops_kernels/cpu_prepack.py, what the engine runs above 4 rows), against the same `F.linear`, and
  whether its products are bit-identical; without it, the float32 copy the engine keeps there
  (reordered once for oneDNN's float32 GEMM where oneDNN takes it, else a plain one for `F.linear`;
  activations widened and the result rounded to bf16: what it runs above `cpu_gemm.WIDENED_ROWS_MAX`
  rows), with its GFLOP/s beside the native kernel's.
Sides alternate and the best time of each is kept: the shared box's speed moves by 1.5x within
minutes. Prints the ratios and writes JSON (`--json`).
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from cpu_attention_ab import ab_arguments, best_of, finish_ab, max_abs_diff
from engine_throughput import gemm_probe

from engine.model.cpu_memory import tune_glibc_malloc
from servops_kernels import cpu_gemm, cpu_prepack, layer_ops

SHAPES = {"qkv": (960, 576), "o": (576, 576), "gate_up": (3072, 576), "down": (576, 1536), "lm_head": (49152, 576)}
CASES = [(name, rows) for name in ("qkv", "o", "gate_up", "down") for rows in (1, 16, 240, 2048)]
CASES += [("lm_head", rows) for rows in (1, 16, 240)]


@contextlib.contextmanager
def pytorch_bf16_linear():
    """The linear layers as before: PyTorch's bf16 `F.linear` (its software path on this CPU)."""
    saved = layer_ops._native_gemm
    layer_ops._native_gemm = lambda *tensors: False
    try:
        yield
    finally:
        layer_ops._native_gemm = saved


def bench_gemm(name: str, rows: int, repeats: int, layers: int = 1) -> dict:
    """Best time of one product per side; with `layers` > 1 each timed call goes through that many
    distinct weights of the shape (as a decode step goes through every layer's), so the weights come
    from memory rather than from a cache the previous call warmed. The LM head is one weight."""
    gen = torch.Generator().manual_seed(rows)
    cols, k = SHAPES[name]
    count = 1 if name == "lm_head" else layers
    x = torch.randn(rows, k, generator=gen).bfloat16()
    weights = [(torch.randn(cols, k, generator=gen) * k**-0.5).bfloat16() for _ in range(count)]
    x32, weights32 = x.float(), [w.float() for w in weights]
    sides = {
        "pytorch_bf16": lambda: [F.linear(x, w) for w in weights],
        "native": lambda: [cpu_gemm.linear(x, w) for w in weights],
        "pytorch_fp32": lambda: [F.linear(x32, w) for w in weights32],
    }
    packed = [cpu_prepack.pack(w) for w in weights] if cpu_prepack.wanted(x.device, x.dtype)[0] else []
    if packed:
        sides["packed"] = lambda: [cpu_prepack.linear(x, p) for p in packed]
    best = best_of(repeats, sides)
    best = {side: seconds / count for side, seconds in best.items()}
    weight = weights[0]
    ours, theirs = cpu_gemm.linear(x, weight), F.linear(x, weight)
    flops = 2 * rows * cols * k
    return {
        "case": f"{name} {cols}x{k}, {rows} rows" + (f", {count} weights streamed" if count > 1 else ""),
        "baseline": "PyTorch bf16 F.linear",
        "baseline_s": best["pytorch_bf16"],
        "native_s": best["native"],
        "float32_s": best["pytorch_fp32"],
        "ratio": best["pytorch_bf16"] / best["native"],
        "native_gflops": flops / best["native"] / 1e9,
        "native_weight_gbps": weight.numel() * weight.element_size() / best["native"] / 1e9,
        "baseline_weight_gbps": weight.numel() * weight.element_size() / best["pytorch_bf16"] / 1e9,
        "float32_gflops": flops / best["pytorch_fp32"] / 1e9,
        "outputs_differing": float((ours != theirs).float().mean()),
        "max_abs_diff": max_abs_diff(ours, theirs),
        # oneDNN on the weight packed once (servops_kernels/cpu_prepack.py), where this CPU gets it
        "packed_s": best.get("packed"),
        "packed_ratio": best["pytorch_bf16"] / best["packed"] if packed else None,
        "packed_identical": bool(torch.equal(cpu_prepack.linear(x, packed[0]), theirs)) if packed else None,
    }


def _packed_side() -> str:
    if cpu_prepack.reorders():
        return "packed oneDNN"
    return "float32 copy reordered for oneDNN" if cpu_prepack.reorders_float32() else "float32 copy"


def main(argv: list[str] | None = None) -> dict:
    parser = ab_arguments(__doc__, repeats=5, num_requests=32, rounds=2, measured="GEMMs")
    parser.add_argument("--max-rows", type=int, default=2048, help="skip GEMM cases with more rows (2048: none)")
    parser.add_argument(
        "--rows", default=None, help="comma-separated row counts for every shape instead of the engine's (1,2,4,8)"
    )
    parser.add_argument(
        "--layers",
        type=int,
        default=1,
        help="distinct weights per timed call (30 = SmolLM2's layers: a decode step's weights come from memory); "
        "1 times one weight, warm in cache",
    )
    args = parser.parse_args(argv)
    if args.layers < 1:
        parser.error(f"--layers {args.layers}: pass at least 1 (30 streams SmolLM2's layers from memory)")
    cases = CASES
    if args.rows:
        try:
            counts = [int(part) for part in args.rows.split(",")]
        except ValueError:
            parser.error(f"--rows {args.rows!r}: pass whole numbers separated by commas, e.g. 1,2,4,8")
        cases = [(name, rows) for name in SHAPES for rows in counts]
    if not cpu_gemm.available():
        raise SystemExit(f"the native bf16 GEMM does not build here: {cpu_gemm.unavailable_reason()}")
    tune_glibc_malloc()
    result: dict = {
        "threads": torch.get_num_threads(),
        "probe_gflops": gemm_probe(),
        "cpu_lacks_bf16": cpu_gemm.needed(),
        "cases": [],
    }
    for name, rows in [(name, rows) for name, rows in cases if rows <= args.max_rows]:
        row = bench_gemm(name, rows, args.repeats, args.layers)
        result["cases"].append(row)
        print(
            f"{row['case']}: {row['baseline']} {row['baseline_s'] * 1e3:.2f} ms, native {row['native_s'] * 1e3:.2f} ms "
            f"-> {row['ratio']:.2f}x ({row['native_gflops']:.0f} GFLOP/s, weights read at "
            f"{row['native_weight_gbps']:.1f} vs {row['baseline_weight_gbps']:.1f} GB/s; float32 F.linear "
            f"{row['float32_gflops']:.0f}); {row['outputs_differing']:.1%} of outputs differ, "
            f"max {row['max_abs_diff']:.3g}"
            + (
                f"; {_packed_side()} {row['packed_s'] * 1e3:.2f} ms -> {row['packed_ratio']:.2f}x F.linear, "
                f"{row['native_gflops'] * row['native_s'] / row['packed_s']:.0f} GFLOP/s"
                f"{', bit-identical' if row['packed_identical'] else ', DIFFERS'}"
                if row["packed_s"]
                else ""
            ),
            flush=True,
        )
    return finish_ab(
        result, args, {"pytorch_bf16": pytorch_bf16_linear, "native": contextlib.nullcontext}, dtype="bfloat16"
    )


if __name__ == "__main__":
    main()
