"""Fixtures shared by the engine unit tests."""

from __future__ import annotations

import pytest

from engine.core.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from tests.helpers.tiny_model import build_tiny_model


@pytest.fixture(scope="module")
def tiny_engine(tmp_path_factory) -> LLMEngine:
    """A real engine on the tiny random Llama, float32, for tests that drive the AsyncEngine thread."""
    config = EngineConfig(
        model=str(build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))),
        dtype="float32",
        device_memory_gib=0.25,
        max_model_len=64,
    )
    return LLMEngine(config)
