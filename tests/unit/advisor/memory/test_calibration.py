"""The memory model against vLLM's published figures (docs/reference.md §4.1, docs/reference.md §2.6).

"Within 3 %" is the acceptance bar for KV figures whose inputs are fully known. Where the
source leaves an input open (vLLM version, utilisation) the test says so and uses a wider bar.
"""

import pytest

from advisor.catalog import vllm_failures as failure_texts
from advisor.catalog.gpus import gpu_from_memory, resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.catalog.vllm_versions import parse_version
from advisor.memory.budget import LaunchConfig, estimate_memory, max_len_for_kv_bytes
from advisor.memory.terms import GIB, activation_gib, weights_gib_per_gpu

H100 = resolve_gpu("H100-SXM-80GB")
OLDER_VLLM = "0.18"  # the llm-d "older vLLM" runs: any version before 0.19 in our model


def test_llama_8b_h100_util_090_kv_pool_is_51_38_gib_within_3_percent():
    """llm-d empirical: 71.26 − 14.99 − 4.76 − 0.13 = 51.38 GiB (older vLLM)."""
    memory = estimate_memory(
        resolve_model("Llama-3.1-8B"), H100, LaunchConfig(gpu_memory_utilization=0.90, vllm_version=OLDER_VLLM)
    )
    assert memory.requested_gib == pytest.approx(71.26, abs=0.01)
    assert memory.kv_pool_gib == pytest.approx(51.38, rel=0.03)
    assert memory.kv_cache_tokens == pytest.approx(51.38 * GIB / 131_072, rel=0.03)


@pytest.mark.parametrize(
    "name, quantization, tp, expected_gib",
    [
        ("Llama-3.1-8B", None, 1, 14.99),  # vLLM "Model loading took 14.99 GiB"
        ("Llama-3.1-8B", "fp8", 1, 8.49),  # runtime --quantization fp8
        ("Qwen2.5-7B", None, 1, 14.25),
        ("Llama-3.3-70B", "fp8", 1, 67.72),
        ("Llama-3.3-70B", "fp8", 2, 33.88),
        ("Qwen2.5-32B", "awq", 1, 18.14),  # public vLLM log, Qwen2.5-32B-Instruct-AWQ "took 18.14 GiB"
    ],
)
def test_weights_match_vllm_loaded_figures_within_1_percent(name, quantization, tp, expected_gib):
    assert weights_gib_per_gpu(resolve_model(name), 2, quantization, tp, 1) == pytest.approx(expected_gib, rel=0.01)


@pytest.mark.parametrize("name, expected_gib", [("Llama-3.1-8B", 1.89), ("Qwen2.5-7B", 2.21), ("Mixtral-8x7B", 1.21)])
def test_activation_peak_matches_vllm_0_19_on_h100_within_5_percent(name, expected_gib):
    assert activation_gib(resolve_model(name), 8192, 1024, 1, parse_version("0.19")) == pytest.approx(
        expected_gib, rel=0.05
    )


@pytest.mark.parametrize("pp, expected_gib", [(2, 1.10), (4, 1.05)])
def test_activation_falls_with_pipeline_parallelism_as_measured(pp, expected_gib):
    llama = resolve_model("Llama-3.1-8B")
    assert activation_gib(llama, 8192, 1024, pp, parse_version("0.19")) == pytest.approx(expected_gib, rel=0.05)


def test_activation_does_not_change_with_tensor_parallelism_or_max_model_len():
    llama = resolve_model("Llama-3.1-8B")
    base = estimate_memory(llama, H100, LaunchConfig(max_model_len=16384))
    other = estimate_memory(llama, H100, LaunchConfig(max_model_len=32768, tensor_parallel_size=2))
    assert base.activation_gib == other.activation_gib


def test_cudagraph_pool_for_llama_8b_is_inside_the_measured_range_from_0_20():
    llama = resolve_model("Llama-3.1-8B")
    assert 0.51 <= estimate_memory(llama, H100, LaunchConfig(vllm_version="0.20")).cudagraph_gib <= 1.85
    assert estimate_memory(llama, H100, LaunchConfig(vllm_version="0.19")).cudagraph_gib == 0
    assert estimate_memory(llama, H100, LaunchConfig(enforce_eager=True)).cudagraph_gib == 0


