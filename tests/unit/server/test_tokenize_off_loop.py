"""Tokenizing a prompt never blocks the event loop (issue #17: a 10 MB prompt stalled /health).

A tokenizer that blocks until released stands in for a slow one; the test checks order, not
time: another coroutine runs to completion while `encode` is still inside the tokenizer.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from engine.api.errors import TEXT_ENCODE_MESSAGE, ApiError
from engine.api.serving import OpenAIServing, ServingOptions


class _BlockingTokenizer:
    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        self.entered.set()
        assert self.release.wait(30), "the test never released the tokenizer"
        return [1] * len(text)


def _serving(tokenizer) -> OpenAIServing:
    return OpenAIServing(None, tokenizer, ServingOptions(served_model_name="m", model_path="m", max_model_len=8))


def test_other_coroutines_run_while_a_prompt_is_tokenized():
    tokenizer = _BlockingTokenizer()
    serving = _serving(tokenizer)

    async def scenario() -> list[str]:
        order: list[str] = []
        encoding = asyncio.create_task(serving.encode("x" * 1000, True))
        await asyncio.get_running_loop().run_in_executor(None, tokenizer.entered.wait, 30)
        order.append("health answered while tokenizing")  # the loop is free: we got here
        tokenizer.release.set()
        ids = await encoding
        order.append(f"encoded {len(ids)}")
        return order

    assert asyncio.run(scenario()) == ["health answered while tokenizing", "encoded 1000"]


@pytest.mark.parametrize("text", ["a\ud800b", "\udc00 alone", "ok\udfff", "\ud83d then text"])
def test_lone_surrogate_is_vllms_400_not_a_tokenizer_crash(text):
    serving = _serving(_BlockingTokenizer())
    with pytest.raises(ApiError) as caught:
        asyncio.run(serving.encode(text, True))
    assert caught.value.status == 400 and caught.value.message == TEXT_ENCODE_MESSAGE and caught.value.param is None
