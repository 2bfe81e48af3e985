"""Lines the seventh probe brought that lost part of their usual form on the way (verbatim from their threads):
backticks a rendered comment ate, the first sentence of torch's OOM, httpx's module prefix."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


def _top(line: str):
    return evaluate(Facts(events=parse_lines([line]).events)).top


def test_vllms_message_without_its_backticks_is_still_vllms_with_the_limit_it_needs():
    """hiyouga/LlamaFactory#7886: vLLM 0.8.4 writes `in --limit-mm-per-prompt`, but …` with one backtick."""
    top = _top(
        "ValueError: You set or defaulted to image=4 in --limit-mm-per-prompt, but passed 10 image items in the same "
        "prompt."
    )
    assert top.rule == "VC-1"
    [change] = top.changes
    assert (change.flag, change.proposed) == ("--limit-mm-per-prompt", "image=10")


def test_torchs_oom_from_its_second_sentence_is_an_oom():
    """vllm-project/vllm PR #57595: the paste begins at `Tried to allocate`."""
    line = (
        "Tried to allocate 136.00 MiB. GPU 0 has a total capacity of 22.36 GiB of which 120.88 MiB is free. ... If this"
    )
    top = _top(line)
    assert top.rule == "OP-1.8" and "tried 0.133 GiB > 0.118 GiB free" in top.title


def test_httpx_words_without_its_module_are_a_failed_connection():
    """langchain-ai/langsmith-model-server#8."""
    assert _top("ConnectError: All connection attempts failed").rule == "OP-5.34"
