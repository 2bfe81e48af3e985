"""A/B in one run: the native CPU attention kernels vs the PyTorch twins.

    .venv/bin/python benchmarks/cpu_attention_ab.py                  # kernels + engine, SmolLM2
    .venv/bin/python benchmarks/cpu_attention_ab.py --skip-engine    # kernels only (seconds)

Kernels, on SmolLM2's attention shapes (9 query / 3 KV heads, head_dim 64, block 16), every
layer, caches allocated as the engine allocates them (huge pages, tuned malloc), blocks
shuffled over the pool:
- decode: one step of `--batch` sequences with contexts drawn from 40–380 tokens; the twin gets
  its gather plan built once per step, as in the engine;
- prefill of fresh prompts: one step's worth of chunks (2,048 tokens of prompts of 32–256
  tokens), and one 530-token prompt (engine_vs_vllm's long workload), in float32 and bfloat16,
  against one causal SDPA call per chunk, what the model does with fresh chunks of
  `servops_kernels.attention.dense_prefill_min_tokens` or more: a ratio below 1 (SDPA faster) is why
  long fresh chunks go dense on the native backend where the bf16 prefill does not run on the
  AMX tiles (`cpu_attention.bf16_prefill_units`, printed);
- prefill over a cached prefix: 103 new tokens after 921 cached ones (the prefix-caching
  benchmark's hit) against the paged-prefill twin.
Engine: the same `LLM` generating the seeded benchmark workload (engine_throughput.make_workload)
with SERVOPS_ATTENTION_BACKEND=torch (baseline) and =cpu, the order alternating round by round,
so both see the same machine load (`engine_ab`, shared with cpu_layer_ops_ab.py). Prints the ratios and writes
JSON (`--json`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import time

import torch
import torch.nn.functional as F
from engine_throughput import gemm_probe, make_workload

from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from engine.model.cpu_memory import advise_huge_pages, tune_glibc_malloc
from engine.model.default_model import ensure_default_model
from servops_kernels import cpu_attention, torch_decode, torch_ref
from servops_kernels.attention import BACKEND_ENV

HEADS, KV_HEADS, HEAD_DIM, BLOCK, LAYERS = 9, 3, 64, 16, 30
SCALE = HEAD_DIM**-0.5


def paged_inputs(context_lens: list[int], dtype: torch.dtype, seed: int = 0):
    """Caches holding random K/V for these contexts, blocks shuffled, allocated as the engine does."""
    lens = torch.tensor(context_lens, dtype=torch.int32)
    blocks = (lens + BLOCK - 1) // BLOCK
    num_blocks = int(blocks.sum()) + 8
    order = torch.randperm(num_blocks, generator=torch.Generator().manual_seed(seed))
    tables = torch.zeros(len(context_lens), int(blocks.max()), dtype=torch.int32)
    used = 0
    for row, count in enumerate(blocks.tolist()):
        tables[row, :count] = order[used : used + count]
        used += count
    caches = []
    for _ in range(2):
        cache = torch.empty(num_blocks, BLOCK, KV_HEADS, HEAD_DIM, dtype=dtype)
        advise_huge_pages(cache)
        cache.copy_(torch.randn(cache.shape))
        caches.append(cache)
    return caches[0], caches[1], tables, lens


def best_of(repeats: int, sides: dict) -> dict[str, float]:
    """Best wall time of each side over `repeats` rounds, sides alternating within a round."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, run in sides.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


def bench_decode(batch: int, dtype: torch.dtype, repeats: int) -> dict:
    rng = random.Random(0)
    k_cache, v_cache, tables, lens = paged_inputs([rng.randint(40, 380) for _ in range(batch)], dtype)
    query = torch.randn(batch, HEADS, HEAD_DIM).to(dtype)
    args = (query, k_cache, v_cache, tables, lens, SCALE)

    def twin():
        plan = torch_decode.plan_decode(tables, lens, k_cache)
        for _ in range(LAYERS):
            torch_decode.paged_decode_attention(*args, plan=plan)

    def native():
        for _ in range(LAYERS):
            cpu_attention.paged_decode_attention(*args)

    best = best_of(repeats, {"twin": twin, "native": native})
    kv_bytes = int(lens.sum()) * KV_HEADS * HEAD_DIM * k_cache.element_size() * 2 * LAYERS
    return {
        "case": f"decode, {batch} sequences",
        "dtype": str(dtype).removeprefix("torch."),
        "baseline": "twin (gather plan per step)",
        "baseline_s": best["twin"],
        "native_s": best["native"],
        "ratio": best["twin"] / best["native"],
        "native_kv_gb_per_s": kv_bytes / best["native"] / 1e9,
        "max_abs_diff": max_abs_diff(
            cpu_attention.paged_decode_attention(*args), torch_decode.paged_decode_attention(*args)
        ),
    }


