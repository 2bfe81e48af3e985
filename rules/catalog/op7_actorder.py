"""OP-7.184: a compressed-tensors checkpoint asks for activation ordering its quantization strategy cannot take.

Why a rule of its own: llm-compressor's GPTQ modifier writes `actorder` (activation ordering) into the checkpoint's
quantization_config, and compressed-tensors, which vLLM uses to read that config, allows it only with the `group` or
`tensor_group` strategy. A W8A8 or FP8 checkpoint (a channel or tensor strategy) written with `actorder: static`
then fails vLLM's configuration at load, in compressed-tensors' words: `Value error, Must use group or tensor_group
quantization strategy in order to apply activation ordering` (vllm-project/llm-compressor#2805, llm-compressor 0.11's
GPTQ in W8A8 and FP8 schemes), or as `ValueError: {'actorder': static}` (llm-compressor#2843: the reporter fixed it by
setting actorder to null in config.json, or by a newer compressed-tensors).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

ACTORDER_REFUSED = re.compile(
    r"Must use group or tensor_group quantization strategy in order to apply|\{'actorder': '?\w+'?\}"
)


def _actorder_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_ACTORDER.finding(
        Severity.CRITICAL,
        "the checkpoint's quantization_config asks for activation ordering (actorder) with a strategy that cannot "
        "take it: set actorder to null in its config.json",
        summary="llm-compressor's GPTQ modifier wrote `actorder` into the checkpoint's quantization config; "
        "compressed-tensors, which reads that config for vLLM, allows activation ordering only with the group or "
        "tensor_group strategy, so a W8A8 or FP8 checkpoint (channel or tensor strategy) carrying it is refused when "
        "vLLM builds its configuration. The weights are fine.",
        evidence=[c.log_evidence(event, name="compressed-tensors' refusal", value=match.group(0))],
        actions=[
            "Edit the checkpoint's config.json: under quantization_config's config_groups, set `\"actorder\": null` "
            "for the weights' scheme (vllm-project/llm-compressor#2843: the reporter's fix), then serve it again.",
            "Or install a compressed-tensors release that ignores actorder for those strategies (the same reporter's "
            "other fix); and when quantizing again, leave actorder off for channel- or tensor-wise schemes.",
        ],
        confidence=0.8,
    )


RULE_ACTORDER = Rule(
    code="OP-7.184",
    title="a compressed-tensors checkpoint asks for activation ordering its strategy cannot take",
    category=Category.QUANTIZATION,
    check=c.on_phrase(ACTORDER_REFUSED, _actorder_finding),
    needs=("events",),
    page=RulePage(
        checks="compressed-tensors' `Must use group or tensor_group quantization strategy in order to apply "
        "activation ordering` and `ValueError: {'actorder': static}`.",
        why="A quantized checkpoint fails at load with a quantization library's words, not vLLM's.",
        example="`ValueError: {'actorder': static}` loading an INT8 W8A8 Qwen2.5-14B quantized with SmoothQuant and "
        "GPTQ (vllm-project/llm-compressor#2843: actorder null in config.json fixed it).",
        fix='`"actorder": null` in the checkpoint\'s quantization_config, or a newer compressed-tensors.',
        limits="Which compressed-tensors release accepts it is not named in the threads.",
        references=[
            "https://github.com/vllm-project/llm-compressor/issues/2843",
            "https://github.com/vllm-project/llm-compressor/issues/2805",
        ],
    ),
)

RULES: list[Rule] = [RULE_ACTORDER]
