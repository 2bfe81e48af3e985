"""The advisor's CPU-device estimate against the bundled engine's real KV pool.

`servops advise --gpu-memory-gib G --device cpu` must predict what `servops serve --device cpu
--device-memory-gib G` allocates, so an operator can size the engine's budget and triage can
predict the effect of a flag change on it. The engine here is the real one, in-process, on a
tiny random Llama built locally (no download).
"""

import pytest

from advisor.catalog.gpus import gpu_from_memory
from advisor.catalog.models import resolve_model
from advisor.memory.budget import LaunchConfig, estimate_memory
from engine.core.config import EngineConfig
from engine.core.errors import EngineStartupError
from engine.core.llm_engine import LLMEngine
from tests.helpers.server_process import tiny_model_dir  # noqa: F401  (session fixture)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("budget_gib, max_num_seqs", [(0.1, 256), (0.25, 32)])
def test_predicted_blocks_equal_the_engines_allocated_blocks(tiny_model_dir, budget_gib, max_num_seqs):  # noqa: F811
    engine = LLMEngine(
        EngineConfig(model=str(tiny_model_dir), device="cpu", device_memory_gib=budget_gib, max_num_seqs=max_num_seqs)
    )
    predicted = estimate_memory(
        resolve_model(str(tiny_model_dir)),
        gpu_from_memory(budget_gib, device="cpu"),
        LaunchConfig(max_num_seqs=max_num_seqs),
    )
    assert predicted.fits
    assert predicted.num_blocks == engine.num_total_blocks()


def test_too_small_a_budget_fails_with_the_same_text_in_both(tiny_model_dir):  # noqa: F811
    spec = resolve_model(str(tiny_model_dir))
    reference = estimate_memory(spec, gpu_from_memory(1.0, device="cpu"), LaunchConfig())
    budget_gib = (reference.weights_gib + reference.activation_gib) / 2  # below the non-KV memory
    with pytest.raises(EngineStartupError) as raised:
        LLMEngine(EngineConfig(model=str(tiny_model_dir), device="cpu", device_memory_gib=budget_gib))
    predicted = estimate_memory(spec, gpu_from_memory(budget_gib, device="cpu"), LaunchConfig())
    assert predicted.failure.startswith("No available memory for the cache blocks")
    assert predicted.failure == str(raised.value)


def test_a_pool_smaller_than_one_max_len_request_fails_with_the_same_text(tiny_model_dir):  # noqa: F811
    spec = resolve_model(str(tiny_model_dir))
    reference = estimate_memory(spec, gpu_from_memory(1.0, device="cpu"), LaunchConfig())
    overhead_gib = reference.weights_gib + reference.activation_gib
    half_a_request_gib = reference.kv_bytes_per_token * spec.max_position_embeddings / 2 / 1024**3
    budget_gib = (overhead_gib + half_a_request_gib) / 0.92  # leaves room for half of one request
    predicted = estimate_memory(spec, gpu_from_memory(budget_gib, device="cpu"), LaunchConfig())
    with pytest.raises(EngineStartupError) as raised:
        LLMEngine(EngineConfig(model=str(tiny_model_dir), device="cpu", device_memory_gib=budget_gib))
    assert predicted.failure.startswith("To serve at least one request")
    assert predicted.failure == str(raised.value)
