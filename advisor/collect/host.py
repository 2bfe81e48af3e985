"""This host's memory read bandwidth and matrix throughput, measured: what a CPU server's floors rest on.

Why measured and not looked up: a GPU's floors come from its data sheet (advisor/catalog/gpus.py),
but a CPU server gets a share of a socket: as many cores as the engine is pinned to (vLLM's CPU
backend logs `core ids=[…]`), the memory channels the machine or VM exposes, and whatever its
neighbours leave. A data sheet's socket figure (a 12-channel DDR5-4800 EPYC: 460 GB/s) is 20x
what one pinned core reads. So `servops probe` measures, on the serving host, with 1, 2, 4 … up
to all usable cores:

- read bandwidth: the sum of a float32 buffer far larger than the last-level cache (a decode step
  streams every weight once, which is a read);
- dense GEMM throughput in bfloat16 and float32 (a prefill is GEMMs over the prompt's tokens).

Each is the best of several repeats, so a floor built on it stays a lower bound on time. The
result is a JSON document `servops triage --host-profile` reads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from advisor.collect.cpu_features import cpu_flags, has_bf16_arithmetic
from advisor.errors import UserError
from loadtest.figures import Positive, PositiveCount
from loadtest.results import servops_version

READ_BUFFER_MIB = 512  # far above any last-level cache of a server CPU (a 96-core Genoa has 384 MiB)
GEMM_SIZE = 1024  # square; large enough that packing and threading overheads are amortised
REPEATS = 5


class ThreadFigures(BaseModel):
    """What `threads` cores of this host did: read GB/s and GEMM GFLOP/s (best of the repeats)."""

    threads: PositiveCount
    read_gbps: Positive
    bf16_gflops: Positive
    fp32_gflops: Positive

    @property
    def peak_gflops(self) -> float:
        """The faster GEMM: an engine may run either dtype, and a floor must not exceed what is possible."""
        return max(self.bf16_gflops, self.fp32_gflops)


class HostProfile(BaseModel):
    kind: Literal["host_profile"] = "host_profile"
    servops_version: str = Field(default_factory=servops_version)
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    cpu_model: str
    usable_cores: PositiveCount
    bf16_arithmetic: bool = Field(description="AVX512-BF16 or AMX: bfloat16 GEMMs run in hardware")
    figures: list[ThreadFigures] = Field(min_length=1)
    method: str

    def at(self, cores: int | None) -> ThreadFigures:
        """The figures for `cores` threads: the largest measured count not above it (all when unknown)."""
        ordered = sorted(self.figures, key=lambda f: f.threads)
        if cores is None:
            return ordered[-1]
        fitting = [f for f in ordered if f.threads <= cores]
        return fitting[-1] if fitting else ordered[0]


def thread_counts(cores: int) -> list[int]:
    """1, 2, 4 … and the total: enough points to see where bandwidth stops scaling."""
    counts, n = [], 1
    while n < cores:
        counts.append(n)
        n *= 2
    return [*counts, cores]


def probe(
    max_threads: int | None = None,
    progress: Callable[[str], None] = lambda line: None,
    read_mib: int = READ_BUFFER_MIB,
    gemm_size: int = GEMM_SIZE,
) -> HostProfile:
    """Measure this host (torch: imported here, so `servops --help` stays light)."""
    import torch

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cores = min(usable, max_threads) if max_threads else usable
    before = torch.get_num_threads()
    buffer = torch.ones(read_mib * 2**20 // 4, dtype=torch.float32)
    figures = []
    try:
        for threads in thread_counts(cores):
            torch.set_num_threads(threads)
            progress(f"probe: {threads} thread(s): reading {read_mib} MiB, {gemm_size}² GEMMs in bf16 and fp32")
            read_s = _best(lambda: buffer.sum())
            gemm = {
                dtype: _best(lambda a=a: torch.mm(a, a))
                for dtype, a in (
                    ("bf16", torch.randn(gemm_size, gemm_size).to(torch.bfloat16)),
                    ("fp32", torch.randn(gemm_size, gemm_size)),
                )
            }
            flops = 2 * gemm_size**3
            figures.append(
                ThreadFigures(
                    threads=threads,
                    read_gbps=round(buffer.numel() * 4 / read_s / 1e9, 2),
                    bf16_gflops=round(flops / gemm["bf16"] / 1e9, 1),
                    fp32_gflops=round(flops / gemm["fp32"] / 1e9, 1),
                )
            )
    finally:
        torch.set_num_threads(before)
    return HostProfile(
        cpu_model=_cpu_model(),
        usable_cores=usable,
        bf16_arithmetic=has_bf16_arithmetic(),
        figures=figures,
        method=(
            f"torch {torch.__version__}: read = sum of a {read_mib} MiB float32 buffer; GEMM = {gemm_size}x"
            f"{gemm_size} torch.mm in bfloat16 and float32; best of {REPEATS} after one warm-up; threads "
            f"by torch.set_num_threads; CPU flags {'with' if has_bf16_arithmetic() else 'without'} bf16 arithmetic "
            f"({', '.join(sorted(f for f in cpu_flags() if 'bf16' in f or f.startswith('avx512f'))) or 'none'})"
        ),
    )


def load_profile(path: str) -> HostProfile:
    """A `servops probe --json` document, or one clear error naming the file and the fix."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"--host-profile {path}: cannot read it ({exc.strerror}); run `servops probe --json {path}` on the "
            "serving host"
        ) from None
    except UnicodeDecodeError:
        raise UserError(
            f"--host-profile {path}: not text (binary bytes); write one with `servops probe --json FILE` on the "
            "serving host"
        ) from None
    try:
        return HostProfile.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        raise UserError(
            f"--host-profile {path}: not a host profile ({where}: {first['msg']}); write one with "
            "`servops probe --json FILE` on the serving host"
        ) from None


def _best(run: Callable[[], object]) -> float:
    run()  # warm-up: page faults, thread pool start, packing buffers
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "unknown CPU"
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "unknown CPU")
