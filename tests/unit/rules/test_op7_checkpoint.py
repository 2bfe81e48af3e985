"""OP-7.21: a KeyError naming a checkpoint tensor while loading weights names the tensor and its format."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op7_checkpoint
from rules.evaluate import evaluate
from rules.facts import Facts, ServerConfig
from tests.unit.rules.factories import top_finding

PREFIX = "(EngineCore_DP0 pid=268) ERROR 09-16 20:57:00 [core.py:718] "
# vllm#25029: a GPTQ int4 Qwen3-30B-A3B on vLLM 0.10.2, its MoE router gate quantized
LOADING = [
    PREFIX + '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/qwen3_moe.py", line 574, '
    "in load_weights",
    PREFIX + "    param = params_dict[name]",
    PREFIX + "            ~~~~~~~~~~~^^^^^^",
    PREFIX + "KeyError: 'layers.35.mlp.gate.g_idx'",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_gptq_tensor_the_loader_has_no_parameter_for_is_named_with_its_format_and_upgrades():
    findings = evaluate(_facts(LOADING)).findings
    top = findings[0]
    assert top.rule == "OP-7.21" and top.title == (
        "the checkpoint holds layers.35.mlp.gate.g_idx, a GPTQ tensor vLLM's qwen3_moe code has no parameter for"
    )
    assert top.actions[0].startswith("Upgrade vLLM")
    assert not [f for f in findings if f.rule == "VC-2"]  # one error, one finding


def test_a_key_error_outside_weight_loading_stays_unplaced():
    elsewhere = [
        '  File "/x/vllm/v1/core/sched/scheduler.py", line 9, in update_from_output',
        "    req = self.requests[req_id]",
        "KeyError: 'chatcmpl-123.abc'",
    ]
    assert not op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(_facts(elsewhere))
    assert evaluate(_facts(elsewhere)).findings[0].rule == "VC-2"


def test_a_bare_key_error_naming_a_layers_quantized_tensor_is_a_checkpoint_layout():
    # a pasted error line without its frames: a layer index and a format's suffix are a parameter's name alone
    line = "KeyError: 'model.layers.0.mlp.experts.w2_weight_scale_inv'"
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.21" and "a block-wise FP8 tensor" in top.title  # the fused expert's w2_ prefix aside
    for other in ("KeyError: 'foo.bar'", "KeyError: 'model.layers.0.self_attn.rotary_emb.inv_freq'"):
        assert evaluate(_facts([other])).findings[0].rule == "VC-2", other  # no index or no parameter's suffix


def test_an_ascend_w8a8_tensor_on_a_plain_projection_is_vllm_ascends_quantization_not_selected():
    # vllm-ascend#3177's line: a msModelSlim W8A8 Llama-2-7B; the suffixes are those its quant_model_description.json
    # lists (vllm-ascend#633), and vLLM Ascend's Quantization Guide selects the method with --quantization ascend
    line = (
        "(VllmWorkerProcess pid=7246) ERROR 09-25 02:23:33 multiproc_worker_utils.py:242] KeyError: "
        "'layers.0.mlp.gate_up_proj.deq_scale'"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.21" and top.title.startswith("the checkpoint is W8A8-quantized by Ascend's msModelSlim")
    assert [(c.flag, c.proposed) for c in top.changes] == [("--quantization", "ascend")]
    told = Facts(events=_facts([line]).events, config=ServerConfig(quantization="ascend"))
    [finding] = op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(told)  # the method was given: a layout it lacks
    assert "an Ascend msModelSlim W8A8 tensor" in finding.title and not finding.changes


def test_a_gguf_file_read_as_a_config_is_a_vllm_without_gguf_support():
    # vllm#7291: vLLM 0.5.4 handed a .gguf model to transformers as its config.json
    line = (
        "OSError: It looks like the config file at '/mnt/hub/models--TheBloke--TinyLlama-1.1B-Chat-v1.0-GGUF/"
        "snapshots/52e7/tinyllama-1.1b-chat-v1.0.Q4_0.gguf' is not a valid JSON file."
    )
    [finding] = evaluate(_facts([line])).findings
    assert finding.rule == "OP-7.24" and "tinyllama-1.1b-chat-v1.0.Q4_0.gguf" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM to 0.5.5 or later")
    assert not op7_checkpoint.RULE_GGUF_AS_CONFIG.evaluate(_facts(["OSError: the config file at 'x.json' is bad"]))


# vllm#12404: InternVL2-26B-AWQ on vLLM 0.6.5, its quantization not detected, then the worker's death
UNDETECTED = [
    'ERROR 01-24 11:29:27 engine.py:366]   File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/models/'
    'internlm2.py", line 430, in load_weights',
    "ERROR 01-24 11:29:27 engine.py:366]     param = params_dict[name]",
    "ERROR 01-24 11:29:27 engine.py:366] KeyError: 'model.layers.0.attention.wqkv.qweight'",
    "ERROR 01-24 11:29:28 multiproc_worker_utils.py:123] Worker VllmWorkerProcess pid 6961 died, exit code: -15",
]


def test_a_quantized_projection_with_no_parameter_is_quantization_not_detected_and_the_name_says_which():
    facts = _facts(UNDETECTED)
    facts.config = ServerConfig(model="OpenGVLab/InternVL2-26B-AWQ")
    findings = evaluate(facts).findings
    top = findings[0]
    assert top.rule == "OP-7.21" and "quantization was not detected" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed) == ("--quantization", "awq")
    assert "OP-3.3" not in [f.rule for f in findings]  # the worker's death follows the KeyError: it yields


def test_with_quantization_given_or_on_moe_experts_the_tensor_is_a_layout_this_release_does_not_load():
    told = _facts(UNDETECTED)
    told.config = ServerConfig(model="x-AWQ", quantization="awq")
    [finding] = op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(told)
    assert "not detected" not in finding.title and finding.actions[0].startswith("Upgrade vLLM")
    experts = [line.replace("attention.wqkv", "mlp.experts.3.down_proj") for line in UNDETECTED]
    [finding] = op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(_facts(experts))
    assert "not detected" not in finding.title


def test_a_bitsandbytes_tensor_read_by_the_default_loader_asks_for_both_bitsandbytes_flags():
    # vllm#11010: unsloth/Llama-3.3-70B-Instruct-bnb-4bit on vLLM 0.6.4.post1 without flags; V0's engine logs the
    # KeyError's words alone (its key, quoted). 0.5-0.8.1 choose the bitsandbytes loader only from the launch.
    line = "ERROR 12-09 00:49:29 engine.py:366] 'layers.0.mlp.down_proj.weight.absmax'"
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.21" and top.title.startswith("the checkpoint is bitsandbytes-quantized")
    assert {(c.flag, c.proposed) for c in top.changes} == {
        ("--quantization", "bitsandbytes"),
        ("--load-format", "bitsandbytes"),
    }
    assert "its suffix absmax is bitsandbytes 4-bit" in top.evidence[0].description
    packed = "KeyError: 'model.layers.3.self_attn.q_proj.weight.quant_state.bitsandbytes__nf4'"
    assert evaluate(_facts([packed])).findings[0].title.startswith("the checkpoint is bitsandbytes-quantized")


def test_a_bitsandbytes_tensor_already_loaded_with_bitsandbytes_is_a_layout_this_release_does_not_load():
    facts = _facts(["KeyError: 'layers.30.mlp.down_proj.SCB'"])
    facts.config = ServerConfig(quantization="bitsandbytes", flags={"--load-format": "bitsandbytes"})
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.21" and "a bitsandbytes int8 tensor" in top.title and not top.changes


def test_a_quoted_word_alone_on_a_vllm_error_line_is_a_key_error():
    # V0's engine logs an exception's words without its class; a KeyError's words are its key, quoted
    [event] = parse_lines(["ERROR 12-09 00:49:29 engine.py:366] 'reasoning_content'"]).events
    assert (event.exception, event.message) == ("KeyError", "KeyError: 'reasoning_content'")
    unpacking = "ERROR 12-17 18:40:37 engine.py:366] not enough values to unpack (expected 2, got 1)"
    [unpack] = parse_lines([unpacking]).events
    assert unpack.exception == "ValueError"


def test_a_tensor_named_by_peft_is_an_unmerged_adapter_saved_as_the_model():
    # vllm#2626's line, verbatim (no layer index: PEFT's prefix and its wrapped `base_layer` say what it is)
    top = evaluate(Facts(events=parse_lines(["KeyError: 'base_model.model.lm_head.base_layer.weight'"]).events)).top
    assert top.rule == "OP-7.21" and "LoRA adapter unmerged" in top.title
    assert "merge_and_unload()" in top.actions[0] and "--enable-lora --lora-modules" in top.actions[1]
    plain = evaluate(Facts(events=parse_lines(["KeyError: 'lm_head.weight'"]).events)).findings
    assert not any("PEFT" in finding.title for finding in plain)


def test_a_bare_keyerror_for_a_top_level_weight_or_an_unfolded_smoothing_scale_is_a_checkpoint_tensor():
    """vllm#508 (`transformer.lm_head.weight`, a Bloom-family checkpoint), vllm#3323 (`Im_head.weight`) and
    ModelTC/LightCompress#256 (`layers.0.fc1_smooth_scale`, an OmniQuant export), each pasted alone, verbatim."""
    for name in ("transformer.lm_head.weight", "Im_head.weight", "layers.0.fc1_smooth_scale"):
        [finding] = op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(_facts([f"KeyError: '{name}'"]))
        assert f"the checkpoint holds {name}" in finding.title
    assert "SmoothQuant-style" in op7_checkpoint.format_of_suffix("fc1_smooth_scale")
    # a dotted key that is no parameter's name stays an error servops cannot place
    assert op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(_facts(["KeyError: 'model.safetensors'"])) == []


