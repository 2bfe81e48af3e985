"""Paged-attention benchmark: decode and prefill, Triton against the PyTorch path, one run.

For each (batch size, context length) it times every backend asked for and reports:
- time per call (median of timed repeats),
- achieved bandwidth = bytes that must move (K and V of every context token, the queries and
  the outputs) / time, and its ratio to the device's copy bandwidth, measured in the same run
  by a large device-to-device copy (2 x size bytes per copy: one read, one write),
- the ratio of each backend's time to the PyTorch twin's (`torch`), the named baseline, and
  to `sdpa_dense` when it runs (the "prefill within 2x of PyTorch SDPA" goal reads it).

Backends: `torch` (servops_kernels.torch_ref: gather the blocks, then SDPA, what CPU runs),
`triton` (servops_kernels.paged_decode / paged_prefill), and `sdpa_dense` (PyTorch SDPA over keys
and values already dense and contiguous; the gather is not timed, so it bounds what SDPA
alone costs). Decode is one query token per sequence over a context of L tokens; prefill is
a chunk of `--prefill-chunk` tokens at the end of an L-token context (a fresh prompt when
L <= chunk), i.e. chunked prefill over a cached prefix.

Run on a GPU:   .venv/bin/python benchmarks/attention.py --device cuda --json bench.json
On CPU the default is the torch path only; Triton runs on CPU only under the interpreter
(TRITON_INTERPRET=1 in the environment, tiny shapes: it measures nothing about speed).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone

import torch
import torch.nn.functional as F
from pydantic import BaseModel

from loadtest.results import servops_version
from servops_kernels import torch_ref

BACKENDS = ("torch", "triton", "sdpa_dense")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class CaseResult(BaseModel):
    phase: str  # decode | prefill
    backend: str
    batch_size: int
    context_len: int
    query_tokens_per_seq: int
    time_ms: float  # median of the timed calls
    min_time_ms: float  # fastest call: the steadier figure on a shared, noisy machine
    bytes_moved: int
    bandwidth_gbps: float
    fraction_of_copy_bandwidth: float
    tflops: float
    ratio_to_torch: float  # time / torch time; < 1 is faster than the PyTorch path
    ratio_to_sdpa_dense: float | None  # time / sdpa_dense time (None when sdpa_dense was not run)


class BenchmarkResult(BaseModel):
    kind: str = "benchmark.attention"
    servops_version: str
    created_at: str
    device: str
    device_name: str
    dtype: str
    num_heads: int
    num_kv_heads: int
    head_dim: int
    block_size: int
    copy_bandwidth_gbps: float
    command: str
    cases: list[CaseResult]


class BenchmarkError(Exception):
    user_facing = True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    try:
        result = run(args, command=" ".join(["benchmarks/attention.py", *argv]))
    except BenchmarkError as exc:
        print(f"benchmarks/attention.py: error: {exc}", file=sys.stderr)
        return 2
    _print_table(result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(result.model_dump_json(indent=2))
        print(f"wrote {args.json}")
    return 0


def run(args: argparse.Namespace, command: str = "benchmarks/attention.py") -> BenchmarkResult:
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise BenchmarkError("--device cuda but torch sees no CUDA device; use --device cpu")
    backends = (
        [b.strip() for b in args.backends.split(",")]
        if args.backends
        else (list(BACKENDS) if device.type == "cuda" else ["torch", "sdpa_dense"])
    )
    for backend in backends:
        if backend not in BACKENDS:
            raise BenchmarkError(f"--backends {backend!r} is not one of {', '.join(BACKENDS)}")
    if "torch" not in backends:
        backends.insert(0, "torch")  # the named baseline is always measured
    if "triton" in backends and device.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        raise BenchmarkError(
            "--backends triton on CPU needs TRITON_INTERPRET=1 in the environment; "
            "set it (and keep shapes tiny) or drop triton"
        )
    if args.num_heads % args.num_kv_heads:
        raise BenchmarkError(f"--num-heads {args.num_heads} is not a multiple of --num-kv-heads {args.num_kv_heads}")
    dtype = DTYPES[args.dtype]
    copy_gbps = measure_copy_bandwidth(device, args.copy_mib)
    cases: list[CaseResult] = []
    for phase in args.phases.split(","):
        for batch in _ints(args.batch_sizes):
            for context in _ints(args.context_lens):
                cases += _bench_case(args, phase.strip(), batch, context, backends, dtype, device, copy_gbps)
    return BenchmarkResult(
        servops_version=servops_version(),  # a source tree without `pip install` (a lent GPU) too
        created_at=datetime.now(timezone.utc).isoformat(),
        device=device.type,
        device_name=torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        dtype=args.dtype,
        num_heads=args.num_heads,
        num_kv_heads=args.num_kv_heads,
        head_dim=args.head_dim,
        block_size=args.block_size,
        copy_bandwidth_gbps=copy_gbps,
        command=command,
        cases=cases,
    )


def measure_copy_bandwidth(device: torch.device, size_mib: int) -> float:
    """GB/s of a large device-to-device copy: 2 x size bytes (read + write) per copy."""
    numel = size_mib * 2**20 // 4
    src = torch.ones(numel, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    seconds = min(_time_samples(lambda: dst.copy_(src), device, repeats=10))
    return 2 * src.numel() * 4 / seconds / 1e9


def _bench_case(args, phase, batch, context, backends, dtype, device, copy_gbps) -> list[CaseResult]:
    num_heads, kv_heads, head_dim, block_size = args.num_heads, args.num_kv_heads, args.head_dim, args.block_size
    q_per_seq = 1 if phase == "decode" else min(args.prefill_chunk, context)
    elem = torch.finfo(dtype).bits // 8
    kv_bytes = 2 * batch * context * kv_heads * head_dim * elem
    if kv_bytes > args.max_cache_gib * 2**30:
        print(f"skip {phase} B={batch} L={context}: KV {kv_bytes / 2**30:.1f} GiB > --max-cache-gib")
        return []
    blocks_per_seq = math.ceil(context / block_size)
    gen = torch.Generator(device=device).manual_seed(0)
    shape = (batch * blocks_per_seq, block_size, kv_heads, head_dim)
    k_cache = torch.randn(shape, generator=gen, device=device, dtype=dtype)
    v_cache = torch.randn(shape, generator=gen, device=device, dtype=dtype)
    perm = torch.randperm(batch * blocks_per_seq, generator=gen, device=device)
    block_tables = perm.view(batch, blocks_per_seq).to(torch.int32)
    context_lens = torch.full((batch,), context, dtype=torch.int32, device=device)
    query = torch.randn(batch * q_per_seq, num_heads, head_dim, generator=gen, device=device, dtype=dtype)
    cu_seqlens = torch.arange(0, batch + 1, device=device, dtype=torch.int32) * q_per_seq
    scale = head_dim**-0.5
    bytes_moved = kv_bytes + 2 * query.numel() * elem
    key_visits = batch * (q_per_seq * (context - q_per_seq) + q_per_seq * (q_per_seq + 1) // 2)
    flops = 4 * key_visits * num_heads * head_dim

    calls = _calls(
        phase, query, k_cache, v_cache, block_tables, cu_seqlens, context_lens, scale, context, q_per_seq, backends
    )
    samples = {name: _time_samples(fn, device, repeats=args.repeats) for name, fn in calls.items()}
    times = {name: statistics.median(s) for name, s in samples.items()}
    results = []
    for name, seconds in times.items():
        gbps = bytes_moved / seconds / 1e9
        results.append(
            CaseResult(
                phase=phase,
                backend=name,
                batch_size=batch,
                context_len=context,
                query_tokens_per_seq=q_per_seq,
                time_ms=seconds * 1e3,
                min_time_ms=min(samples[name]) * 1e3,
                bytes_moved=bytes_moved,
                bandwidth_gbps=gbps,
                fraction_of_copy_bandwidth=gbps / copy_gbps,
                tflops=flops / seconds / 1e12,
                ratio_to_torch=seconds / times["torch"],
                ratio_to_sdpa_dense=seconds / times["sdpa_dense"] if "sdpa_dense" in times else None,
            )
        )
    return results


def _calls(
    phase, query, k_cache, v_cache, block_tables, cu_seqlens, context_lens, scale, context, q_per_seq, backends
) -> dict[str, Callable[[], object]]:
    calls: dict[str, Callable[[], object]] = {}
    if phase == "decode":
        calls["torch"] = lambda: torch_ref.paged_decode_attention(
            query, k_cache, v_cache, block_tables, context_lens, scale, max_context_len=context
        )
        if "triton" in backends:
            from servops_kernels.paged_decode import paged_decode_attention

            calls["triton"] = lambda: paged_decode_attention(
                query, k_cache, v_cache, block_tables, context_lens, scale, max_context_len=context
            )
    elif phase == "prefill":
        calls["torch"] = lambda: torch_ref.paged_prefill_attention(
            query, k_cache, v_cache, block_tables, cu_seqlens, context_lens, scale, max_query_len=q_per_seq
        )
        if "triton" in backends:
            from servops_kernels.paged_prefill import paged_prefill_attention

            calls["triton"] = lambda: paged_prefill_attention(
                query, k_cache, v_cache, block_tables, cu_seqlens, context_lens, scale, max_query_len=q_per_seq
            )
    else:
        raise BenchmarkError(f"--phases {phase!r} is not decode or prefill")
    if "sdpa_dense" in backends:
        calls["sdpa_dense"] = _dense_sdpa_call(query, k_cache, v_cache, block_tables, context, q_per_seq, scale)
    return calls


def _dense_sdpa_call(query, k_cache, v_cache, block_tables, context, q_per_seq, scale):
    """SDPA over K/V gathered (untimed) into contiguous [B, kvh, L, d] with GQA folded into rows."""
    batch = block_tables.shape[0]
    num_heads, head_dim = query.shape[1], query.shape[2]
    kv_heads = k_cache.shape[2]
    group = num_heads // kv_heads
    keys = torch_ref._gather_kv(k_cache, block_tables, context).contiguous()
    values = torch_ref._gather_kv(v_cache, block_tables, context).contiguous()
    q = query.view(batch, q_per_seq, kv_heads, group, head_dim).permute(0, 2, 3, 1, 4)
    q = q.reshape(batch, kv_heads, group * q_per_seq, head_dim).contiguous()
    rows = torch.arange(q_per_seq, device=query.device)
    q_pos = context - q_per_seq + rows
    mask = torch.arange(context, device=query.device)[None, :] <= q_pos[:, None]  # [q, L]
    mask = mask.repeat(group, 1)  # rows ordered (group, q) as folded above
    if q_per_seq == 1:
        return lambda: F.scaled_dot_product_attention(q, keys, values, scale=scale)
    return lambda: F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, scale=scale)


def _time_samples(fn: Callable[[], object], device: torch.device, repeats: int) -> list[float]:
    """Seconds per call for `repeats` calls, after two warm-up calls (which compile Triton kernels)."""
    for _ in range(2):
        fn()
    samples = []
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize(device)
            samples.append(start.elapsed_time(end) / 1e3)
    else:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
    return samples


def _print_table(result: BenchmarkResult) -> None:
    print(
        f"device {result.device} ({result.device_name}), {result.dtype}, heads {result.num_heads}/"
        f"{result.num_kv_heads} kv, head_dim {result.head_dim}, block {result.block_size}; "
        f"copy bandwidth {result.copy_bandwidth_gbps:.1f} GB/s"
    )
    print(
        f"{'phase':8} {'backend':10} {'B':>4} {'ctx':>6} {'q/seq':>5} {'ms':>9} {'GB/s':>8} "
        f"{'of copy':>7} {'TFLOP/s':>8} {'vs torch':>8} {'vs dense':>8}"
    )
    for c in result.cases:
        print(
            f"{c.phase:8} {c.backend:10} {c.batch_size:>4} {c.context_len:>6} {c.query_tokens_per_seq:>5} "
            f"{c.time_ms:>9.3f} {c.bandwidth_gbps:>8.1f} {c.fraction_of_copy_bandwidth:>7.0%} "
            f"{c.tflops:>8.3f} {c.ratio_to_torch:>8.2f} "
            f"{'-' if c.ratio_to_sdpa_dense is None else f'{c.ratio_to_sdpa_dense:.2f}':>8}"
        )


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    gpu = torch.cuda.is_available()
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--device", default="cuda" if gpu else "cpu", help="cuda or cpu (default: cuda if present)")
    p.add_argument(
        "--backends",
        default=None,
        help="comma list of torch,triton,sdpa_dense (default: all on CUDA, torch,sdpa_dense on CPU)",
    )
    p.add_argument("--phases", default="decode,prefill", help="comma list of decode,prefill")
    p.add_argument("--batch-sizes", default="1,8,32,64" if gpu else "1,8", help="comma list of sequences per call")
    p.add_argument(
        "--context-lens",
        default="1024,4096,16384,32768" if gpu else "256,1024,4096",
        help="comma list of context lengths in tokens",
    )
    p.add_argument(
        "--prefill-chunk",
        type=int,
        default=512 if gpu else 128,
        help="query tokens per sequence in the prefill phase (capped at the context length)",
    )
    p.add_argument("--num-heads", type=int, default=32, help="query heads (default: Llama-3-8B's 32)")
    p.add_argument("--num-kv-heads", type=int, default=8, help="KV heads (default: Llama-3-8B's 8)")
    p.add_argument("--head-dim", type=int, default=128, help="head dimension")
    p.add_argument("--block-size", type=int, default=16, help="tokens per KV-cache block")
    p.add_argument(
        "--dtype", choices=sorted(DTYPES), default="float16" if gpu else "float32", help="cache and query dtype"
    )
    p.add_argument("--repeats", type=int, default=20 if gpu else 10, help="timed calls per case (median)")
    p.add_argument(
        "--copy-mib", type=int, default=1024 if gpu else 256, help="size of the copy that measures device bandwidth"
    )
    p.add_argument("--max-cache-gib", type=float, default=16.0, help="skip cases whose K+V exceed this")
    p.add_argument("--json", default=None, help="also write the results as JSON to this path")
    return p


if __name__ == "__main__":
    sys.exit(main())
