"""OP-5.46: vLLM built a response its own OpenAI-compatible schema refuses: the server's fault, not the request's.

Why a rule of its own: vLLM builds every response with the same pydantic models that describe OpenAI's API
(ChatCompletionResponse, ChatCompletionStreamResponse, PoolingResponseData …), and pydantic checks what vLLM puts
in them. When that check fails the words look like a refused request (`3 validation errors for PoolingResponseData`,
HTTP 400 or 500), but the field pydantic names is one vLLM filled: the release has a bug for this input. In
vllm-project/vllm#33873 (0.15.0, bge-m3) a /pooling token_classify input of fewer than four tokens gave a float where
the model declares a list; in vllm-project/vllm#42363 (0.20.2) the stream tried to validate the engine's error
payload as a ChatCompletionStreamResponse once the engine had died, so the cause was the engine's error before it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_response_schema(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.RESPONSE_SCHEMA_FAILED)
    if not events:
        return []
    event = events[0]
    model = event.message or "a response model"
    field = f" ({event.request_field})" if event.request_field else ""
    engine_died = bool(facts.events_of(LogEventKind.ENGINE_DEAD))
    return [
        RULE.finding(
            Severity.MEDIUM if engine_died else Severity.HIGH,
            f"vLLM built a response its own schema refuses: {model}{field}; the server's bug, not the request",
            summary=f"{model} is one of the models vLLM builds its responses with, and pydantic refused what vLLM put "
            "in it: the field it names is vLLM's output, not the client's input, so the client got an error it did "
            "not cause. This release mishandles something about the request's input (vllm#33873: a pooling input of "
            "fewer than four tokens gave a float where a list belongs)"
            + (
                "; here the engine had died, and the stream tried to validate its error as a response "
                "(vllm#42363): the engine's error before it is the cause."
                if engine_died
                else "."
            ),
            evidence=[c.log_evidence(event, name="response model", value=model)],
            actions=[
                "Read the engine's error before this line first, if there is one: a response failing after the "
                "engine died is that death's consequence."
                if engine_died
                else "Find the input that triggers it (the request logged with it, or the smallest one that fails) and "
                "upgrade vLLM: a later release may build the response right; report it with that input if not.",
                "Until then, keep requests away from the shape that triggers it (in vllm#33873, inputs under four "
                "tokens to token_classify).",
            ],
            confidence=0.7,
        )
    ]


RULE = Rule(
    code="OP-5.46",
    title="vLLM built a response its own schema refuses",
    category=Category.RELIABILITY,
    check=_check_response_schema,
    needs=("events",),
    page=RulePage(
        checks="pydantic's `N validation errors for <…Response…>` (ChatCompletionResponse, "
        "ChatCompletionStreamResponse, PoolingResponseData …), in a 400 or 500's message or the API server's log.",
        why="The words read like a refused request, but the model is one vLLM fills: the client cannot fix its "
        "request to avoid a field it never sent.",
        example='`"message": "3 validation errors for PoolingResponseData\\ndata.list[list[float]]\\n  Input should be '
        'a valid list …"` for a /pooling request of fewer than four tokens (vllm#33873, 0.15.0).',
        fix="Upgrade vLLM; meanwhile avoid the input that triggers it. After an engine death, the engine's error.",
        limits="Which input triggers it is not in the words; the response model and its first field are.",
        references=[
            "https://github.com/vllm-project/vllm/issues/33873",
            "https://github.com/vllm-project/vllm/issues/42363",
        ],
    ),
)

RULES: list[Rule] = [RULE]
