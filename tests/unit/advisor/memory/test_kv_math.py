"""KV bytes per token and the block/concurrency arithmetic (GQA, MLA, FP8 KV, TP, PP, windows)."""

import math

import pytest

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.memory.budget import LaunchConfig, estimate_memory
from advisor.memory.terms import blocks_per_request, kv_bytes_per_token_per_gpu

H100 = resolve_gpu("H100-SXM-80GB")


# docs/reference.md §4.2 "KV/token BF16" column.
@pytest.mark.parametrize(
    "name, expected",
    [
        ("Llama-3.1-8B", 131_072),
        ("Llama-3.1-70B", 327_680),
        ("Qwen2.5-7B", 57_344),
        ("Qwen2.5-72B", 327_680),
        ("Mistral-7B", 131_072),
        ("Mixtral-8x7B", 131_072),
        ("DeepSeek-V3", 70_272),
    ],
)
def test_bf16_kv_bytes_per_token_match_the_reference_table(name, expected):
    assert kv_bytes_per_token_per_gpu(resolve_model(name), 2, tp=1, pp=1) == expected


def test_mla_latent_is_not_divided_by_tensor_parallelism():
    deepseek = resolve_model("DeepSeek-V3")
    assert kv_bytes_per_token_per_gpu(deepseek, 2, tp=8, pp=1) == 61 * 576 * 2


def test_gqa_kv_heads_are_split_by_tensor_parallelism():
    llama = resolve_model("Llama-3.1-8B")
    assert kv_bytes_per_token_per_gpu(llama, 2, tp=2, pp=1) == 131_072 // 2
    assert kv_bytes_per_token_per_gpu(llama, 2, tp=8, pp=1) == 131_072 // 8


def test_kv_heads_are_replicated_when_tp_exceeds_them():
    qwen = resolve_model("Qwen3-30B-A3B")  # 32 query heads, 4 KV heads
    at_tp4 = estimate_memory(qwen, H100, LaunchConfig(tensor_parallel_size=4)).kv_bytes_per_token
    at_tp8 = estimate_memory(qwen, H100, LaunchConfig(tensor_parallel_size=8)).kv_bytes_per_token
    assert at_tp8 == at_tp4 == 2 * 48 * 1 * 128 * 2


def test_pipeline_parallelism_splits_layers_rounding_up():
    llama = resolve_model("Llama-3.1-8B")
    assert kv_bytes_per_token_per_gpu(llama, 2, tp=1, pp=2) == 131_072 // 2
    assert kv_bytes_per_token_per_gpu(llama, 2, tp=1, pp=3) == 2 * math.ceil(32 / 3) * 8 * 128 * 2


def test_fp8_kv_cache_halves_bytes_and_doubles_kv_tokens():
    llama = resolve_model("Llama-3.1-8B")
    auto = estimate_memory(llama, H100, LaunchConfig())
    fp8 = estimate_memory(llama, H100, LaunchConfig(kv_cache_dtype="fp8"))
    assert fp8.kv_bytes_per_token == auto.kv_bytes_per_token // 2
    assert fp8.kv_pool_gib == auto.kv_pool_gib
    assert abs(fp8.num_blocks - 2 * auto.num_blocks) <= 1


def test_tp2_more_than_doubles_llama_8b_kv_tokens_per_gpu():
    """Half the weights and half the KV heads per GPU; NCCL buffers cost ~2.1 GiB."""
    llama = resolve_model("Llama-3.1-8B")
    tp1 = estimate_memory(llama, H100, LaunchConfig())
    tp2 = estimate_memory(llama, H100, LaunchConfig(tensor_parallel_size=2))
    assert tp2.weights_gib == pytest.approx(tp1.weights_gib / 2, abs=0.05)
    assert tp2.non_torch_gib == pytest.approx(2.1)
    assert tp2.kv_cache_tokens > 2 * tp1.kv_cache_tokens


def test_max_concurrency_is_blocks_over_blocks_per_request():
    """#15676 (vLLM 0.8.x): 54,048 tokens at 4,096 per request → 13.20x."""
    llama = resolve_model("Llama-3.1-8B")
    assert round(54_048 // 16 / blocks_per_request(llama, 4096, 16, 8192), 2) == 13.20


def test_sliding_window_request_needs_only_window_plus_a_chunk():
    window = resolve_model("Mistral-7B-v0.1")
    full = resolve_model("Mistral-7B")
    assert blocks_per_request(full, 32768, 16, 2048) == 2048
    assert blocks_per_request(window, 32768, 16, 2048) == math.ceil((4095 + 2048) / 16) + 1
    assert blocks_per_request(window, 1000, 16, 2048) == math.ceil(1000 / 16)


def test_sliding_window_model_serves_more_long_requests():
    config = LaunchConfig(max_model_len=32768)
    window = estimate_memory(resolve_model("Mistral-7B-v0.1"), H100, config)
    full = estimate_memory(resolve_model("Mistral-7B"), H100, config)
    # H100 default max_num_batched_tokens 8192: window 4095 + 8192 tokens → 769 blocks, not 2048
    assert window.max_concurrency == pytest.approx(window.num_blocks / 769, abs=0.01)
    assert window.max_concurrency > 2.5 * full.max_concurrency


def test_largest_fitting_max_model_len_is_the_whole_pool_for_full_attention():
    llama = resolve_model("Llama-3.1-8B")
    memory = estimate_memory(llama, resolve_gpu("L4"), LaunchConfig())
    assert memory.max_model_len_that_fits == memory.num_blocks * memory.block_size
    capped = estimate_memory(llama, resolve_gpu("L4"), LaunchConfig(max_model_len=memory.max_model_len_that_fits))
    assert capped.fits
    over = estimate_memory(llama, resolve_gpu("L4"), LaunchConfig(max_model_len=memory.max_model_len_that_fits + 16))
    assert not over.fits


def test_largest_fitting_max_model_len_is_capped_at_the_model_limit():
    memory = estimate_memory(resolve_model("Qwen2.5-7B"), resolve_gpu("H200"), LaunchConfig())
    assert memory.max_model_len_that_fits == 32768


def test_kv_tokens_log_figure_is_blocks_times_block_size_before_0_21_and_concurrency_after():
    llama = resolve_model("Llama-3.1-8B")
    old = estimate_memory(llama, H100, LaunchConfig(vllm_version="0.20", max_model_len=1000))
    new = estimate_memory(llama, H100, LaunchConfig(vllm_version="0.21", max_model_len=1000))
    assert old.kv_cache_tokens == old.num_blocks * 16
    assert new.kv_cache_tokens == int(new.num_blocks / math.ceil(1000 / 16) * 1000)


def test_estimate_is_pure_same_inputs_same_answer():
    llama = resolve_model("Llama-3.1-8B")
    config = LaunchConfig(max_model_len=8192)
    assert estimate_memory(llama, H100, config) == estimate_memory(llama, H100, config)