def test_an_fp8_kv_cache_scale_without_a_parameter_is_a_checkpoint_tensor():
    """vllm#15784's line, verbatim (a log viewer's severity and stamp, colour codes without their ESC): ModelOpt's
    k_scale on the fused qkv projection, which vLLM 0.7.3's model code had no parameter for."""
    line = (
        "INFO 2025-03-30T23:51:21.299840450Z [1;36m(VllmWorkerProcess pid=630)[0;0m ERROR 03-30 23:51:21 "
        "multiproc_worker_utils.py:243] KeyError: 'layers.32.self_attn.qkv_proj.k_scale'"
    )
    [finding] = op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(_facts([line]))
    assert "layers.32.self_attn.qkv_proj.k_scale" in finding.title and "FP8 KV cache" in finding.title


def test_a_bare_keyerror_on_a_gguf_metadata_key_is_the_file_missing_that_field():
    # vllm-project/vllm#14723, verbatim: a vLLM maintainer's reproduction with a Gemma 3 GGUF
    [finding] = op7_checkpoint.RULE_GGUF_METADATA.evaluate(
        Facts(events=parse_lines(["KeyError: 'general.name'"]).events)
    )
    assert finding.title == "the GGUF file lacks the metadata key general.name that transformers' GGUF reader looks up"
    assert "--general-name NAME" in finding.actions[0]
    # a checkpoint tensor's name is OP-7.21's, not a GGUF field
    tensor = parse_lines(["KeyError: 'layers.0.mlp.down_proj.weight'"]).events
    assert op7_checkpoint.RULE_GGUF_METADATA.evaluate(Facts(events=tensor)) == []


