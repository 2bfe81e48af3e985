"""OP-5.49: LiteLLM given a model name without its provider prefix (it never called the server)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_litellm_provider
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_bare_model_name_gets_the_hosted_vllm_prefix_and_the_servers_url():
    # openinterpreter/openinterpreter#1406, verbatim
    line = (
        "litellm.exceptions.BadRequestError: litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM "
        "provider you are trying to call. You passed model=my_llm"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.49" and "model=my_llm" in top.title
    assert '"hosted_vllm/my_llm"' in top.actions[0] and "api_base" in top.actions[0]


def test_the_refusal_cut_before_the_model_still_names_the_prefix():
    top = evaluate(_facts(["litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider"])).findings[0]
    assert top.rule == "OP-5.49" and '"hosted_vllm/<served model name>"' in top.actions[0]


def test_other_litellm_errors_are_not_read_as_a_missing_provider():
    line = "litellm.exceptions.BadRequestError: litellm.BadRequestError: OpenAIException - Error code: 400"
    assert op5_litellm_provider.RULE.evaluate(_facts([line])) == []
