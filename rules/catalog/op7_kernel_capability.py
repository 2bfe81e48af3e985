"""OP-7.105: vLLM's build has no variant of a kernel the model needs for this GPU's compute capability.

Why a rule of its own: vLLM's quantized GEMMs and MoE backends are compiled (or enabled) per architecture, and each
release adds architectures one kernel at a time. A GPU the build runs on otherwise (PyTorch and vLLM's other ops
work, unlike OP-7.36's missing binaries) can still meet a kernel whose dispatch finds no variant for it: the CUTLASS
scaled-mm entry says `No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100`
(vllm-project/vllm#32109: an FP8 checkpoint on RTX PRO 6000 Blackwell, sm_120, with vLLM 0.13), a MoE backend says
`FlashInfer-CUTLASS MoE kernel does not support current device sm_120` (vllm-project/vllm PR #33417: v0.15.0 checked
only the SM100 family; the PR added the SM120 family to the NVFP4 MoE backends). The kernel belongs to the
checkpoint's quantization, so either a vLLM release with the variant or a checkpoint that does not need it serves.
A build from source holds the variants of the architectures it was built for, so there `No compiled cutlass_scaled_mm
for a compute capability less than …` (or the words cut there) is also the build's arch list: vllm PR #49904 found a
DGX Spark (12.1) build with no CUTLASS kernel at all, torch's CMake having read the arch as 2.0.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.op7_toolchain import ARCH_GPUS
from rules.events import COMPILED_KERNEL, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# A build from source compiles the architectures of TORCH_CUDA_ARCH_LIST, or the ones torch's CMake detects, which
# went wrong on DGX Spark: torch's vendored select_compute_arch.cmake rewrote 12.1 as 12.1(2.0), so vLLM built no
# arch-gated kernel at all (vllm PR #49904, its author's diagnosis, merged)
_SOURCE_BUILD = (
    "For a vLLM built from source: it holds the kernels of the architectures it was built for, TORCH_CUDA_ARCH_LIST or "
    "what torch's CMake detected. Rebuild with TORCH_CUDA_ARCH_LIST set to this GPU's capability (`nvidia-smi "
    "--query-gpu=compute_cap --format=csv`); on DGX Spark (12.1) torch's CMake misread the arch, and the build had "
    "no CUTLASS kernel at all until vllm PR #49904."
)


def _actions(kernel: str, sm: str, build_arch: bool, cut: bool) -> list[str]:
    """A release with the variant, or a checkpoint without the kernel; where the build's arch list decides it, the
    rebuild too, first when the words were cut before the capability (a source build's missing arch, PR #49904)."""
    release = [
        f"Upgrade vLLM to a release whose {kernel} covers {sm} (its release notes; vllm PR #33417 added the SM120 "
        "family to the NVFP4 MoE backends after v0.15.0).",
        "Until then serve a checkpoint that does not need it: the unquantized (BF16) model, or a quantization whose "
        "kernels cover this GPU.",
    ]
    if not build_arch:
        return release
    return [_SOURCE_BUILD, *release] if cut else [*release, _SOURCE_BUILD]


def _check_kernel_capability(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.KERNEL_NOT_FOR_CAPABILITY)
    if not events:
        return []
    event = events[0]
    sm = event.version or "this GPU's architecture"
    gpus = ARCH_GPUS.get(sm.replace("_", ""))
    kernel = event.message or "a kernel"
    return [
        RULE_KERNEL_CAPABILITY.finding(
            Severity.CRITICAL,
            f"this vLLM build has no {kernel} for {sm}" + (f", {gpus}" if gpus else "") + ": the checkpoint's "
            "quantized kernel is not built for this GPU",
            summary=f"vLLM chose {kernel} for the model's quantized layers and found no variant of it for {sm}. vLLM "
            "compiles and enables its quantized GEMM and MoE kernels per architecture and adds architectures release "
            "by release, so a GPU the rest of the build runs on can still lack one kernel.",
            evidence=[c.log_evidence(event, name="kernel without this architecture", value=f"{kernel} on {sm}")],
            actions=_actions(kernel, sm, build_arch=event.component == COMPILED_KERNEL, cut=event.version is None),
            confidence=0.75,
        )
    ]


RULE_KERNEL_CAPABILITY = Rule(
    code="OP-7.105",
    title="no variant of a quantized kernel for this GPU's architecture in this vLLM build",
    category=Category.STARTUP,
    check=_check_kernel_capability,
    needs=("events",),
    page=RulePage(
        checks="`No compiled cutlass_scaled_mm for CUDA device capability: N` (also `for a compute capability less "
        "than …`, or cut there) and `… kernel does not support current device sm_N`.",
        why="vLLM builds and enables its quantized GEMM and MoE kernels per architecture; a GPU may lack one of them.",
        example="vllm#32109: GLM-4.7-FP8 on RTX PRO 6000 Blackwell (sm_120) with vLLM 0.13.",
        fix="A vLLM release whose kernel covers the architecture, or a checkpoint that does not need the kernel; for a "
        "source build, TORCH_CUDA_ARCH_LIST with the GPU's capability.",
        limits="Which release adds a kernel is in vLLM's release notes, not in the error.",
        references=[
            "https://github.com/vllm-project/vllm/issues/32109",
            "https://github.com/vllm-project/vllm/pull/33417",
            "https://github.com/vllm-project/vllm/pull/49904",
        ],
    ),
)

RULES: list[Rule] = [RULE_KERNEL_CAPABILITY]
