"""Predicted effects: each memory flag change is sized by the advisor's memory model."""

from __future__ import annotations

import pytest

from advisor.catalog.gpus import gpu_from_memory, resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.memory.budget import LaunchConfig, estimate_memory
from advisor.memory.kv_change import Deployment, MeasuredPool, launch_from_config, predict_change
from advisor.triage.valuation import value_findings
from rules.facts import ServerConfig
from rules.model import Category, ConfigChange, Finding, PredictedEffect, Severity


@pytest.fixture(scope="module")
def llama_on_h100() -> Deployment:
    return Deployment(
        model=resolve_model("Llama-3.1-8B"), gpu=resolve_gpu("H100-SXM-80GB"), launch=LaunchConfig(max_model_len=32768)
    )


def change(flag: str, proposed: str, current: str | None = None) -> ConfigChange:
    return ConfigChange(flag=flag, current=current, proposed=proposed, reason="test")


def test_fp8_kv_cache_doubles_kv_tokens_and_concurrency(llama_on_h100):
    effect = predict_change(change("--kv-cache-dtype", "fp8"), llama_on_h100)
    figures = effect.figures
    assert figures["kv_cache_tokens_after"] == pytest.approx(2 * figures["kv_cache_tokens_before"], rel=0.01)
    assert figures["max_concurrency_after"] == pytest.approx(2 * figures["max_concurrency_before"], rel=0.01)
    assert "KV tokens" in effect.text


def test_higher_memory_utilization_grows_the_pool_by_the_extra_share(llama_on_h100):
    effect = predict_change(change("--gpu-memory-utilization", "0.95"), llama_on_h100)
    grown = effect.figures["kv_pool_gib_after"] - effect.figures["kv_pool_gib_before"]
    assert grown == pytest.approx(79.18 * (0.95 - 0.92), abs=0.02)


def test_shorter_max_model_len_keeps_tokens_and_raises_concurrency(llama_on_h100):
    effect = predict_change(change("--max-model-len", "8192"), llama_on_h100)
    figures = effect.figures
    assert figures["kv_cache_tokens_after"] == figures["kv_cache_tokens_before"]
    assert figures["max_concurrency_after"] == pytest.approx(4 * figures["max_concurrency_before"], rel=0.01)


def test_a_max_model_len_that_fits_is_predicted_to_start():
    model, gpu = resolve_model("Llama-3.1-8B"), resolve_gpu("L4")
    failing = LaunchConfig(max_model_len=131072)
    assert not estimate_memory(model, gpu, failing).fits
    fitting = estimate_memory(model, gpu, failing).max_model_len_that_fits
    effect = predict_change(change("--max-model-len", str(fitting)), Deployment(model, gpu, failing))
    assert effect.figures["starts_before"] == 0.0 and effect.figures["starts_after"] == 1.0
    assert effect.text.startswith("server starts")


def test_tensor_parallel_two_halves_per_gpu_kv_bytes():
    deployment = Deployment(
        resolve_model("Llama-3.1-70B"),
        resolve_gpu("H100-SXM-80GB"),
        LaunchConfig(tensor_parallel_size=2, max_model_len=8192),
    )
    effect = predict_change(change("--tensor-parallel-size", "4"), deployment)
    assert effect.figures["kv_cache_tokens_after"] > 2 * effect.figures["kv_cache_tokens_before"]


def test_measured_pool_calibrates_the_prediction():
    model, gpu = resolve_model("Llama-3.1-8B"), gpu_from_memory(24.0)
    launch = LaunchConfig(max_model_len=8192)
    calibrated = Deployment(model, gpu, launch, measured_kv_pool_gib=2.0)
    effect = predict_change(change("--max-model-len", "4096"), calibrated)
    assert effect.figures["kv_pool_gib_before"] == pytest.approx(2.0)
    # 2 GiB / 128 KiB per token = 16,384 tokens, whatever the activation estimate said
    assert effect.figures["kv_cache_tokens_before"] == 16384


def test_flags_without_a_memory_model_and_unknown_deployments_say_so(llama_on_h100):
    assert "no memory effect" in predict_change(change("--enable-prefix-caching", "true"), llama_on_h100).text
    assert "--model" in predict_change(change("--max-model-len", "4096"), None).text


def test_impossible_change_is_explained_not_raised(llama_on_h100):
    effect = predict_change(change("--tensor-parallel-size", "3"), llama_on_h100)
    assert effect.text.startswith("not predicted") and not effect.figures


