"""The roofline prior: a step cost from the model and GPU catalogs, used when nothing was measured."""

import json
from pathlib import Path

import pytest

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.cli.main import main
from advisor.memory.terms import GIB, kv_bytes_per_token_per_gpu, weights_gib_per_gpu
from advisor.perf import prior


def test_the_prior_reads_the_weights_once_per_step_and_kv_per_context_token():
    model, gpu = resolve_model("Llama-3.1-8B"), resolve_gpu("H100-SXM-80GB")
    cost = prior.roofline_cost(model, gpu)
    weights = weights_gib_per_gpu(model, 2.0, None, 1, 1) * GIB
    assert cost.base_s == pytest.approx(prior.FIXED_STEP_S + weights / 3.35e12)
    assert cost.context_token_s == pytest.approx(kv_bytes_per_token_per_gpu(model, 2.0, 1, 1) / 3.35e12)
    assert cost.prefill_token_s == pytest.approx(2 * model.param_count / (989e12 * prior.PREFILL_MFU))
    assert cost.prefill_seq_s == prior.PREFILL_CHUNK_S == 0.0  # no per-chunk cost assumed
    assert cost.relative_error == prior.PRIOR_RELATIVE_ERROR and "roofline prior" in cost.source
    # tensor parallel splits the weights and the FLOPs over the GPUs
    assert prior.roofline_cost(model, gpu, tensor_parallel=2).base_s < cost.base_s


def test_the_bundled_engines_prior_step_is_at_least_its_per_layer_host_cost():
    """The bundled engine issues every layer's kernels from Python: on a GPU its step is the layers
    times BUNDLED_LAYER_STEP_S whenever that exceeds the weight read (an 8B model on an H100: 24 ms
    against 4.5 ms + the fixed step); vLLM's prior and the other terms are unchanged."""
    model, gpu = resolve_model("Llama-3.1-8B"), resolve_gpu("H100-SXM-80GB")
    vllm, bundled = prior.roofline_cost(model, gpu), prior.roofline_cost(model, gpu, engine="bundled")
    assert bundled.base_s == pytest.approx(model.num_hidden_layers * prior.BUNDLED_LAYER_STEP_S) == pytest.approx(0.024)
    assert vllm.base_s < bundled.base_s and prior.roofline_cost(model, gpu, engine="vllm-cuda").base_s == vllm.base_s
    assert bundled.model_copy(update={"base_s": vllm.base_s, "source": vllm.source}) == vllm
    assert "per layer" in bundled.source
    big = resolve_model("Llama-3.1-70B")  # 80 layers, 140 GB of weights: the weight read is the larger
    slow = resolve_gpu("L4")
    assert prior.roofline_cost(big, slow, engine="bundled").base_s == prior.roofline_cost(big, slow).base_s


def test_offline_triage_predicts_latency_from_the_prior_and_says_so(tmp_path):
    log = Path(__file__).resolve().parents[3] / "fixtures" / "vllm" / "v0_12_preemption_stats.log"
    out = tmp_path / "triage.json"
    assert (
        main(
            [
                "triage",
                "--logs",
                str(log),
                "--gpu",
                "H100-SXM-80GB",
                "--model",
                "Llama-3.1-8B",
                "--input-tokens",
                "1000",
                "--output-tokens",
                "300",
                "--concurrency",
                "64",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    document = json.loads(out.read_text())
    change = next(c for f in document["findings"] for c in f["changes"] if c["flag"] == "--max-num-seqs")
    figures = change["predicted_effect"]["figures"]
    assert figures["relative_error"] == 0.5 and figures["offered"] == 64
    assert figures["output_tokens_per_s_after"] > 0 and "kv_cache_tokens_after" in figures  # memory kept too
    assert any("roofline prior" in note for note in document["notes"])
    assert change["proposed"] == "36"  # a ±50 % prior annotates; it does not overrule the rule
