"""OP-7.86: AMD's AITER kernels refused this GPU or this shape (vLLM on ROCm with VLLM_ROCM_USE_AITER=1).

Why a rule of its own: on ROCm, vLLM swaps its own kernels for AMD's AITER library when VLLM_ROCM_USE_AITER=1 (off
by default in vllm/envs.py; each AITER op then on unless its own VLLM_ROCM_USE_AITER_<OP> is 0: _MOE, _LINEAR,
_RMSNORM, _MHA, _MLA …). AITER is built for AMD Instinct GPUs and tuned per shape, and says so in two ways. Its arch
check refuses another GPU: `One of GPU archs of ['gfx1201'] is invalid or not supported` on a Radeon AI PRO R9700
(RDNA4), where AITER's sampling op was turned on (kyuz0/amd-r9700-vllm-toolboxes#18; AITER later added gfx1201 to
its list). Or Composable Kernel, under it, has no instance for a GEMM's shape: `ck_moe_stage2 … device_gemm does not
support this GEMM problem` for an FP8 MoE on MI300X/MI355X, after `[aiter] Fmoe tuning not support for (…)`; AMD's
own engineer turned AITER's MoE off (VLLM_ROCM_USE_AITER_MOE=0, vLLM's Triton MoE) and kept the rest
(ROCm/aiter#3202). Neither is a memory or model setting: the op goes back to vLLM's own kernel.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.health_kernels import AITER_ENV
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

AITER_MOE_ENV = "VLLM_ROCM_USE_AITER_MOE"  # its fused-MoE op, on whenever AITER is
AITER_MLA_ENV = "VLLM_ROCM_USE_AITER_MLA"  # its MLA attention (vllm/envs.py), on whenever AITER is
AITER_FP4BMM_ENV = "VLLM_ROCM_USE_AITER_FP4BMM"  # its FP4 batched GEMM (vllm/envs.py 0.32: True by default)
# What turning one of AITER's ops off hands the shape to, by the op that refused it: its variable, the title's
# words for the shape and the remedy, and the reason.
_OP_OFF = {
    "moe": (
        AITER_MOE_ENV,
        "fused-MoE shape",
        "turn AITER's MoE off, keep the rest",
        "vLLM's Triton fused MoE serves the shape; AITER's other ops stay on",
    ),
    "mla": (
        AITER_MLA_ENV,
        "MLA attention shape",
        "turn AITER's MLA off, keep the rest",
        "vLLM's Triton MLA backend serves the shape; AITER's other ops stay on (or --kv-cache-dtype auto, when the "
        "missing kernel is an FP8 KV cache's)",
    ),
    "fp4bmm": (
        AITER_FP4BMM_ENV,
        "FP4 batched GEMM on a GPU without FP4",
        "turn AITER's FP4 BMM off, keep the rest",
        "AITER's FP4 batched GEMM (MLA attention's) was on with AITER on every Instinct GPU, MI300X (gfx942) without "
        "FP4 included (vllm#34641 on 0.16, the reporter's workaround); vLLM 0.32 turns it on only on CDNA 4 "
        "(_aiter_ops.is_fp4bmm_enabled), so upgrading fixes it too",
    ),
}
# AITER's MLA decode kernel takes 16 or 128 query heads per rank (vLLM V1's own check says so: `Aiter MLA only supports
# 16 or 128 number of heads`, v1/attention/backends/mla/rocm_aiter_mla.py 0.9-0.17; ROCm/aiter#548 on V0).
_MLA_HEADS = (
    "Or keep AITER's MLA with a --tensor-parallel-size that leaves 16 or 128 query heads on each rank, the two its "
    "MLA decode kernel takes (DeepSeek-V3/R1's 128 heads: TP 8 or TP 1; TP 4 leaves 32, ROCm/aiter#548)."
)
_WHOLE_OFF = (AITER_ENV, "GEMM's shape", "turn AITER off", "vLLM's own kernels serve the shape")


def _check_aiter(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.AITER_REFUSED)
    if not events:
        return []
    event = next((e for e in events if e.component == "arch"), events[0])
    if event.component == "newer_arch":
        return [_newer_arch_kernel(event)]
    return [_arch_refused(event) if event.component == "arch" else _shape_refused(event)]


def _newer_arch_kernel(event: LogEvent) -> Finding:
    """A kernel only a newer Instinct GPU runs, chosen on this one by vLLM's selection (vllm PR #50817: AITER's
    small-head MLA decode, CDNA4's, picked on MI325X for 12 heads per rank): the op off, or a release that selects
    by arch."""
    env, _shape, remedy, reason = _OP_OFF.get(event.function or "", _WHOLE_OFF)
    got = event.device or "this GPU"
    return RULE_AITER.finding(
        Severity.CRITICAL,
        f"vLLM chose an AITER kernel of a newer Instinct GPU on {got}: {remedy}",
        summary=f"The kernel asserts the GPU it was written for ({event.message}): vLLM's ROCm backend picked it "
        "on the model's shape without checking the arch"
        + (
            " (vllm PR #50817: AITER's small-head MLA decode runs on CDNA4, MI350, alone; Kimi-K3's 96 heads at TP 8 "
            "leave 12 per rank, which chose it on an MI325X)"
            if event.function == "mla"
            else ""
        )
        + ". It is vLLM's selection, not a setting of the user's that is wrong.",
        evidence=[c.log_evidence(event, name="the kernel's assertion", value=got)],
        changes=[ConfigChange(flag=env, current=None, proposed="0", reason=reason, kind="env")],
        actions=[
            "Upgrade vLLM to a release whose ROCm backend selects this op by arch (PR #50817 for the MLA decode).",
            *([_MLA_HEADS] if event.function == "mla" else []),
        ],
        confidence=0.75,
    )


def _arch_refused(event: LogEvent) -> Finding:
    """AITER's arch check refused the GPU: AITER off as a whole. Its rocminfo lookup failing is vLLM importing AITER's
    data types whatever the setting (before vllm PR #30952), so the upgrade leads there and no setting is proposed."""
    arch = event.device or "this GPU's arch"
    unset = (
        f"Unset {AITER_ENV} (or set it to 0) and any VLLM_ROCM_USE_AITER_<OP>=1 the image or launch sets; a "
        "container built for Instinct GPUs may set them for you (`env | grep AITER`)."
    )
    if "rocminfo" in (event.message or ""):
        remedy, changes = "vLLM looked AITER's arch up at import, which only an upgrade avoids", []
        actions = [
            "Upgrade vLLM: before PR #30952 (December 2025) it called AITER's arch lookup while importing AITER's "
            "data types, with AITER off too, so no setting avoids it on this GPU.",
            unset,
        ]
    else:
        remedy = "turn AITER off and vLLM uses its own kernels"
        changes = [
            ConfigChange(
                flag=AITER_ENV,
                current=None,
                proposed="0",
                reason=f"AITER has no kernels for {arch}; vLLM's own kernels serve it",
                kind="env",
            )
        ]
        actions = [unset, "Or an AITER release that lists the arch (it adds targets over time)."]
    return RULE_AITER.finding(
        Severity.CRITICAL,
        f"AMD's AITER kernels do not support {arch}: {remedy}",
        summary="AITER is built for AMD Instinct GPUs; its arch check refuses the GPU before any of its kernels "
        "compiles, so an AITER op turned on for this GPU stops the worker.",
        evidence=[c.log_evidence(event, name="AITER's refusal", value=event.message)],
        changes=changes,
        actions=actions,
        confidence=0.8,
    )


def _shape_refused(event: LogEvent) -> Finding:
    """AITER has no kernel or instance for the shape: the refusing op off (fused MoE, MLA), or AITER as a whole."""
    env, shape, remedy, reason = _OP_OFF.get(event.function or "", _WHOLE_OFF)
    actions = [
        "Report the shape to AITER (its tuned configs grow with the models people run) and try its newer release; "
        "ROCm/aiter#3202 is such a report.",
    ]
    if "nhead=" in (event.message or ""):  # the heads each rank holds: the tensor-parallel size decides them
        actions.insert(0, _MLA_HEADS)
    return RULE_AITER.finding(
        Severity.CRITICAL,
        f"AMD's AITER kernels have no instance for this {shape}: {remedy}",
        summary="AITER's kernels are tuned per shape and data type (its assembly kernels per GPU arch, the rest on "
        "Composable Kernel); a problem none of its kernels covers stops at its first call (warm-up). vLLM's own "
        "kernel for the op serves the shape.",
        evidence=[c.log_evidence(event, name="AITER's refusal", value=event.message)],
        changes=[ConfigChange(flag=env, current=None, proposed="0", reason=reason, kind="env")],
        actions=actions,
        confidence=0.7,
    )


RULE_AITER = Rule(
    code="OP-7.86",
    title="AMD's AITER kernels refused this GPU or this shape",
    category=Category.CONFIGURATION,
    check=_check_aiter,
    needs=("events",),
    page=RulePage(
        checks="AITER's `One of GPU archs of [...] is invalid or not supported`, Composable Kernel's `device_gemm does "
        "not support this GEMM problem` (`ck_moe_stage…`), AITER's `Fmoe tuning not support for …`, and its assembly "
        "MLA's `get_heuristic_kernel_mla: cannot get heuristic kernel!`; its rocminfo lookup's `Unknown GPU "
        "architecture: gfx1201` (vllm PR #30952) and `MXFP4 quantization is not supported on gfx942` "
        "(VLLM_ROCM_USE_AITER_FP4BMM=0, vllm#34641).",
        why="vLLM on ROCm runs AITER's kernels when VLLM_ROCM_USE_AITER=1; AITER is built for Instinct GPUs and tuned "
        "per shape, and refuses what it has no kernel for.",
        example="`RuntimeError: ck_moe_stage2 ... device_gemm does not support this GEMM problem` for an FP8 MoE on "
        "MI355X (ROCm/aiter#3202: VLLM_ROCM_USE_AITER_MOE=0).",
        fix="VLLM_ROCM_USE_AITER=0 for an arch AITER lacks; VLLM_ROCM_USE_AITER_MOE=0, VLLM_ROCM_USE_AITER_MLA=0 "
        "(or the op's own variable) for a shape it lacks.",
        limits="Which op refused a shape is read for fused MoE and MLA; another op's refusal turns AITER off as a "
        "whole.",
        references=[
            "https://github.com/ROCm/aiter/issues/3202",
            "https://github.com/kyuz0/amd-r9700-vllm-toolboxes/issues/18",
        ],
    ),
)

RULES: list[Rule] = [RULE_AITER]
