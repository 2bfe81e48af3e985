"""OP-2.6: the installed vLLM has no quantized implementation of the model's architecture.

Why a rule of its own: vLLM 0.2's model loader quantized only the architectures it listed, and refused any other
with `Quantization is not supported for <class 'vllm.model_executor.models.bloom.BloomForCausalLM'>.` before the
weights were read (the words come from before the message catalog's first release, 0.4, so only this rule knows
them). Nothing in the launch is wrong: the checkpoint is quantized and the release cannot run it that way. A
maintainer answered vllm#1711 (BLOOM with AWQ): support would come with the next release (vllm PR #1714). A
pydantic 1 settings model around vLLM printed the words with `(type=value_error)` after them, which the log reader
reads as this ValueError.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

UNQUANTIZED_ARCH = re.compile(r"Quantization is not supported for <class '(?:[\w.]+\.)?(?P<arch>\w+)'>")


def _unquantized_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    arch = match["arch"]
    return RULE_UNQUANTIZED_ARCH.finding(
        Severity.CRITICAL,
        f"this vLLM release cannot run {arch} quantized: its loader lists the architectures it quantizes, and "
        f"{arch} is not among them",
        summary="vLLM refused the quantized checkpoint before reading its weights: the release has no quantized "
        f"implementation of {arch}. The checkpoint and the flags are not at fault.",
        evidence=[c.log_evidence(event, name="vLLM's refusal", value=arch)],
        actions=[
            f"Upgrade vLLM to a release whose quantization support covers {arch} (vLLM's supported-models and "
            "quantization pages, per release; BLOOM's came with the release after vllm#1711).",
            "Or serve the unquantized checkpoint of the same model, if it fits the GPUs.",
        ],
        confidence=0.85,
    )


RULE_UNQUANTIZED_ARCH = Rule(
    code="OP-2.6",
    title="no quantized implementation of the architecture in this vLLM",
    category=Category.STARTUP,
    check=c.on_phrase(UNQUANTIZED_ARCH, _unquantized_finding),
    needs=("events",),
    page=RulePage(
        checks="vLLM 0.2's `Quantization is not supported for <class '…ForCausalLM'>.`, alone or as pydantic 1 "
        "printed it (`… (type=value_error)`).",
        why="A quantized checkpoint of an architecture the release cannot quantize never starts, whatever the flags.",
        example="`Quantization is not supported for <class 'vllm.model_executor.models.bloom.BloomForCausalLM'>. "
        "(type=value_error)` (vllm#1711: bloomz-3b AWQ; BLOOM support came in vllm PR #1714).",
        fix="Upgrade vLLM, or serve the unquantized checkpoint.",
        limits="The words name the class, not the release that added it.",
        references=["https://github.com/vllm-project/vllm/issues/1711"],
    ),
)

RULES: list[Rule] = [RULE_UNQUANTIZED_ARCH]
