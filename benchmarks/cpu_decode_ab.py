"""A/B in one run: the native CPU decode kernel vs the PyTorch decode twin.

    .venv/bin/python benchmarks/cpu_decode_ab.py                  # kernel + engine, SmolLM2
    .venv/bin/python benchmarks/cpu_decode_ab.py --skip-engine    # kernel only (seconds)

Kernel: one decode step of SmolLM2's attention shapes (9 query / 3 KV heads, head_dim 64,
block 16) over every layer, `--batch` sequences with contexts drawn from 40–380 tokens, blocks
shuffled over a pool allocated as the engine allocates it (huge pages, tuned malloc). The twin
gets its gather plan built once per step, as in the engine. Engine: the same `LLM` generating the
seeded benchmark workload (engine_throughput.make_workload) with SERVOPS_ATTENTION_BACKEND=torch
(baseline) and =cpu, alternating, so both see the same machine load. Prints the ratios and
writes JSON (`--json`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

import torch

from engine_throughput import make_workload

from engine.cpu_memory import advise_huge_pages, tune_glibc_malloc
from engine.default_model import ensure_default_model
from engine.llm import LLM
from engine.sampling_params import SamplingParams
from kernels import cpu_decode, torch_decode
from kernels.attention import BACKEND_ENV

HEADS, KV_HEADS, HEAD_DIM, BLOCK, LAYERS = 9, 3, 64, 16, 30


def decode_step_inputs(batch: int, dtype: torch.dtype, seed: int = 0):
    rng = random.Random(seed)
    lens = torch.tensor([rng.randint(40, 380) for _ in range(batch)], dtype=torch.int32)
    blocks = (lens + BLOCK - 1) // BLOCK
    num_blocks = int(blocks.sum()) + 8
    order = torch.randperm(num_blocks, generator=torch.Generator().manual_seed(seed))
    tables = torch.zeros(batch, int(blocks.max()), dtype=torch.int32)
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
    query = torch.randn(batch, HEADS, HEAD_DIM).to(dtype)
    return query, caches[0], caches[1], tables, lens


def bench_kernel(batch: int, dtype: torch.dtype, repeats: int) -> dict:
    query, k_cache, v_cache, tables, lens = decode_step_inputs(batch, dtype)
    scale = HEAD_DIM ** -0.5

    def twin_step():
        plan = torch_decode.plan_decode(tables, lens, k_cache)
        for _ in range(LAYERS):
            torch_decode.paged_decode_attention(query, k_cache, v_cache, tables, lens, scale, plan=plan)

    def native_step():
        for _ in range(LAYERS):
            cpu_decode.paged_decode_attention(query, k_cache, v_cache, tables, lens, scale)

    error = (cpu_decode.paged_decode_attention(query, k_cache, v_cache, tables, lens, scale).float()
             - torch_decode.paged_decode_attention(query, k_cache, v_cache, tables, lens, scale).float()).abs().max()
    times = {"twin": [], "native": []}
    for _ in range(repeats):  # alternate, so both see the same load
        for name, step in (("twin", twin_step), ("native", native_step)):
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    best = {name: min(values) for name, values in times.items()}
    kv_bytes = int(lens.sum()) * KV_HEADS * HEAD_DIM * k_cache.element_size() * 2 * LAYERS
    return {"batch": batch, "dtype": str(dtype).removeprefix("torch."), "kv_gib_per_step": kv_bytes / 2**30,
            "twin_s": best["twin"], "native_s": best["native"], "ratio": best["twin"] / best["native"],
            "native_gb_per_s": kv_bytes / best["native"] / 1e9, "max_abs_diff": float(error)}


def bench_engine(num_requests: int, rounds: int) -> dict:
    llm = LLM(str(ensure_default_model()), dtype="float32", max_model_len=512, max_num_seqs=256,
              max_num_batched_tokens=2048)
    workload = make_workload(num_requests, 49152, 0)
    prompts = [p for p, _ in workload]
    params = [SamplingParams(temperature=0, max_tokens=n, ignore_eos=True) for _, n in workload]
    useful = sum(n for _, n in workload)
    runs: dict[str, list[float]] = {"torch": [], "cpu": []}
    outputs = {}
    try:
        for round_index in range(rounds):
            for backend in runs:
                os.environ[BACKEND_ENV] = backend
                start = time.perf_counter()
                outputs[backend] = [o.output_token_ids for o in llm.generate(prompts, params, use_tqdm=False)]
                runs[backend].append(useful / (time.perf_counter() - start))
                print(f"round {round_index}, {backend}: {runs[backend][-1]:.1f} useful tok/s", flush=True)
    finally:
        os.environ.pop(BACKEND_ENV, None)
    same = sum(a == b for a, b in zip(outputs["torch"], outputs["cpu"]))
    return {"num_requests": num_requests, "tokens_per_s": runs, "ratio_of_best": max(runs["cpu"]) / max(runs["torch"]),
            "requests_with_identical_tokens": same}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=240, help="sequences in the kernel step (240)")
    parser.add_argument("--repeats", type=int, default=5, help="kernel steps per side, best kept (5)")
    parser.add_argument("--num-requests", type=int, default=96, help="requests per engine run (96)")
    parser.add_argument("--rounds", type=int, default=2, help="engine A/B rounds (2)")
    parser.add_argument("--skip-engine", action="store_true", help="kernel only")
    parser.add_argument("--json", default=None, help="write the results here as JSON")
    args = parser.parse_args(argv)
    if not cpu_decode.available():
        raise SystemExit(f"the native CPU decode kernel does not build here: {cpu_decode.unavailable_reason()}")
    tune_glibc_malloc()
    result: dict = {"threads": torch.get_num_threads(), "kernel": []}
    for dtype in (torch.float32, torch.bfloat16):
        row = bench_kernel(args.batch, dtype, args.repeats)
        result["kernel"].append(row)
        print(f"kernel, {row['dtype']}, {row['batch']} sequences x {LAYERS} layers: twin {row['twin_s'] * 1e3:.0f} ms, "
              f"native {row['native_s'] * 1e3:.0f} ms ({row['native_gb_per_s']:.1f} GB/s of K/V) "
              f"-> {row['ratio']:.2f}x", flush=True)
    if not args.skip_engine:
        result["engine"] = bench_engine(args.num_requests, args.rounds)
        print(f"engine, best of {args.rounds}: cpu / torch = {result['engine']['ratio_of_best']:.2f}x; "
              f"{result['engine']['requests_with_identical_tokens']}/{args.num_requests} requests token-identical")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