@pytest.mark.parametrize(
    "line",
    [
        "KeyError: 'layers.13.mlp.experts.w13_weight'",  # vllm PR #44953, verbatim: Qwen3.5 with expert parallel
        "ERROR [multiproc_executor.py:870] KeyError: 'layers.0.ffn.experts.w13_input_scale'",  # vllm#43454, verbatim
    ],
)
def test_a_fused_expert_parameter_vllm_named_itself_is_the_moe_layer_and_its_loader_disagreeing(line):
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.21" and "fused-MoE layer it built has no parameter for" in top.title
    assert top.actions[0].startswith("If --moe-backend is forced, drop it") and not top.changes
    told = Facts(events=_facts([line]).events, config=ServerConfig(flags={"--moe-backend": "deep_gemm_mega_moe"}))
    [finding] = op7_checkpoint.RULE_UNLOADABLE_TENSOR.evaluate(told)
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--moe-backend", "deep_gemm_mega_moe", "")]
    # a router gate or a shared expert is a checkpoint tensor, not a fused parameter
    assert evaluate(_facts(["KeyError: 'layers.0.mlp.experts.gate'"])).findings[0].rule == "VC-2"


def test_mistrals_fp8_activation_scale_is_named_with_the_name_vllm_gives_it():
    # vllm PR #41982, verbatim: Devstral-2's FP8 checkpoint on LlamaForCausalLM, whose code did not rename Mistral's
    # activation_scale to input_scale (mistral3.py did)
    top = evaluate(_facts(["KeyError: 'model.layers.0.mlp.down_proj.activation_scale'"])).findings[0]
    assert top.rule == "OP-7.21" and "a Mistral-format FP8 tensor" in top.title
    assert "input_scale" in top.summary


