"""Smoke test on the embedded SmolLM2-135M-Instruct: `python -m engine serve` with no model.

Slow: the first run converts the bundled GGUF to a Hugging Face dir, and loading 135M
parameters on a busy 2-core box takes tens of seconds.
"""

from __future__ import annotations

import openai
import pytest

from tests.helpers.server_process import running_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_embedded_smollm2_answers_chat_and_completions_through_the_openai_client():
    with running_server(None, "--max-model-len", "1024", "--device-memory-gib", "1", startup_timeout_s=600) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="EMPTY", max_retries=0, timeout=300)
        assert [model.id for model in client.models.list().data] == ["SmolLM2-135M-Instruct"]

        chat = client.chat.completions.create(
            model="SmolLM2-135M-Instruct",
            temperature=0,
            max_tokens=30,
            messages=[{"role": "user", "content": "What is the capital of France?"}],
        )
        assert "Paris" in chat.choices[0].message.content
        assert chat.choices[0].finish_reason == "stop"
        assert chat.usage.total_tokens == chat.usage.prompt_tokens + chat.usage.completion_tokens

        pieces = []
        stream = client.completions.create(
            model="SmolLM2-135M-Instruct",
            prompt="The capital of France is",
            temperature=0,
            max_tokens=8,
            stream=True,
            stream_options={"include_usage": True},
        )
        usage = None
        for chunk in stream:
            pieces.extend(choice.text for choice in chunk.choices)
            usage = chunk.usage or usage
        assert "Paris" in "".join(pieces)
        assert usage.completion_tokens == 8 and usage.prompt_tokens == 5
