"""OP-7.177: xgrammar's CPU kernel refused the logits vLLM handed it while applying a structured-output mask.

Why a rule of its own: with structured output (a JSON schema, a regex, a tool call under `tool_choice`), vLLM masks
the logits with the grammar's bitmask before sampling, through xgrammar's `apply_token_bitmask_inplace`. Where the
logits are on the CPU (vLLM's CPU backend, macOS, and plugins such as vllm-ascend and Gaudi's fork that mask there),
xgrammar runs its CPU kernel, which is stricter than its GPU one in two ways vLLM tripped over:
- it takes float32 logits only (`ValueError: logits must be of type float32`), so a model served in bfloat16 or
  float16 failed every structured request: vllm PR #12152 (V0's xgrammar processor, merged January 2025) and vllm PR
  #32384 (V1's apply_grammar_bitmask on macOS, merged January 2026, vllm#31901) convert the logits first;
- it takes the rows to mask as a list of ints, not a tensor (`TypeError: apply_token_bitmask_inplace_cpu():
  incompatible function arguments … Invoked with types: …, torch.Tensor`): vLLM's asynchronous scheduling (vllm PR
  #27614) began passing a tensor, which vllm-ascend#5524 traced and vllm-ascend PR #6151 and xgrammar PR #507 fixed.
Either way the request that asked for structured output fails (often the engine with it) while plain requests run.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

_FLOAT32_ONLY = "logits must be of type float32"
_INDICES_REFUSED = "apply_token_bitmask_inplace_cpu(): incompatible function arguments"
REFUSED = re.compile(rf"{re.escape(_FLOAT32_ONLY)}|{re.escape(_INDICES_REFUSED)}")
_V0_BACKEND = "--guided-decoding-backend outlines"


def _xgrammar_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    dtype = match.group(0) == _FLOAT32_ONLY
    return RULE_XGRAMMAR_CPU.finding(
        Severity.HIGH,  # the structured requests fail; plain ones are served
        "xgrammar's CPU kernel refused the logits vLLM passed to apply a structured-output mask: "
        + (
            "it takes float32 logits only, and this model's are not"
            if dtype
            else "it takes the rows to mask as a list, and vLLM's asynchronous scheduling passed a tensor"
        ),
        summary="Structured output (a JSON schema, a regex, a forced tool call) masks the logits with xgrammar's "
        "bitmask before sampling; where the logits are on the CPU (vLLM's CPU backend, macOS, vllm-ascend, Gaudi) "
        "xgrammar runs its CPU kernel, which "
        + (
            "accepts float32 logits only: a bfloat16 or float16 model fails every structured request until vLLM "
            "converts them first (vllm PR #12152 for V0, PR #32384 for V1 on macOS)."
            if dtype
            else "accepts the rows to mask only as a list of ints; vLLM's asynchronous scheduling (vllm PR #27614) "
            "passes a tensor (vllm-ascend#5524, fixed in vllm-ascend PR #6151 and xgrammar PR #507)."
        )
        + " Requests without structured output are not affected.",
        evidence=[c.log_evidence(event, name="xgrammar's refusal", value=match.group(0))],
        changes=[_stopgap(dtype)],
        actions=_actions(dtype),
        confidence=0.85,
    )


def _stopgap(dtype: bool) -> ConfigChange:
    if dtype:
        return ConfigChange(
            flag="--dtype",
            current=None,
            proposed="float32",
            reason="the logits are then float32 already, as xgrammar's CPU kernel requires (V1 masks through xgrammar "
            "whatever the structured-output backend, so changing the backend does not avoid it)",
            cost="twice the weights' memory and slower matrix multiplies than bfloat16 on the CPU",
        )
    return ConfigChange(
        flag="--async-scheduling",
        current=None,
        proposed="false",
        reason="synchronous scheduling hands xgrammar the rows to mask as a list, as its CPU kernel requires",
        cost="the scheduler no longer overlaps with the model step: a few percent of decode throughput",
    )


def _actions(dtype: bool) -> list[str]:
    if dtype:
        return [
            "Upgrade vLLM to a release with the conversion (after vllm PR #32384 for V1, January 2026: vLLM 0.32's "
            "apply_grammar_bitmask converts CPU logits to float32 itself; PR #12152 for V0).",
            f"On V0 releases (before 0.11) {_V0_BACKEND} masks without xgrammar.",
        ]
    return [
        "Upgrade the platform plugin and xgrammar to releases with the fix (vllm-ascend after PR #6151, January "
        "2026; xgrammar after PR #507), or run the vLLM release your plugin release was built against.",
    ]


RULE_XGRAMMAR_CPU = Rule(
    code="OP-7.177",
    title="xgrammar's CPU kernel refused the logits of a structured-output request",
    category=Category.CONFIGURATION,
    check=c.on_phrase(REFUSED, _xgrammar_finding),
    needs=("events",),
    page=RulePage(
        checks=f"xgrammar's `ValueError: {_FLOAT32_ONLY}` and `TypeError: {_INDICES_REFUSED}`.",
        why="Structured requests fail (often with the engine) on platforms that mask the logits on the CPU, while "
        "plain requests run, so the fault reads as the model's or the platform's.",
        example="`ValueError: logits must be of type float32` with guided decoding on a bfloat16 model on CPU (vllm "
        "PR #12152); `TypeError: apply_token_bitmask_inplace_cpu(): incompatible function arguments` on vllm-ascend "
        "0.13 with asynchronous scheduling (vllm-ascend#5524).",
        fix="A vLLM (or plugin, or xgrammar) release with the fix; until then `--dtype float32` on the CPU backend (or "
        "outlines on V0), or `--no-async-scheduling`.",
        limits="Which releases carry each fix is known from the pull requests' merge dates, not from release notes.",
        references=[
            "https://github.com/vllm-project/vllm/pull/12152",
            "https://github.com/vllm-project/vllm/pull/32384",
            "https://github.com/vllm-project/vllm-ascend/issues/5524",
            "https://github.com/vllm-project/vllm-ascend/pull/6151",
            "https://github.com/mlc-ai/xgrammar/pull/507",
        ],
    ),
)

RULES: list[Rule] = [RULE_XGRAMMAR_CPU]