def test_a_workers_key_error_relayed_by_collective_rpc_is_the_same_unloadable_tensor():
    # alibaba/ROLL#240, verbatim (the title): a VL rollout on vLLM 0.8.4 with transformers 4.57
    top = evaluate(
        _facts(["Exception: Call to collective_rpc method failed: 'visual.patch_embed.proj.weight'"])
    ).findings[0]
    assert top.rule == "OP-7.21" and "visual.patch_embed.proj.weight" in top.title


def test_a_tensor_a_loader_skipped_with_a_warning_is_read_as_the_same_cause_at_a_warnings_severity():
    # vllm-project/llm-compressor#2752, verbatim: an llm-compressor AWQ Qwen3.5 4B that vLLM failed to serve, its log
    # full of skipped packed weights and scales
    scale = top_finding(
        "(EngineCore pid=21751) WARNING 05-24 14:47:17 [qwen3_5.py:418] Parameter "
        "language_model.layers.8.mlp.gate_up_proj.weight_scale not found in params_dict, skip loading"
    )
    assert scale.rule == "OP-7.21" and scale.severity == "high"
    assert scale.title.startswith("vLLM skipped the checkpoint's language_model.layers.8.mlp.gate_up_proj.weight_scale")
    assert "the layers load without their quantization data" in scale.summary
    # modelscope/ms-swift#9172, verbatim: a GRPO-trained Qwen3.5 9B's vision weights skipped
    visual = top_finding(
        "(EngineCore pid=3505) WARNING 04-21 09:41:09 [qwen3_5.py:432] Parameter visual.blocks.0.attn.proj.weight not "
        "found in params_dict, skip loading"
    )
    assert visual.rule == "OP-7.21" and visual.severity == "low"
    assert visual.title.endswith("intended when the model is built for text only")


def test_a_tensor_keyerror_cut_before_its_closing_quote_is_the_same_reading():
    # Visual-Agent/DeepEyes#18, verbatim: verl's rollout sharding manager, the paste cut before the closing quote
    top = top_finding("KeyError: 'visual.patch_embed.proj.weight")
    assert top.rule == "OP-7.21" and top.title.startswith("the checkpoint holds visual.patch_embed.proj.weight")
