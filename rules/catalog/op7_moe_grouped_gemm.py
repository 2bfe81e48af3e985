"""OP-7.187: the CUTLASS grouped GEMM of the fused-MoE kernels will not initialize on this GPU.

Why a rule of its own: an FP4 (NVFP4) mixture-of-experts model on Blackwell runs its experts through FlashInfer's
CUTLASS MoE, TensorRT-LLM's kernels, whose TMA warp-specialized grouped GEMM checks its initialisation in words of
its own: `[TensorRT-LLM][ERROR] Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal
(cutlass_kernel_file_gemm_grouped_sm120_….generated.cu:60)`. On the workstation and desktop Blackwell parts (SM120:
RTX PRO 6000, RTX 5090) and DGX Spark's GB10 (SM121) every such tactic fails: FlashInfer's autotuner skips them and
falls back to slower ones, so decode is slow (a community benchmark on 4x RTX PRO 6000 capped near 50 tokens/s,
NVIDIA/cutlass#3096 as a blog recounts it), or, where the failure is raised rather than skipped, the engine stops.
Both write-ups that meet it (that blog, and a DGX Spark guide serving Nemotron-3-Nano NVFP4 with vLLM 0.18) got past it
with Marlin's kernels, which run FP4 weights as W4A16 on any of these GPUs. vLLM chooses the MoE kernels with
--moe-backend from 0.17 on (the catalog's table of EngineArgs' fields per release), `marlin` among its values in 0.32.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

MOE_BACKEND_FROM = "0.17"  # the first release whose EngineArgs has moe_backend (the message catalog's table)
BLOG = "https://www.banandre.com/blog/nvidia-cutlass-blackwell-workstation-bugs"


def _grouped_gemm_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    arch = f" ({event.message}, as the kernel's file names it)" if event.message else ""
    return RULE_MOE_GROUPED_GEMM.finding(
        Severity.MEDIUM,  # the autotuner may only be skipping tactics: a slower server, not a stopped one
        f"the fused-MoE kernels' CUTLASS TMA grouped GEMM will not initialize on this GPU{arch}: run the experts "
        "on Marlin's kernels",
        summary="FlashInfer's CUTLASS MoE (TensorRT-LLM's kernels, chosen for FP4 experts on Blackwell) checks that "
        "its TMA warp-specialized grouped GEMM initialised, and it did not. On SM120 and SM121 (RTX PRO 6000, RTX "
        "5090, DGX Spark's GB10) every such tactic fails: the autotuner skips them and serves on slower ones, or "
        "the engine stops where the failure is raised. No memory or batch setting changes which kernels exist for "
        "the GPU; the MoE backend does.",
        evidence=[c.log_evidence(event, name="TensorRT-LLM's grouped GEMM", value=event.raw.strip()[:200] or None)],
        changes=[
            ConfigChange(
                flag="--moe-backend",
                proposed="marlin",
                reason="Marlin's kernels run the FP4 experts as W4A16 on these GPUs, which both write-ups that met "
                f"this error used (vLLM {MOE_BACKEND_FROM} on has the flag)",
                cost="Marlin dequantizes the weights to 16 bits in the kernel: slower than FP4 kernels that work, "
                "at large batches",
            )
        ],
        actions=[
            "Read the GPU's compute capability (`nvidia-smi --query-gpu=compute_cap --format=csv`): 12.0 or 12.1 is "
            "the case the write-ups describe; on another GPU, the FlashInfer release may lack that GPU's kernels "
            "(upgrade FlashInfer with vLLM).",
            f"On a vLLM older than {MOE_BACKEND_FROM}, which has no --moe-backend, upgrade: the FP4 MoE paths for "
            f"these GPUs changed release by release ({BLOG}).",
        ],
        confidence=0.7,
    )


RULE_MOE_GROUPED_GEMM = Rule(
    code="OP-7.187",
    title="the fused-MoE kernels' CUTLASS grouped GEMM will not initialize on this GPU",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.MOE_GROUPED_GEMM_INIT_FAILED, _grouped_gemm_finding),
    needs=("events",),
    page=RulePage(
        checks="TensorRT-LLM's `Failed to initialize cutlass TMA WS grouped gemm` (FlashInfer's CUTLASS MoE), with "
        "the architecture its kernel file names when the words hold it.",
        why="FP4 MoE models on SM120/SM121 Blackwell serve on the autotuner's slow fallback tactics, or stop.",
        example="`[TensorRT-LLM][ERROR] Failed to initialize cutlass TMA WS grouped gemm` (a DGX Spark guide, "
        "Nemotron-3-Nano NVFP4 on vLLM 0.18: fixed by Marlin); the same on 4x RTX PRO 6000 (NVIDIA/cutlass#3096).",
        fix="--moe-backend marlin (vLLM 0.17 on).",
        limits="The line alone does not say whether the server went on with slower tactics or stopped; the GPU's "
        "compute capability is not in it either.",
        references=[BLOG, "https://github.com/NVIDIA/cutlass/issues/3096"],
    ),
)

RULES: list[Rule] = [RULE_MOE_GROUPED_GEMM]
