"""OP-7.98: a table of vLLM's keyed by platform has no entry for the one it runs on (`KeyError: <PlatformEnum.XPU: 4>`).

Why a rule of its own: vLLM picks some kernels from tables keyed by the platform it runs on, and a platform the
table lacks ends in Python's bare `KeyError` with the platform's enum as its only words. The table people hit is the
scaled-matmul kernel chooser (`choose_scaled_mm_linear_kernel`: `possible_kernels[current_platform._enum]`,
model_executor/layers/quantization/kernels/scaled_mm), which every FP8 and W8A8-INT8 linear layer goes through: on
Intel Gaudi with a w8a8 checkpoint (vllm-project/vllm-gaudi#567: `KeyError: <PlatformEnum.HPU: 4>`), on Intel XPU
with FP8 or INT8 weights (`<PlatformEnum.XPU: 4>`), and on out-of-tree platform plugins, which all report
`PlatformEnum.OOT` (vllm-gaudi's fix "Fix for hourly KeyError: <PlatformEnum.OOT: 6>" registered HPU scaled-mm
kernels, vllm-gaudi#917). The cause is the pair of checkpoint and platform: that quantization has no kernel there.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_PLATFORM_KEY = re.compile(r"<PlatformEnum\.(?P<platform>\w+): \d+>")
# What the enum's names stand for, as an operator knows them (vllm/platforms/interface.py's PlatformEnum)
_PLATFORM_NAMES = {
    "CUDA": "CUDA",
    "ROCM": "ROCm",
    "TPU": "TPU",
    "XPU": "Intel XPU",
    "HPU": "Intel Gaudi (HPU)",
    "CPU": "CPU",
    "NEURON": "AWS Neuron",
    "OOT": "an out-of-tree platform plugin (Gaudi, Ascend, Kunlun, …)",
}
_KERNEL_CHOOSER = ("scaled_mm", "possible_kernels", "_POSSIBLE_KERNELS")


def _check_platform_table(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        found = _PLATFORM_KEY.search(event.message or "") if event.exception == "KeyError" else None
        if found is not None:
            return [_finding(facts, event, found["platform"])]
    return []


def _finding(facts: Facts, event: LogEvent, platform: str) -> Finding:
    name = _PLATFORM_NAMES.get(platform, platform)
    where = f"{event.code or ''} {event.function or ''}"
    kernels = any(word in where for word in _KERNEL_CHOOSER) or not where.strip()
    quantization = facts.config.quantization if facts.config else None
    what = (
        f"no FP8 or INT8 scaled-matmul kernel for {name}: the checkpoint's quantization cannot run there"
        if kernels
        else f"no entry for {name} in a table of its own: the feature the launch uses is not implemented there"
    )
    return RULE_PLATFORM_TABLE.finding(
        Severity.CRITICAL,
        f"vLLM has {what}",
        summary=f"vLLM looked the platform up ({platform}) in a table keyed by platform and found nothing: Python's "
        "KeyError with the platform as its only words. "
        + (
            "The table is the scaled-matmul kernel chooser every FP8 and W8A8-INT8 linear layer goes through, so "
            "a checkpoint quantized that way (compressed-tensors w8a8, FP8) has no kernel on this platform"
            + (f" (--quantization {quantization})" if quantization else "")
            + "."
            if kernels
            else f"The failing line is `{event.code}`."
        ),
        evidence=[c.log_evidence(event, name="the platform looked up", value=event.message)],
        actions=[
            "Serve a checkpoint the platform has kernels for: the unquantized (BF16) model, or a quantization its "
            "documentation lists (the platform plugin's supported-features page), and leave --quantization unset."
            if kernels
            else "Leave the feature off on this platform, or run it where vLLM implements it.",
            "Or upgrade the platform plugin and vLLM together: kernels are registered per platform, release by "
            "release (vllm-gaudi#917 added HPU's scaled-matmul kernels); an out-of-tree plugin, which vLLM knows only "
            "as OOT, must register its kernels itself.",
        ],
        confidence=0.7,
    )


RULE_PLATFORM_TABLE = Rule(
    code="OP-7.98",
    title="a table of vLLM's keyed by platform has no entry for this one",
    category=Category.CONFIGURATION,
    check=_check_platform_table,
    needs=("events",),
    page=RulePage(
        checks="An exception `KeyError: <PlatformEnum.X: n>` (its failing line, when the traceback has it, naming "
        "`possible_kernels` or `scaled_mm`).",
        why="vLLM chooses FP8 and INT8 matmul kernels from a table keyed by platform; a platform the table lacks "
        "cannot run that quantization.",
        example="`KeyError: <PlatformEnum.HPU: 4>` loading RedHatAI/Llama-3.3-70B-Instruct-quantized.w8a8 on Gaudi 3 "
        "(vllm-project/vllm-gaudi#567).",
        fix="An unquantized checkpoint or a quantization the platform supports; or the plugin and vLLM releases that "
        "register a kernel for it.",
        limits="Without the failing line, a bare KeyError on a platform is read as the kernel table, the one "
        "people meet.",
        references=["https://github.com/vllm-project/vllm-gaudi/issues/567"],
    ),
)

RULES: list[Rule] = [RULE_PLATFORM_TABLE]
