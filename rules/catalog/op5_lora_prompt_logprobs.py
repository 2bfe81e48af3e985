"""OP-5.71: LoRA's logits path met more rows than it mapped: prompt_logprobs with LoRA adapters.

Why a rule of its own: vLLM's LoRA logits processor (vllm/lora/layers/logits_processor.py) maps the adapters' extra
vocabulary onto one row of logits per sampled sequence. prompt_logprobs asks for logits at every prompt token, so the
rows it meets outnumber the rows it mapped, and PyTorch refuses the copy: `RuntimeError: The expanded size of the
tensor (63) must match the existing size (3) at non-singleton dimension 0` in `_get_logits`. vLLM's own
multilora_inference.py example asked for prompt_logprobs and failed this way on the V1 engine: "V1 LoRA is
incompatible with prompt_logprobs causing errors" (vllm PR #16630, for vllm#16576 on 0.8.3), and vllm PR #29956 took
prompt_logprobs out of the example (vllm#29955). The error's words alone are any tensor copy's; in LoRA's component,
with the target rows more than the existing ones, they are this.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

LORA = "LoRA adapters"  # rules/components.py's name for vllm/lora/
_EXPANDED = re.compile(
    r"The expanded size of the tensor \((?P<rows>\d+)\) must match the existing size \((?P<mapped>\d+)\)"
)


def _check(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        found = _EXPANDED.search(event.message or "") if event.component == LORA else None
        if found is not None and int(found["rows"]) > int(found["mapped"]):
            return [_finding(event, int(found["rows"]), int(found["mapped"]))]
    return []


def _finding(event: LogEvent, rows: int, mapped: int) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        f"LoRA's logits path met {rows} rows of logits where it mapped {mapped}: prompt_logprobs with LoRA "
        "adapters, which vLLM's V1 LoRA logits path does not take",
        summary="vLLM's LoRA logits processor maps the adapters' vocabulary onto one row of logits per sampled "
        f"sequence ({mapped} here); prompt_logprobs asks for logits at every prompt token ({rows} rows), and the copy "
        "fails. vLLM's multilora example did this on V1 (vllm#16576, 0.8.3: 'V1 LoRA is incompatible with "
        "prompt_logprobs', PR #16630); PR #29956 took prompt_logprobs out of the example (vllm#29955).",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[
            "Drop prompt_logprobs from the SamplingParams of requests that use a LoRA adapter (in the offline script, "
            "or the request's prompt_logprobs field), or ask for prompt logprobs from the base model without the "
            "adapter.",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-5.71",
    title="prompt_logprobs with LoRA adapters: LoRA's logits path meets more rows than it mapped",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="`The expanded size of the tensor (N) must match the existing size (M)` with N > M, in LoRA's component "
        "(a frame under vllm/lora/, or the text naming LoRA).",
        why="LoRA's logits processor maps one row per sequence; prompt_logprobs asks for a row per prompt token (vllm "
        "PR #16630: V1 LoRA is incompatible with prompt_logprobs).",
        example="`RuntimeError: The expanded size of the tensor (63) must match the existing size (3) at non-singleton "
        "dimension 0.  Target sizes: [63, 256].  Tensor sizes: [3, 256]` in lora/layers/logits_processor.py's "
        "_get_logits, running examples/offline_inference/multilora_inference.py (vllm#29955).",
        fix="Drop prompt_logprobs from LoRA requests.",
        limits="Reads the error's sizes and component; the request's SamplingParams are rarely in the text.",
        references=["https://github.com/vllm-project/vllm/issues/29955"],
    ),
)

RULES: list[Rule] = [RULE]
