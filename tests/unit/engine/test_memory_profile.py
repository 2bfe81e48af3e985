"""KV pool sizing and vLLM 0.33's exact startup failure texts."""

from __future__ import annotations

import pytest

from engine.core.errors import EngineStartupError
from engine.model.memory_profile import max_concurrency, plan_kv_cache

GIB = 1 << 30
MIB = 1 << 20


def test_blocks_are_what_is_left_after_weights_and_activations():
    budget = plan_kv_cache(
        requested_bytes=GIB,
        weights_bytes=256 * MIB,
        activation_bytes=256 * MIB,
        bytes_per_block=MIB,
        block_size=16,
        max_model_len=1024,
    )
    assert budget.available_bytes == 512 * MIB
    assert budget.num_blocks == 512


def test_no_memory_left_gives_vllms_exact_text():
    with pytest.raises(EngineStartupError) as err:
        plan_kv_cache(
            GIB, weights_bytes=GIB, activation_bytes=MIB, bytes_per_block=MIB, block_size=16, max_model_len=1024
        )
    assert str(err.value) == (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )
    assert err.value.user_facing


def test_max_model_len_that_does_not_fit_gives_vllms_text_with_the_estimated_length():
    # 100 blocks of 16 tokens fit; 4096 tokens need 256 blocks
    with pytest.raises(EngineStartupError) as err:
        plan_kv_cache(
            requested_bytes=300 * MIB,
            weights_bytes=100 * MIB,
            activation_bytes=100 * MIB,
            bytes_per_block=MIB,
            block_size=16,
            max_model_len=4096,
        )
    assert str(err.value) == (
        "To serve at least one request with the model's max seq len (4096), (0.25 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (0.1 GiB). Based on the available memory, the "
        "estimated maximum model length is 1600. Try increasing `gpu_memory_utilization` (which also controls "
        "CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )


def test_override_replaces_the_block_count_but_must_still_fit_one_request():
    budget = plan_kv_cache(GIB, 0, 0, MIB, 16, 64, num_gpu_blocks_override=4)
    assert budget.num_blocks == 4
    with pytest.raises(EngineStartupError, match=r"estimated maximum model length is 48\."):
        plan_kv_cache(GIB, 0, 0, MIB, 16, 64, num_gpu_blocks_override=3)


def test_max_concurrency_is_blocks_over_blocks_per_max_len_request():
    assert max_concurrency(num_blocks=1017, block_size=16, max_model_len=1600) == pytest.approx(10.17)
