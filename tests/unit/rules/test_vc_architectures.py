"""VC-1 on `Model architectures [...] are not supported for now`: the releases whose model registry lists it."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# runpod-workers/worker-vllm#279 (the worker's vLLM 0.16.0), verbatim: the worker's startup error as its API relays it
RUNPOD = (
    '{"requestId": null, "message": "Worker startup failed: 1 validation error for ModelConfig\\n  Value error, Model '
    "architectures ['Qwen3_5MoeForConditionalGeneration'] are not supported for now."
)


def _refused(architecture: str) -> str:
    """vLLM's refusal in its own words (vllm/model_executor/models/registry.py), constructed for `architecture`."""
    return (
        f"ValueError: Model architectures ['{architecture}'] are not supported for now. Supported architectures: "
        "dict_keys(['LlamaForCausalLM'])"
    )


def test_an_architecture_a_newer_release_lists_names_that_release():
    top = top_finding(RUNPOD)
    assert top.rule == "VC-1" and "Qwen3_5MoeForConditionalGeneration" in top.title
    assert top.actions[0].startswith("Upgrade vLLM to 0.17.0 or later: of the releases servops read")
    assert "0.17.0 is the oldest that lists Qwen3_5MoeForConditionalGeneration" in top.actions[0]
    assert "pip install -U 'vllm>=0.17.0'" in top.actions[0]


def test_an_architecture_only_a_span_of_releases_listed_asks_which_side_the_installed_one_is_on():
    top = top_finding(_refused("MllamaForConditionalGeneration"))
    assert top.rule == "VC-1" and len(top.actions) == 1
    assert top.actions[0].startswith("vLLM 0.6.2 to 0.10.2 list MllamaForConditionalGeneration")
    assert "older than 0.6.2, upgrade vLLM" in top.actions[0]


def test_the_stated_version_says_which_side_of_the_span_it_is_on():
    # constructed: the same refusal under a 0.12.0 banner (after the span), then a 0.5.4 one (before it)
    newer = top_finding(
        "INFO 01-01 00:00:00 api_server.py:1] vLLM API server version 0.12.0",
        _refused("MllamaForConditionalGeneration"),
    )
    assert " to 0.10.2 list MllamaForConditionalGeneration" in newer.actions[0] and "vllm==0.10.2" in newer.actions[0]
    older = top_finding(
        "INFO 01-01 00:00:00 api_server.py:1] vLLM API server version 0.5.4", _refused("MllamaForConditionalGeneration")
    )
    assert older.actions[0].startswith("Upgrade vLLM to 0.6.2 or later")


def test_a_classifier_newer_releases_build_from_the_causal_lm_is_an_upgrade():
    # constructed on vllm#10990's architecture (no version stated): the suffix-converted name is no removal
    top = top_finding(_refused("Qwen2ForSequenceClassification"))
    assert top.actions[0].startswith("Upgrade vLLM to 0.6.4.post1 or later")


def test_an_architecture_no_release_lists_is_no_upgrade():
    top = top_finding(_refused("NoSuchModelForCausalLM"))
    assert top.rule == "VC-1" and len(top.actions) == 1
    assert top.actions[0].startswith("No vLLM release from 0.4 to 0.34 lists NoSuchModelForCausalLM")


# NovaSky-AI/SkyRL#97, verbatim: a checkpoint the FSDP2 trainer re-saved, its wrapper's class name in the config
FSDP_NAME = (
    "ValueError: Cannot find model module. 'FSDPQwen2ForCausalLM' is not a registered model in the Transformers "
    "library (only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present in the model "
    "config's 'auto_map' (relevant if the model is custom)."
)


def test_a_name_no_release_lists_that_ends_with_one_they_do_is_a_wrappers_class_name():
    top = top_finding(FSDP_NAME)
    assert top.rule == "VC-1" and len(top.actions) == 1
    assert top.actions[0].startswith(
        "No vLLM release lists FSDPQwen2ForCausalLM, but its name ends with Qwen2ForCausalLM"
    )
    assert 'config.json "architectures" to ["Qwen2ForCausalLM"]' in top.actions[0]


# argilla-io/distilabel PR #842, verbatim: vLLM's refusal as the PR quotes it
RAY_DRIVER = (
    "Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or running the "
    "driver on a GPU node"
)
# vllm PR #46561, verbatim: a desc_act GPTQ checkpoint on ROCm in bfloat16
WNA16 = (
    "ValueError: Failed to find a kernel that can implement the WNA16 linear layer. Reasons:",
    "  TritonW4A16LinearKernel cannot implement due to: Activation reordering (g_idx) is not supported",
    "  ConchLinearKernel cannot implement due to: Activation reordering (g_idx) is not supported",
)


def test_no_gpu_on_the_ray_driver_places_the_code_that_constructs_vllm():
    top = top_finding(RAY_DRIVER)
    assert top.rule == "VC-1" and "STRICT_PACK" in top.actions[0] and "distilabel PR #842" in top.actions[0]


def test_no_kernel_for_activation_reordering_proposes_float16():
    top = top_finding(*WNA16)
    assert top.rule == "VC-1" and top.changes[0].flag == "--dtype" and top.changes[0].proposed == "float16"
    assert "desc_act=False" in top.actions[0]
