"""Each startup failure vLLM can raise for memory, with its version's exact text, and the
version-dependent defaults that move the KV budget."""

import pytest

from advisor.catalog import vllm_failures as failure_texts
from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.catalog.vllm_versions import (
    default_gpu_memory_utilization,
    default_max_num_batched_tokens,
    default_max_num_seqs,
    parse_version,
)
from advisor.errors import UserError
from advisor.memory.budget import LaunchConfig, estimate_memory

H100, L4 = resolve_gpu("H100"), resolve_gpu("L4")
LLAMA_8B, LLAMA_70B = resolve_model("Llama-3.1-8B"), resolve_model("Llama-3.3-70B")


def test_a_launch_with_room_fits_and_has_no_failure():
    memory = estimate_memory(LLAMA_8B, H100, LaunchConfig())
    assert memory.fits and memory.failure is None and memory.max_concurrency > 1


def test_no_cache_blocks_text_by_version():
    fp8 = {"quantization": "fp8", "gpu_memory_utilization": 0.9}
    old = estimate_memory(LLAMA_70B, H100, LaunchConfig(vllm_version="0.13", **fp8)).failure
    mid = estimate_memory(LLAMA_70B, H100, LaunchConfig(vllm_version="0.14", **fp8)).failure
    new = estimate_memory(LLAMA_70B, H100, LaunchConfig(vllm_version="0.33", **fp8)).failure
    assert old == (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
        "when initializing the engine."
    )
    assert mid == old + " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    assert "(this flag also controls CPU memory reservation on the CPU backend, despite its name)" in new


def test_max_seq_len_failure_names_the_length_and_the_fitting_estimate():
    memory = estimate_memory(LLAMA_8B, L4, LaunchConfig())  # 128K context on a 22 GiB GPU
    assert not memory.fits
    assert memory.failure.startswith(
        "To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed"
    )
    assert f"the estimated maximum model length is {memory.max_model_len_that_fits}." in memory.failure
    assert "(which also controls CPU memory on the CPU backend)" in memory.failure