def test_llama_70b_fp8_on_one_h100_has_no_room_for_cache_blocks():
    """llm-d: weights 67.72 GiB → "Available KV cache memory: -1.44 GiB" → no cache blocks.

    Our older-vLLM activation for 70B is an extrapolation, so only the sign and the error are
    checked; the modelled pool is −2.6 GiB (documented in docs/advisor.md).
    """
    memory = estimate_memory(
        resolve_model("Llama-3.3-70B"),
        H100,
        LaunchConfig(quantization="fp8", gpu_memory_utilization=0.9, vllm_version=OLDER_VLLM),
    )
    assert memory.kv_pool_gib < 0
    assert memory.failure.startswith("No available memory for the cache blocks.")


def test_llama_70b_fp8_tp2_kv_pool_near_the_measured_32_gib():
    """llm-d: TP=2 → 33.88 GiB weights/GPU, 32.0 GiB KV. Version and util are not given in
    the source, so this uses util 0.90 at vLLM 0.19 and a 5 % bar instead of 3 %."""
    memory = estimate_memory(
        resolve_model("Llama-3.3-70B"),
        H100,
        LaunchConfig(quantization="fp8", tensor_parallel_size=2, gpu_memory_utilization=0.9, vllm_version="0.19"),
    )
    assert memory.fits
    assert memory.kv_pool_gib == pytest.approx(32.0, rel=0.05)


def test_estimated_maximum_model_length_matches_vllm_issue_34076():
    """#34076: 96 KiB/token (Qwen3-30B-A3B), 3.18 GiB available → "estimated maximum model
    length is 34736"; 262,144 tokens need "24.0 GiB"."""
    qwen = resolve_model("Qwen3-30B-A3B").model_copy(update={"max_position_embeddings": 262144})
    per_token = 48 * 2 * 4 * 128 * 2
    estimate = max_len_for_kv_bytes(qwen, 3.18 * GIB, per_token, 16, 8192)
    assert estimate == pytest.approx(34736, rel=0.001)
    text = failure_texts.max_seq_len_does_not_fit(
        parse_version("0.15.2"), 262144, 262144 * per_token / GIB, 3.18, 34736
    )
    assert text.startswith(
        "To serve at least one request with the models's max seq len (262144), "
        "(24.0 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(3.18 GiB). Based on the available memory, the estimated maximum model length is 34736."
    )


def test_free_memory_check_reproduces_vllm_issue_20305_text():
    memory = estimate_memory(
        resolve_model("Qwen2.5-7B"),
        gpu_from_memory(47.38),
        LaunchConfig(gpu_memory_utilization=0.95, vllm_version="0.9.1"),
        free_memory_gib=31.44,
    )
    assert memory.failure == (
        "Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization "
        "(0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )


def test_estimated_maximum_model_length_matches_a_qwen2_5_32b_awq_log():
    """Public vLLM log: 0.58 GiB available, 256 KiB/token → "estimated maximum model length is 2368"."""
    qwen = resolve_model("Qwen2.5-32B")
    per_token = 64 * 2 * 8 * 128 * 2
    assert max_len_for_kv_bytes(qwen, 0.58 * GIB, per_token, 16, 2048) == 2368


def test_llm_d_h100_free_memory_passes_at_090_and_fails_above_what_is_free():
    """llm-d: H100 79.18 GiB total, 78.57 GiB free at start; util 0.9 → 71.26 GiB requested."""
    llama = resolve_model("Llama-3.1-8B")
    ok = estimate_memory(llama, H100, LaunchConfig(gpu_memory_utilization=0.9), free_memory_gib=78.57)
    too_much = estimate_memory(llama, H100, LaunchConfig(gpu_memory_utilization=0.995), free_memory_gib=78.57)
    assert ok.fits
    assert too_much.failure.startswith(
        "Free memory on device cuda:0 (78.57/79.18 GiB) on startup is less than "
        "desired GPU memory utilization (0.995, 78.78 GiB)."
    )
