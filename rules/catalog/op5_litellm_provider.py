"""OP-5.49: LiteLLM was given a model name without the provider that says how to call it.

Why a rule of its own: LiteLLM routes a call by the prefix of its model name (`openai/…`, `hosted_vllm/…`), and a
bare name (the served model's name as vLLM lists it) matches no provider, so LiteLLM refuses before any request
reaches the server: `LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed
model=my_llm` (openinterpreter/openinterpreter#1406, pointed at a vLLM server). vLLM's own LiteLLM guide
(docs.vllm.ai, deployment/frameworks/litellm) calls the prefix necessary: `model="hosted_vllm/<served name>"` with
`api_base="http://<host>:<port>/v1"`; LiteLLM's `vllm/` prefix is another thing, vLLM run inside LiteLLM's own
process, which needs vLLM installed beside it.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NO_PROVIDER = re.compile(r"LLM Provider NOT provided\b(?:.*?You passed model=(?P<model>[^\s,]+))?", re.IGNORECASE)
PREFIX = "hosted_vllm/"


def _check_litellm_provider(facts: Facts) -> list[Finding]:
    refused = c.first_match(facts, NO_PROVIDER)
    if refused is None:
        return []
    event, found = refused
    return [_finding(event, (found["model"] or "").rstrip(".'\"") or "<served model name>")]


def _finding(event: LogEvent, model: str) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        f"LiteLLM was given model={model} with no provider prefix: it refused before calling the server",
        summary="LiteLLM picks how to call a model from the prefix of its name; a bare name matches none, so "
        "nothing reached vLLM. A vLLM server is called through LiteLLM's hosted_vllm provider (or its generic "
        "openai/ one) with the server's URL as api_base.",
        evidence=[c.log_evidence(event, name="the model LiteLLM was given", value=model)],
        actions=[
            f'Name the model "{PREFIX}{model}" (the part after the prefix is the name `GET /v1/models` on the '
            'server lists) and pass api_base="http://<host>:<port>/v1" (or HOSTED_VLLM_API_BASE); in a LiteLLM '
            "proxy's config, the same under litellm_params.",
            "openai/<name> with the same api_base also works against vLLM's OpenAI-compatible routes; `vllm/<name>` "
            "does not call a server: it runs vLLM inside LiteLLM's process.",
        ],
        confidence=0.9,
    )


RULE = Rule(
    code="OP-5.49",
    title="LiteLLM was given a model name without a provider",
    category=Category.CONFIGURATION,
    check=_check_litellm_provider,
    needs=("events",),
    page=RulePage(
        checks="LiteLLM's `LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed "
        "model=…`.",
        why="The request never reached vLLM: LiteLLM needs the provider in the model's name to know how to call it.",
        example="`litellm.BadRequestError: LLM Provider NOT provided. … You passed model=my_llm` "
        "(openinterpreter/openinterpreter#1406, against a vLLM server).",
        fix='model="hosted_vllm/<served name>" with api_base="http://<host>:<port>/v1" (vLLM\'s LiteLLM guide).',
        limits="The server's address is not in the words; the client's configuration holds it.",
        references=[
            "https://docs.vllm.ai/en/stable/deployment/frameworks/litellm/",
            "https://github.com/openinterpreter/openinterpreter/issues/1406",
        ],
    ),
)

RULES: list[Rule] = [RULE]
