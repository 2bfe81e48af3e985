"""VC-6: pydantic refused a value outside a field's fixed list, and no flag of vLLM's is that field.

Why a rule of its own: pydantic words a Literal field's refusal the same for every model it validates (`Input should
be 'native', 'fastdeploy-server', 'vllm-server' or 'sglang-server' [type=literal_error, input_value='vllm', …]`),
and its detail line is often all a person pastes. When the listed values are a vLLM flag's, OP-7.47 names the flag;
when they are none of vLLM's, the field is another program's (a framework's configuration around vLLM, a client's
settings) or a request's, which the line alone does not say. What it does say is the value refused and the values
taken, and a misspelling is most often the nearest of them: PaddlePaddle/PaddleOCR#16897's generated PaddleX config
said `backend: vllm` where PaddleX takes `vllm-server`, which its reporter set by hand to get past it.
"""

from __future__ import annotations

import difflib

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

CLOSE_ENOUGH = 0.5  # difflib's ratio for a listed value to be named as the one meant


def _choice_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    value = event.argument_value or ""
    choices = [choice.strip() for choice in (event.accepted_instead or "").split(",")]
    close = difflib.get_close_matches(value, choices, n=1, cutoff=CLOSE_ENOUGH)
    return RULE_FIELD_CHOICE.finding(
        Severity.HIGH,
        f"a configuration refused {value!r}: it takes only {', '.join(choices)}"
        + (f" (did you mean {close[0]!r}?)" if close else ""),
        summary="pydantic refused a field typed with a fixed list of values. None of vLLM's flags takes these "
        "values, so the field is another program's (a framework's configuration around vLLM, a client's settings) "
        "or a request's; the header above the line (`N validation error for <Model>`) names which.",
        evidence=[c.log_evidence(event, name="value refused", value=value)],
        actions=[f"Set it to one of: {', '.join(choices)}" + (f"; {close[0]} is the nearest." if close else ".")],
        confidence=0.6,
    )


RULE_FIELD_CHOICE = Rule(
    code="VC-6",
    title="a value outside a field's fixed list, in a field that is no flag of vLLM's",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.FIELD_CHOICE_REFUSED, _choice_finding),
    needs=("events",),
    page=RulePage(
        checks="pydantic's detail line `Input should be 'a', 'b' or 'c' [type=literal_error, input_value='x', …]` "
        "pasted alone, when no flag of vLLM 0.32 takes the listed values.",
        why="The value refused and the values taken are in the line; the nearest listed value is most often the one "
        "meant.",
        example="`Input should be 'native', 'fastdeploy-server', 'vllm-server' or 'sglang-server' "
        "[type=literal_error, input_value='vllm', …]` (PaddlePaddle/PaddleOCR#16897: PaddleX takes vllm-server).",
        fix="One of the listed values, the nearest spelling first.",
        limits="Whose field it is (a framework's, a request's) is in the header above the line, not in the line; "
        "inside an error body the same words are a request's refusal (OP-5.28).",
        references=["https://github.com/PaddlePaddle/PaddleOCR/issues/16897"],
    ),
)

RULES: list[Rule] = [RULE_FIELD_CHOICE]
