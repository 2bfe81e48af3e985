"""OP-7.92: a framework's in-process vLLM wrapper where vLLM is not installed (BerriAI/litellm#2831's lines verbatim;
LangChain's and LlamaIndex's ImportError as their source raises it)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_in_process
from rules.evaluate import evaluate
from rules.facts import Facts

_LITELLM = "litellm.llms.vllm.VLLMError: No module named 'vllm'"
_PROXY = (
    "litellm.acompletion(model=vllm/mistralai/Mistral-7B-Instruct-v0.2) Exception VLLMException - No module named "
    "'vllm'"
)
_CLASS = "ImportError: Could not import vllm python package. Please install it with `pip install vllm`."


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_litellms_vllm_route_points_at_hosted_vllm():
    for line in (_LITELLM, _PROXY):
        top = evaluate(_facts(line)).top
        assert top.rule == "OP-7.92", line
        assert "`hosted_vllm/`" in top.title
        assert "`hosted_vllm/<the served model name>`" in top.actions[0] and "`api_base`" in top.actions[0]
        assert "install vLLM in the same environment" in top.actions[1]


def test_a_wrapper_class_points_at_the_server_client_classes():
    top = evaluate(_facts(_CLASS)).top
    assert top.rule == "OP-7.92"
    assert "`VLLMOpenAI(" in top.actions[0] and "`VllmServer(" in top.actions[0]


def test_the_whole_litellm_traceback_keeps_the_wrapper_first():
    lines = [
        _PROXY,
        '  File "/usr/local/lib/python3.11/site-packages/litellm/llms/vllm.py", line 28, in validate_environment',
        "    from vllm import LLM, SamplingParams  # type: ignore",
        "ModuleNotFoundError: No module named 'vllm'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.11/site-packages/litellm/llms/vllm.py", line 34, in validate_environment',
        "    raise VLLMError(status_code=0, message=str(e))",
        _LITELLM,
    ]
    assert evaluate(_facts(*lines)).top.rule == "OP-7.92"


def test_a_missing_submodule_of_vllm_is_not_the_wrapper():
    facts = _facts("litellm.llms.vllm.VLLMError: No module named 'vllm._C'")
    assert op7_in_process.RULE_IN_PROCESS.evaluate(facts) == []
