"""Advisor memory model vs vLLM's published figures: predicted / published, one row per figure.

The baseline is each figure as vLLM printed it (docs/reference.md §4.1, docs/reference.md §2.6, and
public logs named below); the ratio says how far the model is off. Also times
`estimate_memory` against a baseline of building its `LaunchConfig`, so a change that makes the
call expensive for triage (which runs it per ConfigChange) shows up as a ratio.

Run: .venv/bin/python benchmarks/advisor_accuracy.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.catalog.vllm_versions import parse_version
from advisor.memory.budget import LaunchConfig, estimate_memory, max_len_for_kv_bytes
from advisor.memory.terms import GIB, activation_gib, weights_gib_per_gpu

H100 = resolve_gpu("H100-SXM-80GB")


def rows() -> list[tuple[str, float, float]]:
    """(what, published, predicted)."""
    llama8 = resolve_model("Llama-3.1-8B")
    old = estimate_memory(llama8, H100, LaunchConfig(gpu_memory_utilization=0.9, vllm_version="0.18"))
    tp2 = estimate_memory(
        resolve_model("Llama-3.3-70B"),
        H100,
        LaunchConfig(quantization="fp8", tensor_parallel_size=2, gpu_memory_utilization=0.9, vllm_version="0.19"),
    )
    v019 = parse_version("0.19")
    qwen3_moe = resolve_model("Qwen3-30B-A3B").model_copy(update={"max_position_embeddings": 262144})
    return [
        ("Llama-3.1-8B H100 util 0.90 KV pool GiB (older vLLM)", 51.38, old.kv_pool_gib),
        ("Llama-3.1-8B weights GiB", 14.99, weights_gib_per_gpu(llama8, 2, None, 1, 1)),
        ("Llama-3.1-8B fp8 weights GiB", 8.49, weights_gib_per_gpu(llama8, 2, "fp8", 1, 1)),
        ("Qwen2.5-7B weights GiB", 14.25, weights_gib_per_gpu(resolve_model("Qwen2.5-7B"), 2, None, 1, 1)),
        ("Llama-3.3-70B fp8 weights GiB", 67.72, weights_gib_per_gpu(resolve_model("Llama-3.3-70B"), 2, "fp8", 1, 1)),
        (
            "Qwen2.5-32B AWQ weights GiB (public log)",
            18.14,
            weights_gib_per_gpu(resolve_model("Qwen2.5-32B"), 2, "awq", 1, 1),
        ),
        ("Llama-3.1-8B activation GiB (0.19)", 1.89, activation_gib(llama8, 8192, 1024, 1, v019)),
        ("Qwen2.5-7B activation GiB (0.19)", 2.21, activation_gib(resolve_model("Qwen2.5-7B"), 8192, 1024, 1, v019)),
        ("Qwen3-8B activation GiB (0.19)", 2.21, activation_gib(resolve_model("Qwen3-8B"), 8192, 1024, 1, v019)),
        ("Mixtral activation GiB (0.19)", 1.21, activation_gib(resolve_model("Mixtral-8x7B"), 8192, 1024, 1, v019)),
        ("Llama-3.1-8B PP2 activation GiB", 1.10, activation_gib(llama8, 8192, 1024, 2, v019)),
        ("Llama-3.3-70B fp8 TP2 KV pool GiB (version/util assumed)", 32.0, tp2.kv_pool_gib),
        ("#34076 estimated max model length", 34736, max_len_for_kv_bytes(qwen3_moe, 3.18 * GIB, 98_304, 16, 8192)),
        (
            "Qwen2.5-32B-AWQ estimated max model length",
            2368,
            max_len_for_kv_bytes(resolve_model("Qwen2.5-32B"), 0.58 * GIB, 262_144, 16, 2048),
        ),
    ]


def timing() -> tuple[float, float]:
    """Microseconds per call: estimate_memory vs building its LaunchConfig (the baseline)."""
    model = resolve_model("Llama-3.1-70B")
    number = 2000
    baseline = timeit.timeit(lambda: LaunchConfig(tensor_parallel_size=4, max_model_len=32768), number=number)
    config = LaunchConfig(tensor_parallel_size=4, max_model_len=32768)
    estimate = timeit.timeit(lambda: estimate_memory(model, H100, config), number=number)
    return estimate / number * 1e6, baseline / number * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows as JSON to this path")
    args = parser.parse_args(argv)
    table = rows()
    print(f"{'figure':62} {'published':>10} {'predicted':>10} {'ratio':>7}")
    for what, published, predicted in table:
        print(f"{what:62} {published:>10.2f} {predicted:>10.2f} {predicted / published:>7.3f}")
    estimate_us, baseline_us = timing()
    print(
        f"\nestimate_memory {estimate_us:.0f} µs/call; LaunchConfig baseline {baseline_us:.1f} µs/call; "
        f"ratio {estimate_us / baseline_us:.0f}x"
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(
                {
                    "rows": [{"figure": w, "published": p, "predicted": q, "ratio": q / p} for w, p, q in table],
                    "estimate_us": estimate_us,
                    "baseline_us": baseline_us,
                },
                handle,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