def test_launch_from_config_takes_known_fields_and_ignores_unmodelled_versions():
    config = ServerConfig(
        max_model_len=4096, tensor_parallel_size=2, kv_cache_dtype="fp8", vllm_version="0.33.0+servops.0.1.0"
    )
    launch = launch_from_config(config)
    assert (launch.max_model_len, launch.tensor_parallel_size, launch.kv_cache_dtype) == (4096, 2, "fp8")
    assert launch.vllm_version == "0.33"
    assert launch_from_config(ServerConfig(vllm_version="0.1.0")).vllm_version == LaunchConfig().vllm_version


def test_without_a_device_the_measured_pool_still_sizes_pool_preserving_changes():
    pool = MeasuredPool(kv_cache_tokens=128, max_model_len=128, max_num_seqs=8, kv_dtype_bytes=4.0)
    seqs = predict_change(change("--max-num-seqs", "2", current="8"), None, pool)
    assert seqs.figures["kv_tokens_per_running_request_after"] == 64.0
    assert seqs.figures["kv_tokens_per_running_request_before"] == 16.0
    fp8 = predict_change(change("--kv-cache-dtype", "fp8"), None, pool)
    assert fp8.figures["kv_cache_tokens_after"] == 512.0  # float32 KV → 1-byte fp8
    shorter = predict_change(change("--max-model-len", "64"), None, pool)
    assert shorter.figures["max_concurrency_after"] == 2.0
    resized = predict_change(change("--gpu-memory-utilization", "0.95"), None, pool)
    assert resized.text.startswith("not predicted")


def test_a_measured_pool_with_its_gib_and_the_gpus_sizes_a_utilisation_change():
    """0.95 -> 0.93 on a 79.19 GiB GPU takes 1.5838 GiB off a 41.07 GiB pool of 538,304 tokens:
    538,304 x (41.07 - 1.5838) / 41.07 = 517,545.6 -> 517,545."""
    pool = MeasuredPool(kv_cache_tokens=538_304, max_model_len=32_768, pool_gib=41.07, device_gib=79.19)
    effect = predict_change(change("--gpu-memory-utilization", "0.93", current="0.95"), None, pool)
    assert effect.figures["kv_cache_tokens_after"] == 517_545.0
    assert effect.figures["max_concurrency_after"] == round(517_545 / 32_768, 2)


def test_vllms_estimated_length_pins_a_pool_its_rounded_gib_undercounts():
    """vLLM prints the KV pool to 0.01 GiB; its estimated maximum length is finer. A pool of
    0.0745 GiB prints as 0.07, which alone predicts that vLLM's own estimate would not start."""
    from advisor.triage.context import _logged_pool_gib
    from rules.facts import MemoryFacts

    model, gpu, launch = resolve_model("SmolLM2-135M"), gpu_from_memory(0.15), LaunchConfig(max_model_len=1_048_576)
    per_token = estimate_memory(model, gpu, launch).kv_bytes_per_token
    estimate = int(0.0745 * 2**30 // per_token) // 16 * 16
    memory = MemoryFacts(source="startup_log", available_kv_gib=0.07, max_model_len_that_fits=estimate)
    proposal = change("--max-model-len", str(estimate))

    printed_only = predict_change(proposal, Deployment(model, gpu, launch, measured_kv_pool_gib=0.07))
    assert printed_only.figures["starts_after"] == 0.0
    pool = _logged_pool_gib(Deployment(model, gpu, launch), memory)
    assert 0.07 < pool <= 0.075
    pinned = predict_change(proposal, Deployment(model, gpu, launch, measured_kv_pool_gib=pool))
    assert pinned.figures["starts_after"] == 1.0
    assert pinned.figures["kv_cache_tokens_after"] >= estimate


def test_a_latency_prediction_leads_when_the_memory_side_has_no_figures():
    """Without a device size the memory half is only a note: the latency figures come first, the note
    after them and named as the KV memory's, not "not predicted" ahead of a prediction."""
    latency = PredictedEffect(text="at offered 8: TTFT p99 1.22 s → 2.57 s", figures={"offered": 8.0})
    budget = change("--max-num-batched-tokens", "1024", "64")
    budget.predicted_effect = latency
    finding = Finding(rule="OP-5.1", title="t", severity=Severity.HIGH, category=Category.LATENCY, changes=[budget])
    [budget] = value_findings([finding], None, None, None, None).findings[0].changes
    text = budget.predicted_effect.text
    assert text.startswith("at offered 8") and "; KV memory not predicted: pass --model" in text
    assert budget.predicted_effect.figures == {"offered": 8.0}