def test_max_seq_len_text_for_0_22_plus_matches_a_real_log_verbatim():
    """A public vLLM log (0.22+ wording): max seq len 49152, 1.82 GiB needed, 1.68 available."""
    real = (
        "To serve at least one request with the model's max seq len (49152), (1.82 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (1.68 GiB). Based on the available memory, the "
        "estimated maximum model length is 45472. Try increasing `gpu_memory_utilization` (which also "
        "controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )
    assert failure_texts.max_seq_len_does_not_fit(parse_version("0.33"), 49152, 1.82, 1.68, 45472) == real


def test_no_cache_blocks_text_for_0_22_plus_matches_a_real_log_verbatim():
    real = (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )
    assert failure_texts.no_cache_blocks(parse_version("0.33")) == real


def test_max_seq_len_failure_keeps_the_models_s_typo_before_0_22():
    failure = estimate_memory(LLAMA_8B, L4, LaunchConfig(vllm_version="0.21")).failure
    assert "with the models's max seq len (131072), (16.0 GiB KV cache is needed" in failure


def test_max_seq_len_failure_has_no_estimate_in_0_8_0():
    failure = estimate_memory(LLAMA_8B, L4, LaunchConfig(vllm_version="0.8.0")).failure
    assert "(16.00 GiB KV cache is needed" in failure and "estimated maximum model length" not in failure


def test_weights_larger_than_the_gpu_fail_while_loading():
    new = estimate_memory(resolve_model("Llama-3.1-70B"), H100, LaunchConfig()).failure
    old = estimate_memory(resolve_model("Llama-3.1-70B"), H100, LaunchConfig(vllm_version="0.13")).failure
    assert new.startswith("Failed to load model - not enough GPU memory.")
    assert old.startswith("torch.OutOfMemoryError: CUDA out of memory.")


def test_free_memory_check_needs_free_memory_and_names_the_device_in_0_33():
    assert estimate_memory(LLAMA_8B, H100, LaunchConfig()).fits  # unknown free memory: not checked
    failure = estimate_memory(LLAMA_8B, H100, LaunchConfig(), free_memory_gib=40.0).failure
    assert failure.startswith(
        "Free memory on device cuda:0 (40.00/79.18 GiB) on startup is less than "
        "desired GPU memory utilization (0.92, 72.85 GiB)."
    )


def test_the_whole_gpu_never_passes_the_free_memory_check():
    """Its own CUDA context is allocated before the check, so a share of 1.0 fails whatever else runs."""
    failure = estimate_memory(LLAMA_8B, H100, LaunchConfig(gpu_memory_utilization=1.0)).failure
    assert failure.startswith("Free memory on device cuda:0 (") and "(1.0, 79.18 GiB)" in failure
    assert estimate_memory(LLAMA_8B, H100, LaunchConfig(gpu_memory_utilization=1.0, vllm_version="0.9.0")).fits


def test_before_0_9_1_other_processes_memory_is_charged_as_non_torch():
    """0.8–0.9.0: no free-memory check; the second instance on a GPU just gets less KV (#14376)."""
    alone = estimate_memory(LLAMA_8B, H100, LaunchConfig(vllm_version="0.9.0"))
    shared = estimate_memory(LLAMA_8B, H100, LaunchConfig(vllm_version="0.9.0"), free_memory_gib=60.0)
    assert shared.failure is None
    assert shared.kv_pool_gib == pytest.approx(alone.kv_pool_gib - (79.18 - 60.0), abs=0.01)


@pytest.mark.parametrize("tp, match", [(3, "attention heads"), (14, "KV heads")])
def test_tensor_parallel_sizes_vllm_rejects_are_user_errors(tp, match):
    with pytest.raises(UserError, match=match):
        estimate_memory(
            resolve_model("Qwen2.5-7B") if tp == 14 else LLAMA_8B, H100, LaunchConfig(tensor_parallel_size=tp)
        )


def test_more_pipeline_stages_than_layers_is_a_user_error():
    with pytest.raises(UserError, match="--pipeline-parallel-size 64"):
        estimate_memory(LLAMA_8B, H100, LaunchConfig(pipeline_parallel_size=64))


def test_default_utilisation_rises_to_0_92_with_cudagraph_profiling_in_0_20():
    assert default_gpu_memory_utilization(parse_version("0.19")) == 0.9
    assert default_gpu_memory_utilization(parse_version("0.20")) == 0.92


@pytest.mark.parametrize(
    "version, gpu, seqs, batched",
    [
        ("0.8.5", "A100", 1024, 8192),
        ("0.9", "A100", 256, 2048),
        ("0.33", "H100", 1024, 8192),
        ("0.33", "L4", 256, 2048),
        ("0.27", "B200", 1024, 8192),
        ("0.28", "B200", 1024, 16384),
    ],
)
def test_batch_defaults_follow_device_memory_and_version(version, gpu, seqs, batched):
    parsed, spec = parse_version(version), resolve_gpu(gpu)
    assert default_max_num_seqs(parsed, spec) == seqs
    assert default_max_num_batched_tokens(parsed, spec) == batched


def test_mla_gets_flashmla_block_size_on_hopper():
    assert (
        estimate_memory(
            resolve_model("DeepSeek-V3"), resolve_gpu("H200"), LaunchConfig(tensor_parallel_size=8)
        ).block_size
        == 64
    )


@pytest.mark.parametrize("text", ["latest", "0.7", "1.0", "0.34"])
def test_versions_outside_the_modelled_range_are_user_errors(text):
    with pytest.raises(UserError, match="--vllm-version"):
        parse_version(text)


def test_versions_accept_patch_and_rc_suffixes():
    assert parse_version("0.15.2rc1") == (0, 15, 2)
    assert parse_version("v0.10.1.1") == (0, 10, 1)


def test_an_unmodelled_quantization_is_a_user_error_listing_the_known_ones():
    with pytest.raises(UserError, match=r"--quantization 'hqq': not modelled; use one of fp8"):
        estimate_memory(LLAMA_8B, H100, LaunchConfig(quantization="hqq"))


def test_cpu_device_uses_the_bundled_engines_batch_defaults_at_any_budget():
    from advisor.catalog.gpus import gpu_from_memory

    memory = estimate_memory(LLAMA_8B, gpu_from_memory(100, device="cpu"), LaunchConfig())
    assert (memory.max_num_seqs, memory.max_num_batched_tokens) == (256, 2048)
    assert memory.non_torch_gib == memory.cudagraph_gib == 0
