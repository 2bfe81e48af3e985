"""OP-7.12: an IndexError where vLLM's server builds logprobs, and the platform plugin whose runner left them out."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_plugins
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import config

# vllm-metal#331, the reporter's completions block
TRACEBACK = [
    'File "vllm/entrypoints/openai/completion/serving.py", line 591, in _create_completion_logprobs',
    "    step_top_logprobs = top_logprobs[i]",
    "                        ~~~~~~~~~~~~^^^",
    "IndexError: list index out of range",
]


def test_an_mlx_model_names_vllm_metal_and_its_fix_above_the_unplaced_error():
    facts = Facts(
        events=parse_lines(TRACEBACK).events, config=config(model="mlx-community/Mistral-7B-Instruct-v0.3-4bit")
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.12" and "vllm-metal's model runner (the Metal platform plugin)" in top.title
    assert top.actions[0].startswith("Upgrade vllm-metal (vllm-metal#332")
    assert top.evidence[0].value == "step_top_logprobs = top_logprobs[i]"


def test_the_platform_line_vllm_prints_names_the_plugin_and_without_one_the_finding_says_it_cannot():
    activated = parse_lines(["INFO 05-02 10:00:00 [__init__.py:282] Platform plugin ascend is activated", *TRACEBACK])
    [named] = op7_plugins.RULE_MISSING_LOGPROBS.evaluate(Facts(events=activated.events))
    assert "vllm-ascend's model runner" in named.title and named.confidence == 0.8
    [unnamed] = op7_plugins.RULE_MISSING_LOGPROBS.evaluate(Facts(events=parse_lines(TRACEBACK).events))
    assert unnamed.title.endswith("(IndexError in vLLM's logprobs response)") and unnamed.confidence == 0.6


def test_an_index_error_elsewhere_is_not_a_missing_logprob():
    other = ['File "vllm/v1/engine/core.py", line 9, in step', "    x = outputs[i]"]
    other.append("IndexError: list index out of range")
    assert op7_plugins.RULE_MISSING_LOGPROBS.evaluate(Facts(events=parse_lines(other).events)) == []