def bench_fresh_prefill(dtype: torch.dtype, repeats: int, lengths: list[int] | None = None) -> dict:
    if lengths is None:
        rng = random.Random(1)
        lengths = []
        while sum(lengths) < 2048:
            lengths.append(min(rng.randint(32, 256), 2048 - sum(lengths)))
    k_cache, v_cache, tables, lens = paged_inputs(lengths, dtype, seed=1)
    tokens = sum(lengths)
    qkv = torch.randn(tokens, (HEADS + 2 * KV_HEADS) * HEAD_DIM).to(dtype)
    query, keys, values = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
    query = query.view(tokens, HEADS, HEAD_DIM)
    keys, values = keys.view(tokens, KV_HEADS, HEAD_DIM), values.view(tokens, KV_HEADS, HEAD_DIM)
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    torch_ref.reshape_and_cache(keys, values, k_cache, v_cache, _slots(tables, lens, cu))
    spans = list(zip(cu[:-1].tolist(), cu[1:].tolist(), strict=False))

    def sdpa_per_chunk():  # what engine/model/llama.py does with fresh chunks (PrefillSplit)
        out = torch.empty_like(query)
        for _ in range(LAYERS):
            for start, end in spans:
                out[start:end] = F.scaled_dot_product_attention(
                    query[None, start:end].transpose(1, 2),
                    keys[None, start:end].transpose(1, 2),
                    values[None, start:end].transpose(1, 2),
                    is_causal=True,
                    scale=SCALE,
                    enable_gqa=True,
                )[0].transpose(0, 1)
        return out

    def native():
        for _ in range(LAYERS):
            out = cpu_attention.paged_prefill_attention(query, k_cache, v_cache, tables, cu, lens, SCALE)
        return out

    best = best_of(repeats, {"sdpa": sdpa_per_chunk, "native": native})
    return {
        "case": f"prefill, {len(lengths)} fresh prompts, {tokens} tokens",
        "dtype": str(dtype).removeprefix("torch."),
        "baseline": "causal SDPA per chunk",
        "baseline_s": best["sdpa"],
        "native_s": best["native"],
        "ratio": best["sdpa"] / best["native"],
        "max_abs_diff": max_abs_diff(native(), sdpa_per_chunk()),
    }


def bench_cached_prefill(dtype: torch.dtype, repeats: int) -> dict:
    k_cache, v_cache, tables, lens = paged_inputs([1024], dtype, seed=2)
    query = torch.randn(103, HEADS, HEAD_DIM).to(dtype)
    cu = torch.tensor([0, 103], dtype=torch.int32)
    args = (query, k_cache, v_cache, tables, cu, lens, SCALE)

    def twin():
        for _ in range(LAYERS):
            torch_ref.paged_prefill_attention(*args)

    def native():
        for _ in range(LAYERS):
            cpu_attention.paged_prefill_attention(*args)

    best = best_of(repeats, {"twin": twin, "native": native})
    return {
        "case": "prefill, 103 new tokens over 921 cached",
        "dtype": str(dtype).removeprefix("torch."),
        "baseline": "paged-prefill twin",
        "baseline_s": best["twin"],
        "native_s": best["native"],
        "ratio": best["twin"] / best["native"],
        "max_abs_diff": max_abs_diff(
            cpu_attention.paged_prefill_attention(*args), torch_ref.paged_prefill_attention(*args)
        ),
    }


