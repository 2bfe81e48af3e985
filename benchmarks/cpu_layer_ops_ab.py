"""A/B in one run: the native CPU layer ops and the sliced LM head vs what they replaced.

    .venv/bin/python benchmarks/cpu_layer_ops_ab.py                  # ops, LM head, engine
    .venv/bin/python benchmarks/cpu_layer_ops_ab.py --skip-engine    # ops and LM head (seconds)

- Layer ops, on SmolLM2's shapes (hidden 576, 9/3 heads of 64, MLP 1,536): one decoder layer's
  elementwise work (two residual-add RMSNorms, RoPE on q and k, the KV write into random slots
  of a cache, SiLU-and-multiply) for a step of 64, 240 and 2,048 tokens, natively
  (`servops_kernels.layer_ops` on the cpu backend) against the PyTorch twins, times the 30 layers.
- LM head: the 49,152 x 576 head as one GEMM (`F.linear`, the baseline) against the 1,024-row
  slices `LlamaForCausalLM.compute_logits` uses on a CPU, at 16-240 rows; also checks the
  logits are bit-identical.
- Engine: the same `LLM` generating the seeded benchmark workload with the layer ops and LM
  head as before (twins, one GEMM: the baseline) and as now, alternating, native attention on
  both sides. The switch is made by patching this process's modules, which no user setting
  does; greedy tokens are compared.
Sides alternate and the best time of each is kept: the shared box's speed moves by 1.5x within
minutes. Prints the ratios and writes JSON (`--json`).
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from cpu_attention_ab import ab_arguments, best_of, finish_ab
from engine_throughput import gemm_probe

from engine.model import llama
from engine.model.cpu_memory import tune_glibc_malloc
from servops_kernels import attention, cpu_layer_ops, layer_ops

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE, VOCAB, LAYERS = 576, 9, 3, 64, 1536, 49152, 30


@contextlib.contextmanager
def baseline_layer_ops():
    """The layer as before: PyTorch twins for the norms, RoPE, SiLU and the KV write, and the
    LM head as one GEMM."""
    saved = (layer_ops._native, cpu_layer_ops.supports_cache_write, llama.LM_HEAD_SLICE)
    layer_ops._native = lambda *tensors: False
    cpu_layer_ops.supports_cache_write = lambda *tensors: False
    llama.LM_HEAD_SLICE = 1 << 30
    try:
        yield
    finally:
        layer_ops._native, cpu_layer_ops.supports_cache_write, llama.LM_HEAD_SLICE = saved


def bench_layer_ops(tokens: int, repeats: int) -> dict:
    gen = torch.Generator().manual_seed(tokens)
    weight = torch.randn(HIDDEN, generator=gen)
    k_cache = torch.zeros(4096, 16, KV_HEADS, HEAD_DIM)
    v_cache = torch.zeros_like(k_cache)
    qkv_width = (HEADS + 2 * KV_HEADS) * HEAD_DIM
    fixed = [
        torch.randn(tokens, 2 * INTERMEDIATE, generator=gen),
        torch.randn(tokens, HEAD_DIM, generator=gen),
        torch.randn(tokens, HEAD_DIM, generator=gen),
        torch.randperm(4096 * 16, generator=gen)[:tokens],
    ]
    fresh = [
        torch.randn(tokens, HIDDEN, generator=gen),
        torch.randn(tokens, HIDDEN, generator=gen),
        torch.randn(tokens, qkv_width, generator=gen),
    ]

    def layer():  # what one decoder layer does outside its GEMMs and attention
        x, residual, qkv = (t.clone() for t in fresh)  # the ops work in place; the copy is on both sides
        gate_up, cos, sin, slots = fixed
        h, residual = layer_ops.fused_add_rms_norm(x, residual, weight, 1e-5)
        _, k, v = layer_ops.rotary_embedding(qkv, cos, sin, HEADS, KV_HEADS, HEAD_DIM)
        attention.reshape_and_cache(k, v, k_cache, v_cache, slots)
        layer_ops.fused_add_rms_norm(h, residual, weight, 1e-5)
        layer_ops.silu_and_mul(gate_up)

    def twins():
        with baseline_layer_ops():
            layer()

    best = best_of(repeats, {"twins": twins, "native": layer})
    return {
        "case": f"layer ops, step of {tokens} tokens",
        "baseline": "twins",
        "baseline_s": best["twins"] * LAYERS,
        "native_s": best["native"] * LAYERS,
        "ratio": best["twins"] / best["native"],
    }


def bench_lm_head(rows: int, repeats: int) -> dict:
    gen = torch.Generator().manual_seed(rows)
    config = type(
        "SmolLM2Head",
        (),
        dict(
            vocab_size=VOCAB,
            hidden_size=HIDDEN,
            num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS,
            intermediate_size=INTERMEDIATE,
            num_hidden_layers=1,
            rms_norm_eps=1e-5,
            tie_word_embeddings=True,
        ),
    )()
    with torch.device("meta"):
        model = llama.LlamaForCausalLM(config)
    model.embed_tokens.to_empty(device="cpu")
    model.embed_tokens.weight.data.copy_(torch.randn(VOCAB, HIDDEN, generator=gen))
    hidden = torch.randn(rows, HIDDEN, generator=gen)
    with torch.inference_mode():
        best = best_of(
            repeats,
            {
                "one_gemm": lambda: F.linear(hidden, model.embed_tokens.weight),
                "slices": lambda: model.compute_logits(hidden),
            },
        )
        identical = torch.equal(model.compute_logits(hidden), F.linear(hidden, model.embed_tokens.weight))
    return {
        "case": f"LM head, {rows} rows",
        "baseline": "one GEMM",
        "baseline_s": best["one_gemm"],
        "native_s": best["slices"],
        "ratio": best["one_gemm"] / best["slices"],
        "bit_identical": identical,
    }


def main(argv: list[str] | None = None) -> dict:
    args = ab_arguments(__doc__, repeats=10, num_requests=64, rounds=4, measured="ops and LM head").parse_args(argv)
    if not cpu_layer_ops.available():
        raise SystemExit(f"the native CPU layer ops do not build here: {cpu_layer_ops.unavailable_reason()}")
    tune_glibc_malloc()
    result: dict = {"threads": torch.get_num_threads(), "probe_gflops": gemm_probe(), "cases": []}
    cases = [lambda t=t: bench_layer_ops(t, args.repeats) for t in (64, 240, 2048)]
    cases += [lambda r=r: bench_lm_head(r, args.repeats) for r in (16, 64, 128, 240)]
    for case in cases:
        row = case()
        result["cases"].append(row)
        extra = f", bit-identical: {row['bit_identical']}" if "bit_identical" in row else ""
        print(
            f"{row['case']}: {row['baseline']} {row['baseline_s'] * 1e3:.2f} ms, new {row['native_s'] * 1e3:.2f} ms "
            f"-> {row['ratio']:.2f}x{extra}",
            flush=True,
        )
    return finish_ab(result, args, {"before": baseline_layer_ops, "native": contextlib.nullcontext})


if __name__ == "__main__":
    main()
