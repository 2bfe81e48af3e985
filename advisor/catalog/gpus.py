"""GPU catalog: the numbers an advisor needs about a device, each with its source.

Why a catalog and not `nvidia-smi`: the advisor plans deployments for machines it is not
running on. The one figure that decides KV capacity is the memory CUDA/torch/vLLM *report*
as total (`usable_gib`), which is below the marketing number (80 GB H100 → 79.18 GiB), so
that is what we store, with where it came from. Where no published log gives it, the value
is marked as an assumption in `usable_source`.

Public names: `GpuSpec`, `resolve_gpu(name)`, `gpu_from_memory(gib, ...)`, `GPU_CATALOG`.
Sources are listed in docs/reference.md §4.5 (AIC system yaml files, llm-d empirical docs,
vLLM `supported_hardware.md`, vendor pages).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.errors import UserError

Interconnect = Literal["nvlink", "pcie", "xgmi"]


class GpuSpec(BaseModel):
    """One GPU model as the advisor sees it. Frozen so catalog entries cannot be mutated."""

    model_config = ConfigDict(frozen=True)

    name: str
    vendor: Literal["nvidia", "amd", "custom"]
    arch: str  # hopper, ampere, ada, blackwell, cdna3, unknown
    usable_gib: float  # total memory as CUDA/torch/vLLM report it: vLLM's `total_memory`
    usable_source: str
    memory_bandwidth_tbps: float | None
    bf16_tflops: float | None  # dense; None where the reference did not capture it
    fp8_w8a8: bool  # vLLM FP8 weights+activations (`--quantization fp8` at full speed)
    fp8_weight_only_marlin: bool  # FP8/GPTQ/AWQ weight-only via Marlin kernels
    fp8_kv_cache: bool  # `--kv-cache-dtype fp8` (CUDA 11.8+ and ROCm)
    interconnect: Interconnect
    interconnect_gbps_per_direction: float | None
    aliases: tuple[str, ...] = ()
    sources: str = ""


def _gpu(**fields: object) -> GpuSpec:
    return GpuSpec.model_validate(fields)


# Every row: docs/reference.md §4.5 (the GPU table) unless the source says otherwise.
GPU_CATALOG: tuple[GpuSpec, ...] = (
    _gpu(
        name="H100-SXM-80GB",
        vendor="nvidia",
        arch="hopper",
        usable_gib=79.18,
        usable_source="llm-d empirical runs: 79.18 GiB total (reported 79.18-79.19)",
        memory_bandwidth_tbps=3.35,
        bf16_tflops=989.0,
        fp8_w8a8=True,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="nvlink",
        interconnect_gbps_per_direction=450.0,
        aliases=("H100", "H100-SXM", "H100-80GB", "H100-SXM5"),
        sources="AIC h100_sxm.yaml; llm-d empirical/accuracy docs",
    ),
    _gpu(
        name="H100-PCIe-80GB",
        vendor="nvidia",
        arch="hopper",
        usable_gib=79.18,
        usable_source="assumed equal to H100 SXM (same 80 GB); no published vLLM log",
        memory_bandwidth_tbps=2.0,
        bf16_tflops=756.5,
        fp8_w8a8=True,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="pcie",
        interconnect_gbps_per_direction=64.0,
        aliases=("H100-PCIe", "H100-PCIE"),
        sources="AIC h100_pcie.yaml (estimate-only)",
    ),
    _gpu(
        name="H200",
        vendor="nvidia",
        arch="hopper",
        usable_gib=139.80,
        usable_source="torch OOM messages on H200: 139.80-139.81 GiB",
        memory_bandwidth_tbps=4.8,
        bf16_tflops=989.0,
        fp8_w8a8=True,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="nvlink",
        interconnect_gbps_per_direction=450.0,
        aliases=("H200-SXM", "H200-141GB", "H200-SXM-141GB"),
        sources="AIC h200_sxm.yaml; third-party logs",
    ),
    _gpu(
        name="A100-SXM-80GB",
        vendor="nvidia",
        arch="ampere",
        usable_gib=79.25,
        usable_source="vLLM log in kvcached#110: 79.25 GiB",
        memory_bandwidth_tbps=2.039,
        bf16_tflops=312.0,
        fp8_w8a8=False,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="nvlink",
        interconnect_gbps_per_direction=300.0,
        aliases=("A100", "A100-SXM", "A100-80GB"),
        sources="AIC a100_sxm.yaml; vLLM supported_hardware.md",
    ),
    _gpu(
        name="A100-PCIe-80GB",
        vendor="nvidia",
        arch="ampere",
        usable_gib=79.25,
        usable_source="assumed equal to A100 SXM (same 80 GB); no published vLLM log",
        memory_bandwidth_tbps=1.935,
        bf16_tflops=312.0,
        fp8_w8a8=False,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="pcie",
        interconnect_gbps_per_direction=32.0,
        aliases=("A100-PCIe", "A100-PCIE"),
        sources="AIC a100_pcie.yaml",
    ),
    _gpu(
        name="L40S",
        vendor="nvidia",
        arch="ada",
        usable_gib=44.39,
        usable_source="third-party L40S logs: 44.39-44.40 GiB",
        memory_bandwidth_tbps=0.864,
        bf16_tflops=362.0,
        fp8_w8a8=True,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="pcie",
        interconnect_gbps_per_direction=32.0,
        aliases=("L40S-48GB",),
        sources="AIC l40s.yaml; third-party L40S logs",
    ),
    _gpu(
        name="L4",
        vendor="nvidia",
        arch="ada",
        usable_gib=22.04,
        usable_source="vLLM log on L4: 22.04 GiB",
        memory_bandwidth_tbps=0.3,
        bf16_tflops=121.0,
        fp8_w8a8=True,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="pcie",
        interconnect_gbps_per_direction=32.0,
        aliases=("L4-24GB",),
        sources="AIC l4.yaml (estimate-only)",
    ),
    _gpu(
        name="A10G",
        vendor="nvidia",
        arch="ampere",
        usable_gib=22.06,
        usable_source="third-party torch output: 22.06 GiB",
        memory_bandwidth_tbps=0.6,
        bf16_tflops=None,
        fp8_w8a8=False,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="pcie",
        interconnect_gbps_per_direction=None,
        aliases=("A10G-24GB",),
        sources="Baseten 'A10 vs A10G'; third-party torch output",
    ),
    _gpu(
        name="MI300X",
        vendor="amd",
        arch="cdna3",
        usable_gib=192.0,
        usable_source="assumed: Azure ND MI300X v5 lists 192 GiB; no published vLLM log",
        memory_bandwidth_tbps=5.3,
        bf16_tflops=None,
        fp8_w8a8=True,
        fp8_weight_only_marlin=False,
        fp8_kv_cache=True,
        interconnect="xgmi",
        interconnect_gbps_per_direction=None,
        aliases=("MI300X-192GB",),
        sources="Vultr ROCm hardware page; Azure docs; MLPerf v4.1 system JSON",
    ),
    _gpu(
        name="MI325X",
        vendor="amd",
        arch="cdna3",
        usable_gib=256.0,
        usable_source="assumed: 256 GB HBM3E spec; no published vLLM log",
        memory_bandwidth_tbps=6.0,
        bf16_tflops=1307.0,
        fp8_w8a8=True,
        fp8_weight_only_marlin=False,
        fp8_kv_cache=True,
        interconnect="xgmi",
        interconnect_gbps_per_direction=None,
        aliases=("MI325X-256GB",),
        sources="Vultr ROCm hardware page (1,307 is the FP16 figure)",
    ),
    _gpu(
        name="B200",
        vendor="nvidia",
        arch="blackwell",
        usable_gib=180.0,
        usable_source="assumed: AIC b200_sxm.yaml lists 180 GiB; no published vLLM log",
        memory_bandwidth_tbps=7.7,
        bf16_tflops=2250.0,
        fp8_w8a8=True,
        fp8_weight_only_marlin=True,
        fp8_kv_cache=True,
        interconnect="nvlink",
        interconnect_gbps_per_direction=900.0,
        aliases=("B200-SXM",),
        sources="AIC b200_sxm.yaml (FP8 support: not in vLLM's older table; Blackwell has FP8)",
    ),
)


def resolve_gpu(name: str) -> GpuSpec:
    """A catalog GPU by name or alias, case- and punctuation-insensitive ('h100 sxm' works)."""
    key = _normalise(name)
    for gpu in GPU_CATALOG:
        if key in {_normalise(n) for n in (gpu.name, *gpu.aliases)}:
            return gpu
    choices = ", ".join(g.name for g in GPU_CATALOG)
    raise UserError(f"--gpu {name!r}: unknown GPU; choose one of {choices}, or pass --gpu-memory-gib")


def gpu_from_memory(
    memory_gib: float,
    interconnect: Interconnect = "pcie",
    fp8: bool = False,
    device: Literal["cuda", "cpu"] = "cuda",
) -> GpuSpec:
    """A device known only by its memory size: an unlisted GPU, or (device="cpu") the bundled
    engine's CPU "device" budget (`servops serve --device-memory-gib`).

    Capabilities default to the conservative side (no FP8 W8A8, PCIe) so the planner never
    recommends something the device may not do; the caller can say otherwise. A "cpu" device
    has arch "cpu", which memory math reads as: no CUDA context, no CUDA graphs, and the
    engine's own activation estimate.
    """
    if not memory_gib > 0:
        raise UserError(f"--gpu-memory-gib {memory_gib}: must be a positive number of GiB, e.g. 79.18")
    return GpuSpec(
        name=f"{'cpu' if device == 'cpu' else 'custom'}-{memory_gib:g}GiB",
        vendor="custom",
        arch="cpu" if device == "cpu" else "unknown",
        usable_gib=float(memory_gib),
        usable_source="given by the user (--gpu-memory-gib)",
        memory_bandwidth_tbps=None,
        bf16_tflops=None,
        fp8_w8a8=fp8,
        fp8_weight_only_marlin=False,
        fp8_kv_cache=device != "cpu",  # the bundled engine supports only --kv-cache-dtype auto
        interconnect=interconnect,
        interconnect_gbps_per_direction=None,
        sources="user input",
    )


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())