def _slots(tables: torch.Tensor, lens: torch.Tensor, cu: torch.Tensor) -> torch.Tensor:
    """Cache slots of each chunk's tokens (the last q_len positions of each context)."""
    slots = []
    for row, (start, end) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist(), strict=False)):
        positions = torch.arange(int(lens[row]) - (end - start), int(lens[row]))
        slots.append(tables[row, positions // BLOCK].long() * BLOCK + positions % BLOCK)
    return torch.cat(slots)


@contextlib.contextmanager
def attention_backend(name: str):
    """SERVOPS_ATTENTION_BACKEND=name for the duration (the engine reads it per call)."""
    before = os.environ.get(BACKEND_ENV)
    os.environ[BACKEND_ENV] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(BACKEND_ENV, None)
        else:
            os.environ[BACKEND_ENV] = before


def engine_ab(sides: dict, num_requests: int, rounds: int, dtype: str = "float32") -> dict:
    """The same `LLM` generating the seeded benchmark workload under each side's context
    (`sides`: name -> context-manager factory; the first is the baseline, the second the
    candidate), the order alternating round by round so both see the same machine drift.
    Returns each run's useful tok/s and GEMM probe, the ratio of best runs, and how many
    requests came out token-identical."""
    llm = LLM(
        str(ensure_default_model()), dtype=dtype, max_model_len=512, max_num_seqs=256, max_num_batched_tokens=2048
    )
    workload = make_workload(num_requests, 49152, 0)
    prompts = [p for p, _ in workload]
    params = [SamplingParams(temperature=0, max_tokens=n, ignore_eos=True) for _, n in workload]
    useful = sum(n for _, n in workload)
    baseline, candidate = sides
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    outputs = {}
    for round_index in range(rounds):
        for name in sides if round_index % 2 == 0 else reversed(list(sides)):
            with sides[name]():
                probe = gemm_probe()
                start = time.perf_counter()
                outputs[name] = [o.output_token_ids for o in llm.generate(prompts, params, use_tqdm=False)]
                runs[name].append({"tokens_per_s": useful / (time.perf_counter() - start), "probe_gflops": probe})
            print(
                f"round {round_index}, {name}: {runs[name][-1]['tokens_per_s']:.1f} useful tok/s "
                f"(GEMM probe {probe} GFLOP/s)",
                flush=True,
            )
    best = {name: max(r["tokens_per_s"] for r in values) for name, values in runs.items()}
    same = sum(a == b for a, b in zip(outputs[baseline], outputs[candidate], strict=False))
    ratio = best[candidate] / best[baseline]
    print(
        f"engine, best of {rounds} rounds: {candidate} / {baseline} = {ratio:.2f}x; "
        f"{same}/{num_requests} requests token-identical",
        flush=True,
    )
    return {
        "num_requests": num_requests,
        "dtype": dtype,
        "runs": runs,
        "ratio_of_best": ratio,
        "requests_with_identical_tokens": same,
    }


def ab_arguments(
    description: str, *, repeats: int, num_requests: int, rounds: int, measured: str
) -> argparse.ArgumentParser:
    """The flags every CPU A/B script shares (`finish_ab` reads them); the script adds its own."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=repeats, help=f"timed calls per side, best kept ({repeats})")
    parser.add_argument(
        "--num-requests", type=int, default=num_requests, help=f"requests per engine run ({num_requests})"
    )
    parser.add_argument("--rounds", type=int, default=rounds, help=f"engine A/B rounds, order alternating ({rounds})")
    parser.add_argument("--skip-engine", action="store_true", help=f"{measured} only, no engine A/B")
    parser.add_argument("--json", default=None, help="write the results here as JSON")
    return parser


def finish_ab(result: dict, args: argparse.Namespace, sides: dict, dtype: str = "float32") -> dict:
    """The common tail of the CPU A/B scripts: the engine A/B of `sides` unless --skip-engine,
    then the JSON file."""
    if not args.skip_engine:
        result["engine"] = engine_ab(sides, args.num_requests, args.rounds, dtype)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = ab_arguments(__doc__, repeats=5, num_requests=96, rounds=2, measured="kernels")
    parser.add_argument("--batch", type=int, default=240, help="sequences in the decode step (240)")
    args = parser.parse_args(argv)
    if not cpu_attention.available():
        raise SystemExit(f"the native CPU attention kernels do not build here: {cpu_attention.unavailable_reason()}")
    tune_glibc_malloc()
    units = cpu_attention.bf16_prefill_units(HEAD_DIM)
    print(f"bf16 prefill on: {units}; {torch.get_num_threads()} threads", flush=True)
    result: dict = {"threads": torch.get_num_threads(), "bf16_prefill_units": units, "kernels": []}
    cases = [
        lambda: bench_decode(args.batch, torch.float32, args.repeats),
        lambda: bench_decode(args.batch, torch.bfloat16, args.repeats),
        lambda: bench_fresh_prefill(torch.float32, args.repeats),
        lambda: bench_fresh_prefill(torch.bfloat16, args.repeats),
        lambda: bench_fresh_prefill(torch.float32, args.repeats, [530]),
        lambda: bench_fresh_prefill(torch.bfloat16, args.repeats, [530]),
        lambda: bench_cached_prefill(torch.float32, args.repeats),
    ]
    for case in cases:
        row = case()
        result["kernels"].append(row)
        print(
            f"{row['case']}, {row['dtype']}, {LAYERS} layers: {row['baseline']} {row['baseline_s'] * 1e3:.0f} ms, "
            f"native {row['native_s'] * 1e3:.0f} ms -> {row['ratio']:.2f}x (max abs diff {row['max_abs_diff']:.1e})",
            flush=True,
        )
    sides = {backend: functools.partial(attention_backend, backend) for backend in ("torch", "cpu")}
    return finish_ab(result, args, sides)


if __name__ == "__main__":
    main()
