"""VC-1 turns vLLM's own message into its cause and fix; VC-2 names an error the catalog does not hold.

The events are what the collector builds from a pasted line (catalog entry and captured fields); the rules
are pure, so the facts are built here the way advisor/collect/logs.py builds them."""

from __future__ import annotations

from advisor.catalog.vllm_messages import message_catalog
from advisor.collect.logs import parse_lines
from advisor.triage.text import _finding
from reports.triage_view import change_view
from rules.catalog import common as c
from rules.catalog import vc_vllm_messages as vc
from rules.catalog.vc_remedies import REMEDIES
from rules.evaluate import evaluate
from rules.facts import Facts, ServerConfig
from rules.model import Severity
from tests.unit.rules.factories import top_finding


def _top(text: str, server_flags: dict[str, str] | None = None):
    facts = Facts(events=parse_lines(text.splitlines()).events)
    if server_flags:
        facts.config = ServerConfig(flags=server_flags)
    findings = evaluate(facts).findings
    assert findings, text
    return findings[0]


def test_tp_that_does_not_divide_the_heads_becomes_the_largest_tp_that_does():
    top = _top("ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8).")
    assert top.rule == "VC-1" and top.severity == Severity.CRITICAL
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--tensor-parallel-size", "8", "4")
    top = _top("Value error, Total number of attention heads (52) must be divisible by tensor parallel size (3).")
    assert top.changes[0].proposed == "2"
    assert "vllm/config" in top.evidence[0].description  # vLLM's own file and line


def test_a_limit_below_what_was_asked_is_raised_to_it():
    top = _top("ValueError: LoRA rank 64 is greater than max_lora_rank 16.")
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--max-lora-rank", "16", "64")


def test_the_flag_the_message_names_moves_the_way_its_words_say():
    top = _top("ValueError: Increase --max-model-len to leave room for draft lookahead.", {"--max-model-len": "4096"})
    assert top.rule == "VC-1" and top.severity == Severity.CRITICAL
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--max-model-len", "4096", "8192")


def test_a_size_below_what_it_must_hold_is_raised_to_it():
    top = _top(
        "Value error, max_num_batched_tokens (8192) is smaller than max_model_len (131072). This effectively "
        "limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences."
    )
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--max-num-batched-tokens", "8192", "131072")


def test_a_size_that_exceeds_its_bound_is_lowered_to_it():
    # vllm#49064: a hybrid model with LoRA (0.20 on); the reporter cut the line with "..."
    top = _top(
        "ValueError: max_num_seqs (256) exceeds available Mamba cache blocks (243). Each decode sequence requires "
        "one Mamba cache block ..."
    )
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--max-num-seqs", "256", "243")


def test_a_message_whose_words_hold_no_fix_gets_the_maintainers_remedy():
    top = _top("ValueError: At most 1 image(s) may be provided in one request.")
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--limit-mm-per-prompt", "image=1", "image=2")
    top = _top("ValueError: Model architectures ['Qwen2ForCausalLM'] are not supported for now")
    assert top.changes == [] and any("Upgrade vLLM" in action for action in top.actions)


def test_a_multimodal_limit_an_operator_chose_is_the_clients_to_keep():
    # bytedance/UI-TARS-desktop issue 104: started with image=4 (vLLM's default is 1, or 999 from recent releases);
    # the client re-sent every earlier screenshot, so the fix was fewer images per request
    top = _top("ValueError: At most 4 image(s) may be provided in one request.")
    assert top.changes == [] and "Send fewer images per request from the client (at most 4" in top.actions[0]
    [raise_limit] = top.alternatives
    assert (raise_limit.flag, raise_limit.proposed) == ("--limit-mm-per-prompt", "image=5")


def test_a_message_pasted_without_its_final_full_stop_still_captures_its_last_field():
    text = "Disabling fine-grained prefix-cache hits because these KV cache managers require block-aligned lookups: X"
    [event] = parse_lines([f"WARNING 01-01 00:00:00 [kv_cache_utils.py:795] {text}"]).events
    # the header names kv_cache_utils.py, where 0.32-0.34 log these words (0.28-0.31's kv_cache_coordinator.py named
    # the field unsupported_partial_hit_managers)
    assert event.catalog is not None and event.catalog.captured == {"unsupported_managers": "X"}


def test_a_served_request_refused_is_high_not_critical():
    top = _top('{"object":"error","message":"The model `m` does not exist.","type":"NotFoundError","code":404}')
    assert top.rule == "VC-1" and top.severity == Severity.HIGH
    assert top.changes[0].flag == "--served-model-name"


def test_a_warning_that_names_a_flag_is_a_low_note():
    facts = Facts(events=parse_lines(["WARNING 01-01 00:00:00 [x.py:1] " + _a_flag_warning()]).events)
    findings = [f for f in evaluate(facts).findings if f.rule == "VC-1"]
    assert findings and all(f.severity == Severity.LOW for f in findings)


def _a_flag_warning() -> str:
    """A logged warning of the catalog that names a flag, with its fields filled in."""
    from advisor.catalog.vllm_messages import message_catalog

    entry = next(
        e
        for e in message_catalog().entries
        if e["kind"] == "log" and e.get("level") == "warning" and e["flags"] and "{" not in e["message"]
    )
    return entry["message"]


def test_a_warning_that_says_it_costs_speed_is_a_low_finding_and_wsls_says_what_to_do():
    # vllm#1084: the only vLLM line the reporter had; the maintainer: "unavoidable in vLLM" under WSL
    top = _top(
        "WARNING 09-18 10:59:09 cache_engine.py:96] Using 'pin_memory=False' as WSL is detected. This may slow down "
        "the performance."
    )
    assert (top.rule, top.severity) == ("VC-1", Severity.LOW)
    assert "native Linux" in top.actions[0] and top.changes == []
    quiet = Facts(events=parse_lines(["WARNING 01-01 00:00:00 [x.py:1] " + _a_quiet_warning()]).events)
    assert [f for f in evaluate(quiet).findings if f.rule == "VC-1"] == []


def _a_quiet_warning() -> str:
    """A logged warning of the catalog that names nothing to change and no cost in speed: context only."""
    from advisor.catalog.vllm_messages import message_catalog

    return next(
        e["message"]
        for e in message_catalog().entries
        if e["kind"] == "log"
        and not (e["flags"] or e["env"])
        and "{" not in e["message"]
        and not vc._SLOWER.search(e["message"])
        and len(e["message"]) > 40
        and not any(remedy.match in e["message"] for remedy in REMEDIES)
    )


def test_an_unplaced_error_is_named_with_its_component_and_phase():
    text = """Traceback (most recent call last):
  File "/x/site-packages/vllm/v1/sample/sampler.py", line 90, in forward
    logits = self.apply_penalties(logits)
RuntimeError: shape mismatch in penalties
"""
    top = _top(text)
    assert top.rule == "VC-2" and "RuntimeError: shape mismatch in penalties" in top.title
    assert "sampler" in top.title and top.confidence == vc.UNPLACED_CONFIDENCE


def test_an_unplaced_error_that_names_a_flag_proposes_it():
    # an error no vLLM release words this way (a wrapper's, say): VC-2 still reads the flag it asks for
    top = _top(
        '{"error":{"message":"this gateway requires --enable-prefix-caching to be set","type":"BadRequestError"}}'
    )
    assert top.rule == "VC-2"
    assert top.changes[0].flag == "--enable-prefix-caching" and top.changes[0].proposed == "true"


def test_an_http_error_response_vllm_answers_with_is_its_own_message():
    # vLLM's OpenAI server answers this body with create_error_response (vllm/renderers/online_renderer.py in 0.32):
    # since the catalog holds error responses it is VC-1's, with vLLM's file and line; before, VC-2 named it
    body = (
        '{"error":{"message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
        'to be set","type":"BadRequestError","code":400}}'
    )
    top = _top(body)
    assert top.rule == "VC-1" and "online_renderer.py" in top.evidence[0].description
    assert top.changes[0].flag == "--enable-auto-tool-choice" and top.changes[0].proposed == "true"


def test_a_message_that_starts_with_a_field_takes_one_word_from_a_persons_sentence():
    # casper-hansen/AutoAWQ#545: vLLM's warning quoted inside the reporter's sentence
    top = _top(
        "When i ran quantize code for llama3-70b-instruct. It was successfull, but when i used vllm load quantized "
        "model. I got a warning: `awq quantization is not fully optimized yet. The speed can be slower than "
        "non-quantized models`."
    )
    assert top.title.startswith("vLLM warned: awq quantization is not fully optimized yet")
    assert "upgrade vLLM" in top.actions[0] and "kernels" in top.actions[0]


def test_a_field_at_the_start_of_vllms_own_line_keeps_its_words_and_the_gpu_is_named_not_a_setting():
    # vllm#23531, verbatim: a T4 (compute capability 7.5) fell back to V0; no person's words before the message
    top = _top(
        "(APIServer pid=5460) WARNING 08-25 20:02:55 [arg_utils.py:1770] Compute Capability < 8.0 is not supported "
        "by the V1 Engine. Falling back to V0."
    )
    assert top.title.startswith("vLLM warned: Compute Capability < 8.0 is not supported by the V1 Engine")
    assert top.actions[0].startswith("The GPU, not a setting, sent the server to V0")


def test_the_ray_executors_gpu_warning_says_it_counts_the_world_size_against_one_node():
    # vllm PR #31364, verbatim: TP 8 x PP 2 over two 8-GPU nodes warned though the layout was valid
    top = _top("Tensor parallel size (16) exceeds available GPUs (8).")
    assert top.rule == "VC-1" and any("`ray status`" in a and "#31364" in a for a in top.actions)


def test_requests_over_the_logprobs_limit_and_a_model_without_pipeline_parallelism_get_their_remedies():
    logprobs = _top(
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'Cannot request more than 5 "
        "logprobs.', 'type': 'BadRequestError', 'param': None, 'code': 400}"
    )
    assert logprobs.actions[0].startswith("Lower the request's logprobs")
    pipeline = _top(
        "NotImplementedError: Pipeline parallelism is not supported for this model. Supported models implement the "
        "`SupportsPP` interface."
    )
    assert "upgrade vLLM" in pipeline.actions[0]


def test_the_processors_per_prompt_image_limit_is_read_like_the_chat_parsers_per_request_one():
    # anomalyco/opencode#47930, verbatim: a chat client re-sending the conversation's images past the server's 8
    top = _top(
        "At most 8 image(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit. "
        "(parameter=image)"
    )
    assert top.rule == "VC-1" and top.changes == []
    assert [(c.flag, c.proposed) for c in top.alternatives] == [("--limit-mm-per-prompt", "image=9")]
    assert top.actions[0].startswith("Send fewer images per request from the client (at most 8")


def test_the_warning_that_sends_a_setting_back_to_v0_says_remove_it_to_run_on_v1():
    # a comment on vllm PR #19426, verbatim (its leading space kept): outlines under vLLM 0.9
    top = _top(
        " WARNING 07-12 04:13:21 [arg_utils.py:1735] --guided-decoding-backend=outlines is not supported by the V1 "
        "Engine. Falling back to V0."
    )
    assert top.rule == "VC-1" and top.title.startswith("vLLM warned: --guided-decoding-backend=outlines is not")
    assert top.actions[0].startswith("The server runs on V0, vLLM's older engine, because of the setting")


def test_an_internal_check_of_vllm_names_its_file_and_the_maintainers_fix():
    # vllm#8016 (0.5.5): an aborted request under V0's multi-step scheduling
    top = _top("AssertionError: expected running sequences")
    assert top.rule == "VC-1" and top.title == (
        "vLLM's internal check failed in engine/output_processor/multi_step.py: expected running sequences"
    )
    [change] = top.changes
    assert (change.flag, change.proposed) == ("--num-scheduler-steps", "1") and "abort" in change.reason
    assert top.actions[0].startswith("Turn off multi-step scheduling while clients can cancel requests")


def test_an_asserts_words_without_its_assertion_error_are_not_vllms_check():
    facts = Facts(events=parse_lines(["the tests expected running sequences to finish"]).events)
    assert not [f for f in evaluate(facts).findings if f.rule == "VC-1"]


def test_pythons_own_import_and_attribute_errors_are_not_read_as_vllms_refusals():
    # vllm-ascend#707: vLLM's lazy-import helper words a raise like Python's; the pasted line is Python's
    for line in (
        "ModuleNotFoundError: No module named 'vllm.benchmarks.serve'",
        "AttributeError: 'NoneType' object has no attribute 'shape'",
    ):
        top = _top(line)
        assert top.rule != "VC-1", (line, top.title)


def test_a_quantization_method_a_newer_release_knows_is_an_upgrade():
    # vllm#1919: a vLLM older than 0.2.6 refusing a GPTQ checkpoint; upgrading fixed it
    top = _top("ValueError: Unknown quantization method: gptq. Must be one of ['awq', 'squeezellm'].")
    assert top.rule == "VC-1" and top.actions[0].startswith("Upgrade vLLM: vLLM 0.4.3 supports the gptq")
    assert "installed vLLM version predates it (it accepts only ['awq', 'squeezellm'])" in top.actions[0]
    # the smallest upgrade: the first release read whose source has the method's module, not the newest release
    mxfp4 = _top("ValueError: Unknown quantization method: mxfp4. Must be one of ['awq', 'fp8', 'gptq'].")
    assert mxfp4.actions[0].startswith("Upgrade vLLM: vLLM 0.10.2 supports the mxfp4 quantization method")
    hyphenated = _top("ValueError: Unknown quantization method: compressed-tensors. Must be one of ['awq', 'gptq'].")
    assert "vLLM 0.4.3 supports the compressed-tensors quantization method" in hyphenated.actions[0]
    unknown = _top("ValueError: Unknown quantization method: nosuchquant. Must be one of ['awq'].")
    assert not any(action.startswith("Upgrade vLLM") for action in unknown.actions)


def test_a_mistral_tokenizer_mode_on_a_hugging_face_format_model_is_removed():
    # vllm#17210: a GGUF conversion served with the original repository's Mistral-format flags
    top = _top(
        "OSError: Found 0 files matching the pattern: `^tokenizer\\.model\\.v.*$|^tekken\\.json$|^tokenizer\\.mm\\."
        "model\\.v.*$`. Make sure that a Mistral tokenizer is present in ['model-Q6_K.gguf', 'config.json']."
    )
    [change] = top.changes
    assert (change.flag, change.proposed) == ("--tokenizer-mode", "") and "Hugging Face's format" in change.reason
    assert "--config-format mistral and --load-format mistral" in top.actions[0]


def test_every_audio_upload_refused_is_the_audio_extra_missing():
    # ls1intum/edutelligence#925: vLLM without its audio extra answers every transcription with this 400
    top = _top('{"error": {"message": "Invalid or unsupported audio file."}}')
    assert "`pip install 'vllm[audio]'`" in top.actions[0] and "ImportError" in top.actions[0]


def test_an_error_body_no_catalog_knows_says_whose_log_holds_its_cause():
    # kserve/kserve#4345: a body in KServe's shape, not vLLM's
    top = _top('{"error": "Model with name llama_adapter does not exist."}')
    assert top.rule == "VC-2" and top.actions[0].startswith("The server answered this error body")
    assert "what stands in front of vLLM" in top.actions[0]


def test_a_message_that_says_to_install_a_package_names_it_and_its_own_command():
    # vllm#13675: the transcription endpoint without the audio extra
    audio = _top("ImportError: Please install vllm[audio] for audio support")
    assert (
        audio.actions[0]
        == "Install vllm[audio] where the server runs (its image or environment), as vLLM's message says."
    )
    ray = _top("ImportError: Failed to import Ray, please install Ray with `pip install ray`.")
    assert "`pip install 'ray'`" in ray.actions[0]


def test_no_device_and_the_ds_conv_layout_get_their_remedies():
    # vllm#17249: pip's CUDA build on a CPU-only host
    device = _top("RuntimeError: Failed to infer device type")
    assert "vLLM's CPU build" in device.actions[0] and "nvidia-smi" in device.actions[0]
    # Sandermage/genesis-vllm-patches#17: the DS layout under MTP speculative decoding
    layout = _top(
        "NotImplementedError: DS conv state layout does not yet support speculative decoding with "
        "mamba_cache_mode='align' (num_accepted_tokens > 1)."
    )
    [change] = layout.changes
    assert (change.flag, change.kind, change.proposed) == ("VLLM_SSM_CONV_STATE_LAYOUT", "env", "")
    assert change.removes and change.command_line() == "unset VLLM_SSM_CONV_STATE_LAYOUT"
    assert any(line.startswith("   change VLLM_SSM_CONV_STATE_LAYOUT: unset it") for line in _finding(1, layout))
    assert change_view(change.model_dump())["proposed"] == "(unset)"


def test_a_content_part_vllm_does_not_parse_is_named_with_the_type_it_takes():
    # QwenLM/Qwen3-VL#174: Qwen's own message format sent to vLLM's OpenAI server
    top = _top('{"object":"error","message":"Unknown part type: image","type":"BadRequestError","code":400}')
    assert top.rule == "VC-1"
    assert "type 'image'" in top.actions[0] and "as an 'image_url' content part" in top.actions[0]
    newer = _top("Unsupported chat content part type: 'video'. Supported types: image_url, text, video_url.")
    assert "as a 'video_url' content part" in newer.actions[0]


def test_a_quantization_method_the_newest_vllm_dropped_names_the_releases_that_had_it():
    # unslothai/unsloth#482: vLLM 0.4.0 refusing a bitsandbytes checkpoint; 0.28 on have no bitsandbytes module
    top = _top("ValueError: Unknown quantization method: bitsandbytes. Must be one of ['awq', 'gptq', 'squeezellm'].")
    assert top.actions[0].startswith("vLLM 0.5 to 0.27 have the bitsandbytes quantization method")
    assert "16-bit weights" in top.actions[0]


def test_vllm_0_5_0s_qlora_only_bitsandbytes_and_an_unimplemented_architecture_say_to_upgrade():
    bnb = _top("Cannot find any of ['adapter_name_or_path'] in the model's quantization config.")
    assert "0.5.5 loads pre-quantized bitsandbytes checkpoints" in bnb.actions[0]
    other = _top("ValueError: Cannot find any of ['bits'] in the model's quantization config.")
    assert not any("bitsandbytes" in action for action in other.actions)  # the same template, another cause
    ovis = _top(
        "ValueError: Ovis has no vLLM implementation and the Transformers implementation is not compatible with vLLM."
    )
    assert ovis.actions[0].startswith("Upgrade vLLM to a release that lists the architecture")


def test_vllms_own_bare_assertion_is_a_bug_of_the_release_upgrade_and_leave_the_feature_out():
    # modelscope/ms-swift#6670: vLLM's LoRA shrink kernel's assertion during a GRPO rollout
    top = _top(
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/lora/ops/triton_ops/lora_shrink_op.py", line 149, in '
        "_lora_shrink\n    assert token_lora_mapping.size(0) == M\nAssertionError"
    )
    assert top.rule == "VC-2" and top.actions[0].startswith("vLLM's own code in LoRA adapters found a state")
    assert top.title.startswith("AssertionError at `assert token_lora_mapping.size(0) == M` (lora_shrink_op.py)")
    assert "Upgrade vLLM" in top.actions[0]
    elsewhere = _top('  File "/srv/app/main.py", line 3, in f\n    assert x\nAssertionError')
    assert not any("Upgrade vLLM" in action for action in elsewhere.actions)


def test_an_object_without_the_attribute_vllms_own_code_reads_is_an_upgrade():
    # kubeai-project/kubeai#533 (vLLM 0.8.3, mllama): V0's engine logs the error's words, then its traceback,
    # cut in the paste
    header = "ERROR 05-26 00:17:47 [engine.py:448] "
    lines = [
        "'ColumnParallelLinear' object has no attribute 'input_scale'",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 436, in '
        "run_mp_engine",
        "    engine = MQLLMEngine.from_vllm_config(",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 128, in '
        "from_vllm_config",
        "    return cls(",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 82, in __init__',
        "    self.engine = LLMEngine(*args, **kwargs)",
    ]
    top = _top("\n".join(header + line for line in lines))
    assert top.rule == "VC-2" and top.title.endswith("(in engine, during startup)")
    assert top.actions[0].startswith("vLLM's own code in engine reads an attribute its own object does not have")
    assert "Upgrade vLLM" in top.actions[0]
    library = _top(
        '  File "/srv/app/main.py", line 3, in f\n    cfg.rope_theta\n'
        "AttributeError: 'Config' object has no attribute 'rope_theta'"
    )
    assert not any("Upgrade vLLM" in action for action in library.actions)


def test_a_model_version_the_release_does_not_list_is_an_upgrade():
    """OpenSQZ/MiniCPM-V-CookBook#11: MiniCPM-V 4.0 on vLLM 0.10.0."""
    top = _top("ValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, and 2.6")
    assert top.rule == "VC-1" and top.actions[0].startswith("Upgrade vLLM to a release that implements the checkpoint")


def test_placeholders_that_outnumber_the_images_tokens_point_at_the_prompt_first_then_transformers():
    # dots.ocr#126: an image-pad token left in the prompt's text; dots.ocr#210: transformers behind the release
    top = _top("ValueError: Attempted to assign 462 = 462 multimodal tokens to 463 placeholders")
    assert top.rule == "VC-1"
    [action] = top.actions
    assert action.index("placeholder written into its text") < action.index("upgrade transformers")
    assert top.changes == []  # nothing on the launch to change: the action names both


def test_a_warning_about_an_unset_setting_is_context_not_a_finding():
    # vllm-project/vllm#1710: 0.2's config.py warned about the quantization of a model that had none
    facts = Facts(
        events=parse_lines(
            [
                "WARNING 11-18 03:39:14 config.py:128] None quantization is not fully optimized yet. The speed can be "
                "slower than non-quantized models."
            ]
        ).events
    )
    assert [f for f in evaluate(facts).findings if f.rule == "VC-1"] == []
    awq = _top(
        "WARNING 11-18 03:39:14 config.py:128] awq quantization is not fully optimized yet. The speed can be slower "
        "than non-quantized models."
    )
    assert awq.rule == "VC-1" and "upgrade vLLM" in awq.actions[0]


def test_an_unplaced_error_on_a_value_vllm_explains_elsewhere_quotes_that_explanation_first():
    # vllm#51801: BGE-M3's combined pooling task, a bare KeyError on 0.26; 0.29 says what to do about it
    top = _top(
        '  File "vllm/entrypoints/pooling/pooling/serving.py", line 59, in get_io_processor\n'
        "    return self.io_processors[pooling_task]\nKeyError: 'embed&token_classify'"
    )
    assert top.rule == "VC-2" and top.actions[0].startswith("vLLM's own words for the value this error names")
    assert "select a concrete task with --pooler-config.task" in top.actions[0]
    assert not any(action.startswith("vLLM's nearest messages") for action in top.actions)


def test_a_long_unplaced_error_is_titled_by_its_whole_first_sentences():
    # vllm-project/vllm-omni#3981: a stage's READY wait, its advice in a third sentence
    top = _top(
        "TimeoutError: Timed out waiting for READY from StageEngineCoreProc after 300s. This typically indicates "
        "model loading or initialization is taking too long. Consider increasing `stage_init_timeout` for large "
        "models."
    )
    assert top.title.startswith("TimeoutError: Timed out waiting for READY from StageEngineCoreProc after 300s. ")
    assert "initialization is taking too long. (" in top.title and "stage_init" not in top.title
    words = "RuntimeError: " + " ".join(["word"] * 60)
    assert _top(words).title.startswith(words[: vc.TITLE_CHARS].rsplit(" ", 1)[0] + " … (")


def test_a_paste_that_ends_at_a_fields_sentence_gives_one_full_stop_and_a_title_of_whole_sentences():
    # imoneoi/openchat#73: the first sentences of vLLM's bf16 refusal, pasted up to the GPU's capability
    top = _top(
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your NVIDIA GeForce "
        "RTX 2070 GPU has compute capability 7.5."
    )
    assert top.title.endswith("GPU has compute capability 7.5.") and ".." not in top.title


def test_vllms_internal_server_error_is_a_failed_request_whose_cause_is_in_the_log():
    """GenerationError('Internal server error') is vLLM's answer when a request's generation ended in error
    (vllm/entrypoints/generate/base/serving.py, 0.13 on): not a refusal of what the client sent."""
    top = _top("Error code: 500 - {'message': 'Internal server error'}")
    assert top.rule == "VC-1" and top.title == "vLLM failed the request: Internal server error"
    assert not top.changes
    assert any("failed with an internal error during generation" in action for action in top.actions)
    assert "refused" not in top.title


def test_no_distribution_named_vllm_is_why_platform_detection_fails():
    """vllm/platforms/__init__.py (0.7 on): the GPU plugins read the `vllm` distribution's version; a fork
    installed under another name (sasha0552/pascal-pkgs-ci#13: vllm-pascal) leaves vLLM on UnspecifiedPlatform."""
    top = _top(
        "WARNING 03-14 23:02:37 __init__.py:26] The vLLM package was not found, so its version could not be "
        "inspected. This may cause platform detection to fail.\n"
        "INFO 03-14 23:02:38 __init__.py:211] No platform detected, vLLM is running on UnspecifiedPlatform"
    )
    assert top.rule == "VC-1" and top.severity == Severity.HIGH  # a warning, but the server finds no GPU
    assert any("distribution named `vllm`" in action and "pip install -e ." in action for action in top.actions)


def test_an_error_a_plugin_raised_points_at_the_plugin_not_at_vllms_nearest_messages():
    """baidu/vLLM-Kunlun#477: vllm_kunlun's kernel check; vLLM's catalog cannot hold a plugin's words."""
    top = _top(
        'File "vllm_kunlun/v1/attention/backends/kunlun_attn.py", line 928, in forward\n'
        "  kunlun_ops.speculative_attention(\n"
        "ValueError: Check 0 == ret failed, left operand=0, speculative_attention failed\n"
    )
    assert top.rule == "VC-2"
    assert any("comes from vllm_kunlun's code" in action for action in top.actions)
    assert not any(action.startswith("vLLM's nearest messages") for action in top.actions)


def test_an_error_line_a_plugins_logger_wrote_names_the_plugin():
    """vllm-project/vllm-omni#3981: no traceback, but the header names vllm_omni's file."""
    top = _top(
        "(APIServer pid=70993) ERROR 05-29 08:37:38 [vllm_omni/engine/async_omni_engine.py:1148] TimeoutError: "
        "Timed out waiting for READY from StageEngineCoreProc after 300s."
    )
    assert top.rule == "VC-2" and any("comes from vllm_omni's code" in action for action in top.actions)
    assert any("first frame inside vllm_omni/" in action for action in top.actions)
    own = _top("ERROR 05-29 08:37:38 [v1/engine/core.py:1148] TimeoutError: Timed out waiting for the frobnicator.")
    assert not any("comes from" in action for action in own.actions)


def test_the_combined_pooling_task_is_given_the_concrete_task_vllms_words_ask_for():
    """vllm#51801: 0.29's words say to select a concrete task with --pooler-config.task; PoolerConfig.task takes
    embed (dense) or token_classify (per-token), in 0.26 too, so the change is the flag as `vllm serve` takes it."""
    top = _top("KeyError: 'embed&token_classify'")
    [change] = top.changes
    assert (change.flag, change.proposed) == ("--pooler-config", '{"task": "embed"}')
    assert "token_classify" in change.reason
    assert any("plugin requests" in action for action in top.actions)  # the other way vLLM's words give


def test_advice_vllm_logged_leaves_an_unknown_exception_to_vc2():
    """A warning that only advises (the rerank route's move) once silenced VC-2 for the traceback under it, and the
    paste got no finding; a message VC-1 makes a finding of still does."""
    advice = (
        "(APIServer pid=1) WARNING 12-01 10:14:22 [api_router.py:93] To indicate that the rerank API is not part of "
        "the standard OpenAI API, we have located it at `/rerank`. Please update your client accordingly. (Note: "
        "Conforms to JinaAI rerank API)"
    )
    traceback = [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py", line 300, in '
        "create_chat_completion",
        "    generator = await handler.create_chat_completion(request, raw_request)",
        "ZeroDivisionError: division by zero",
    ]
    [finding] = evaluate(Facts(events=parse_lines([advice, *traceback]).events)).findings
    assert (
        finding.rule == "VC-2" and finding.title == "ZeroDivisionError: division by zero (in API server, while serving)"
    )


def test_a_refusal_without_a_known_remedy_points_at_its_check_in_vllms_source():
    # any raise the catalog holds whose words name no flag and no remedy: the next step is the condition that raised
    top = _top(
        "ValueError: Model architectures ['Qwen3NextForCausalLM'] failed to be inspected. Please check the logs "
        "for more details."
    )
    assert top.rule == "VC-1" and "Error in inspecting model architecture" in top.actions[0]  # its remedy
    bare = _top("ValueError: `raw_beta` heads must be contiguous.")  # a raise no remedy knows, naming no flag
    assert bare.rule == "VC-1" and not (bare.changes or bare.alternatives)
    assert bare.actions == [bare.actions[0]] and bare.actions[0].startswith("vLLM's check is at vllm/")


def test_a_ray_cluster_with_fewer_gpus_than_the_workers_lowers_tensor_parallel_or_adds_gpus():
    top = _top(
        "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group."
    )
    assert top.rule == "VC-1" and [c.flag for c in top.changes] == ["--tensor-parallel-size"]
    assert "ray status" in top.actions[0]


def test_a_quantization_whose_kernels_need_a_newer_gpu_says_gpu_or_checkpoint():
    # vllm#1488: AWQ on a V100 (7.0 < 7.5); and compressed-tensors' older words, raised as a tuple of strings
    for line in (
        "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. "
        "Current capability: 70.",
        "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', "
        "'Current capability: 75.')",
    ):
        top = _top(line)
        assert top.rule == "VC-1" and top.actions[0].startswith("This GPU is older than the quantization's kernels")


def test_a_message_that_says_which_value_to_set_a_flag_to_gets_that_value_whatever_its_spelling():
    # tenstorrent/tt-inference-server#3151: the platform plugin's own limit, in words no catalog holds (VC-2)
    plugin = (
        "ValueError: TT-LLama8B and TT-Llama11B do not support max_model_len greater than 32768 on N150 (received "
        "65536). Set --max_model_len to 32768 or lower in vLLM."
    )
    top = _top(plugin)
    assert top.rule == "VC-2"
    assert [(c.flag, c.proposed) for c in top.changes] == [("--max-model-len", "32768")]
    # vLLM's own advice with the field's name and a boolean: the value it names, not the direction its first
    # words suggest (0.10's warning begins "Chunked prefill is enabled", and says to set it False)
    advice = (
        "Chunked prefill is enabled by default for models with max_model_len > 32K. Currently, chunked prefill might "
        "not work with some features or models. If you encounter any issues, please disable chunked prefill by "
        "setting --enable-chunked-prefill=False."
    )
    changes = vc.worded_changes(advice, ["--enable-chunked-prefill", "--max-model-len"], Facts())
    assert [(c.flag, c.proposed) for c in changes] == [("--enable-chunked-prefill", "false")]
    said = "To silence this warning, specify disable_custom_all_reduce=True explicitly."
    assert [c.proposed for c in vc.worded_changes(said, ["--disable-custom-all-reduce"], Facts())] == ["true"]
    # what vLLM says it does itself is no advice
    done = "MLPSpeculator cannot currently be run with tp>1; setting speculative_draft_tensor_parallel_size=1"
    assert vc.worded_changes(done, ["--speculative-draft-tensor-parallel-size"], Facts()) == []


_NO_CACHE_BLOCKS_0_7 = (
    "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
    "the engine."
)
_NO_CACHE_BLOCKS_0_22 = (
    "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
    "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See "
    "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)


def _share_change(top):
    return next((c.current, c.proposed) for c in top.changes if c.flag == "--gpu-memory-utilization")


def test_a_paste_without_a_version_is_dated_by_its_own_wording_for_the_defaults_it_reads():
    """vLLM's default share is 0.90 before 0.20 and 0.92 from it. A bare line in 0.22-0.32's wording says it comes
    from a server of 0.20 or later, so the share it ran at unset is 0.92; the older wording (0.7-0.12) reads 0.90; a
    stated version wins over the wording."""
    assert c.defaults_release(Facts(events=parse_lines([_NO_CACHE_BLOCKS_0_22]).events)) == (0, 22, 0)
    assert _share_change(_top(_NO_CACHE_BLOCKS_0_22)) == ("0.92", "0.95")
    assert _share_change(_top(_NO_CACHE_BLOCKS_0_7)) == ("0.90", "0.95")
    stated = "INFO 05-01 12:00:00 api_server.py:1 vLLM API server version 0.10.1\n" + _NO_CACHE_BLOCKS_0_22
    assert _share_change(_top(stated)) == ("0.90", "0.95")
    # a header naming 0.33's file places the message there, but the same words from 0.22's file date it as 0.22
    headed = "ERROR 05-01 12:00:00 [kv_cache_planning.py:57] " + _NO_CACHE_BLOCKS_0_22.removeprefix("ValueError: ")
    [event] = [e for e in parse_lines([headed]).events if e.catalog]
    assert event.catalog.file.endswith("kv_cache_planning.py") and event.catalog.first == "0.33"
    assert event.catalog.location() == "vllm/v1/core/kv_cache_planning.py:57 (vLLM 0.33)"  # one release, said once
    assert c.defaults_release(Facts(events=[event])) == (0, 22, 0)
    # lines no single release prints together date nothing
    mixed = Facts(events=parse_lines([_NO_CACHE_BLOCKS_0_7, _NO_CACHE_BLOCKS_0_22]).events)
    assert c.defaults_release(mixed) is None


def test_the_cpu_workers_bound_is_read_and_a_raise_never_lowers_a_share_past_the_ceiling():
    """vLLM 0.33's CPU worker names the share its footprint needs ("to more than 0.54": 30 GiB of a 56 GiB node,
    rounded up; vllm/v1/worker/cpu_worker.py). The change goes a step past it, room for the KV cache; a bound that
    leaves the host nothing (0.93 + a step is past the 0.95 ceiling) moves no share; and a server already given
    0.97, above the ceiling, is not "raised" to 0.95."""

    def line(bound: str) -> str:
        return (
            "ValueError: The worker already uses 30.00 GiB (model weights and runtime), more than the 28.00 GiB of "
            "CPU memory reserved for it on node 0, leaving none for the KV cache. On the CPU backend, the "
            "`--gpu-memory-utilization` flag controls the fraction of CPU memory reserved (despite its name). To "
            f"resolve: increase `--gpu-memory-utilization` to more than {bound}, or set the KV cache size explicitly "
            "with `--kv-cache-memory-bytes` or VLLM_CPU_KVCACHE_SPACE."
        )

    top = _top(line("0.54"), {"--gpu-memory-utilization": "0.50"})
    assert top.rule == "VC-1" and _share_change(top) == ("0.50", "0.59")
    assert "to more than 0.54" in top.changes[0].reason
    shares = [ch for ch in _top(line("0.93"), {"--gpu-memory-utilization": "0.90"}).changes if ch.flag.endswith("tion")]
    assert shares == []
    shares = [ch for ch in _top(line("0.54"), {"--gpu-memory-utilization": "0.97"}).changes if ch.flag.endswith("tion")]
    assert shares == []


def test_a_wording_only_some_patches_print_is_placed_and_dated_by_those_patches():
    """The catalog reads every patch of a minor: 0.5.1's pipeline-parallel refusal (vllm/config.py, gone by 0.5.3;
    vllm-project/vllm#6601) is vLLM's own words in 0.5.1–0.5.2, and torchao's install hint came in 0.8.4, so a
    paste holding it comes from 0.8.4 or later, not from any 0.8."""
    refusal = "NotImplementedError: Pipeline parallelism is not supported yet with multiprocessing."
    [event] = [e for e in parse_lines([refusal]).events if e.catalog]
    assert event.catalog.file == "vllm/config.py" and event.catalog.location().endswith("(vLLM 0.5.1–0.5.2)")
    assert c.defaults_release(Facts(events=[event])) == (0, 5, 1)
    hint = "ImportError: Please install torchao>=0.10.0 via `pip install torchao>=0.10.0` to use torchao quantization."
    [event] = [e for e in parse_lines([hint]).events if e.catalog]
    assert event.catalog.wording_first == "0.8.4" and c.defaults_release(Facts(events=[event])) == (0, 8, 4)


def test_the_async_output_warning_under_enforce_eager_proposes_dropping_it():
    """V0's warning (vllm/platforms/cuda.py, 0.6.5 to 0.10) names the cost of --enforce-eager, not its fix."""
    line = (
        "WARNING 11-12 10:00:00 config.py:400] To see benefits of async output processing, enable CUDA graph. Since, "
        "enforce-eager is enabled, async output processor cannot be used"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "VC-1" and [(c.flag, c.proposed) for c in top.changes] == [("--enforce-eager", "false")]


def test_xgrammar_falling_back_to_outlines_says_what_in_the_schema_makes_it():
    # vLLM 0.6-0.7's guided decoding on a schema xgrammar could not compile: outlines then builds it, slowly
    top = _top(
        "WARNING 02-01 10:00:00 [__init__.py:61] xgrammar does not support advanced JSON schema features like "
        "patterns or numeric ranges. Falling back to use outlines instead."
    )
    assert top.rule == "VC-1" and top.severity.value == "medium"
    assert top.actions[0].startswith("Drop or loosen those constraints in the schema")


def test_the_fallback_built_from_parts_keeps_its_whole_sentence_and_its_remedy():
    # HabanaAI/vllm-fork#2155, verbatim: 0.8-0.10's `{message} Falling back to use {fallback} instead.`; the field
    # is a sentence, not the one word before vLLM's words
    top = _top(
        "WARNING 11-26 20:25:33 [__init__.py:34] xgrammar does not support advanced JSON schema features like string "
        "length, item limits, or property bounds. Falling back to use outlines instead."
    )
    assert top.rule == "VC-1" and top.severity.value == "medium"
    assert top.title.startswith("vLLM warned: xgrammar does not support advanced JSON schema features")
    assert top.actions[0].startswith("Drop or loosen what the message names")


def test_a_deprecated_vllm_import_path_asks_the_calling_code_for_the_new_one():
    # huggingface/trl PR #4883, verbatim: vLLM 0.11.1 moved get_open_port
    top = _top(
        "<stdin>:1: DeprecationWarning: vllm.utils.get_open_port is deprecated and will be removed in a future "
        "version. Use vllm.utils.network_utils.get_open_port instead."
    )
    assert top.rule == "VC-1" and top.actions[0].startswith("Change the import to the new path")


def test_a_message_cut_after_an_exclamation_is_still_vllms_and_asks_for_the_placeholders():
    # verl-project/verl#841, verbatim (the paste opens with a quote and stops inside its second sentence): 0.8's
    # first sentence ends with `!`, which now ends a sentence for a cut paste as a full stop does
    top = _top(
        " 'RuntimeError: Expected there to be 1 prompt updates corresponding to 1 image items, but instead found 0 "
        "prompt updates! Either the prompt text has missing/incorrect tokens for multi-modal inputs, or there is a "
        "problem with your implementation of merged multi-modal processor for this model (usually arising from an "
        "inconsistency between `_call_hf_processor` and `_get_prompt_updates`'"
    )
    assert top.rule == "VC-1" and top.title.startswith("vLLM refused: Expected there to be 1 prompt updates")
    assert top.actions[0].startswith("Apply the model's chat template to the prompt")


def test_a_kernel_tile_the_ranks_slice_misses_shrinks_the_parallel_size_by_the_factor_it_lacks():
    # vllm-project/llm-compressor#57's refusal (vLLM's BitBLAS/Marlin check): 7392 per rank, a tile of 128, so each
    # rank's slice needs 4x more: TP 8 -> 2; the tile is never the parallel size
    line = (
        "ValueError: Weight input_size_per_partition = 7392 is not divisible by min_thread_k = 128. Consider reducing "
        "tensor_parallel_size or running with --quantization gptq."
    )
    alone = _top(line)
    assert (alone.changes[0].flag, alone.changes[0].current, alone.changes[0].proposed) == (
        "--tensor-parallel-size",
        None,
        "<the current size ÷ 4>",
    )
    facts = Facts(events=parse_lines([line]).events, config=ServerConfig(tensor_parallel_size=8))
    served = evaluate(facts).findings[0]
    assert (served.changes[0].current, served.changes[0].proposed) == ("8", "2")
    # vllm-project/llm-compressor#57, verbatim: 0.4.2-0.5.1's words name no flag; the slice is still TP's
    older = _top(
        "(VllmWorkerProcess pid=14678) ERROR 08-05 23:29:38 multiproc_worker_utils.py:226] ValueError: Weight "
        "input_size_per_partition = 7392 is not divisible by min_thread_k = 128."
    )
    assert (older.changes[0].flag, older.changes[0].proposed) == ("--tensor-parallel-size", "<the current size ÷ 4>")


def test_an_adapters_vision_modules_dropped_by_vllm_ask_for_merged_weights_or_the_tower_flag():
    # vllm#23796, verbatim: a Qwen2.5-VL adapter that also trained visual.*; vLLM skips each such module
    top = _top(
        "2025-08-28 13:21:34 (EngineCore_0 pid=288) WARNING 08-28 05:21:34 [models.py:472] Regarding multimodal "
        "models, vLLM currently only supports adding LoRA to language model, visual.merger.mlp.0 will be ignored."
    )
    assert top.rule == "VC-1" and top.severity.value == "medium"
    assert "merge_and_unload" in top.actions[0] and "--enable-tower-connector-lora" in top.actions[0]


def test_the_startup_notice_that_lora_covers_the_language_model_alone_is_not_a_finding():
    # V0's and early V1's model runners say it once for any multimodal model served with LoRA: nothing dropped
    line = "WARNING 03-01 10:00:00 [model_runner.py:1061] Regarding multimodal models, vLLM currently only supports "
    top = evaluate(Facts(events=parse_lines([line + "adding LoRA to language model."]).events)).top
    assert top is None


def test_base64_embeddings_refused_by_an_old_release_ask_the_client_for_floats_or_an_upgrade():
    # vllm#5734, verbatim: LangChain's OpenAIEmbeddings asks for base64 (the OpenAI SDK's default), which vLLM 0.4.3 to
    # 0.5.0 refused
    top = _top(
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'base64 encoding is not currently "
        "supported', 'type': 'BadRequestError', 'param': None, 'code': 400}"
    )
    assert top.rule == "VC-1" and 'encoding_format="float"' in top.actions[0] and "upgrade vLLM" in top.actions[0]


def test_a_response_id_vllm_never_stored_proposes_the_store_variable():
    # BerriAI/litellm#26147, verbatim: a second turn's previous_response_id; a commenter set the store variable
    top = _top(
        '{"error":{"message":"Response with id \'resp_998bca5d44e22037\' not found.","type":"invalid_request_error",'
        '"param":"response_id","code":404}}.'
    )
    assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("VLLM_ENABLE_RESPONSES_API_STORE", "1", "env")]


def test_top_p_zero_meant_as_greedy_asks_the_client_for_one_and_temperature_zero():
    # EvolvingLMMs-Lab/lmms-eval#1265, verbatim: fixed by normalising top_p=0 to 1.0 before building SamplingParams
    top = _top("vllm.exceptions.VLLMValidationError: top_p must be in (0, 1], got 0. (parameter=top_p, value=0)")
    assert "top_p=1.0" in top.actions[0] and "temperature=0" in top.actions[0]


def test_v0s_swap_space_refusal_proposes_more_swap_or_fewer_sequences():
    # verl PR #960, verbatim: V0 rollouts of long sequences outgrew the 4 GiB swap space (raised via engine_kwargs)
    top = _top(
        "in _swap_out raise RuntimeError( RuntimeError: Aborted due to the lack of CPU swap space. Please increase the "
        "swap space to avoid this error"
    )
    assert [c.flag for c in top.changes] == ["--swap-space"]
    assert [c.flag for c in top.alternatives] == ["--max-num-seqs"]
    assert top.changes[0].proposed.startswith("<more than the 4 GiB per GPU default")


def test_an_architecture_whose_transformers_code_vllm_cannot_run_asks_for_a_release_that_implements_it():
    # modelscope/ms-swift#5649, verbatim: Ovis2.5 on vLLM 0.10.0 (native support was then on main only)
    top = _top(
        "(VllmWorker rank=3 pid=142898) ERROR 09-03 19:09:57 [multiproc_executor.py:511] ValueError: The "
        "Transformers implementation of 'Ovis2_5' is not compatible with vLLM."
    )
    assert top.actions[0].startswith("Upgrade vLLM to a release whose supported-models list has the architecture")


def test_flashinfers_sampler_version_warning_says_when_it_is_wrong():
    # vllm#22455, verbatim: FlashInfer 0.2.10 read as older than 0.2.3 by a string comparison
    top = _top(
        "WARNING 08-07 20:24:13 [topk_topp_sampler.py:36] FlashInfer version >= 0.2.3 required. Falling back to "
        "default sampling implementation."
    )
    assert "pip show flashinfer-python" in top.actions[0] and "vllm#22455" in top.actions[0]


def test_a_bound_kept_by_a_paste_cut_before_the_flags_value_is_still_proposed():
    # rwlove/home-ops PR #13226, verbatim: the author quoted the Mamba check from its middle; at 128k context the cache
    # held 95 blocks, and the fix set --max-num-seqs 32
    top = top_finding("`exceeds available Mamba cache blocks (95)... CUDA graph capture cannot proceed`")
    assert top.rule == "VC-1" and [(c.flag, c.current, c.proposed) for c in top.changes] == [
        ("--max-num-seqs", None, "95")
    ]


def test_a_parser_whose_tokens_the_tokenizer_lacks_is_the_parser_or_the_model_not_meant():
    # vllm-project/recipes#515: --reasoning-parser gemma4 on a Gemma 3 model (the path was wrong); vllm#9304: GLM-4
    # and MiniCPM3 served with --tool-call-parser hermes. The lines are vLLM's messages (basic_parsers.py, 0.11 on;
    # hermes_tool_parser.py).
    reasoning = _top(
        "RuntimeError: Gemma4ReasoningParser reasoning parser could not locate think start/end tokens in the tokenizer!"
    )
    assert reasoning.rule == "VC-1" and reasoning.changes[0].flag == "--reasoning-parser"
    assert "vllm-project/recipes#515" in reasoning.actions[0]
    jamba = _top("RuntimeError: Jamba Tool parser could not locate tool calls start/end tokens in the tokenizer!")
    assert jamba.changes[0].flag == "--tool-call-parser"  # every tool parser's words, not Hermes's alone
    tool = _top("RuntimeError: Hermes 2 Pro Tool parser could not locate tool call start/end tokens in the tokenizer!")
    assert tool.changes[0].flag == "--tool-call-parser"
    assert tool.changes[0].proposed == "<the parser of the served model's tool-call format>"


def test_the_dp_coordinators_missing_addresses_are_a_start_slower_than_its_timeout():
    # vllm PR #43611 (its author's diagnosis, tested: the fixed 30 s outlasted on a loaded NFS with spawn)
    top = _top("RuntimeError: DP Coordinator process failed to report ZMQ addresses during startup.")
    assert top.rule == "VC-1" and not top.changes  # a setting of the host, said in the action
    assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in top.actions[0] and "local disk" in top.actions[0]


def test_an_unbound_local_in_pythons_words_is_the_raising_codes_bug_not_a_flag():
    # vllm PR #24217, verbatim: V0's engine logged the words alone; the merged fix: Auto-Round's MoE loading on an
    # SM75 GPU (no Marlin kernels) reached an unset GPTQMarlinMoEMethod
    top = _top(
        "ERROR 09-03 20:42:16 [engine.py:458] cannot access local variable 'GPTQMarlinMoEMethod' where it is not "
        "associated with a value"
    )
    assert top.rule == "VC-2" and top.title.startswith("UnboundLocalError: cannot access local variable")
    assert top.actions[0].startswith("An UnboundLocalError is a bug of the code that raised it")
    assert "'GPTQMarlinMoEMethod'" in top.actions[0] and not top.changes
    older = _top("UnboundLocalError: local variable 'quant_method' referenced before assignment")
    assert "'quant_method'" in older.actions[0]


def test_a_prompt_token_out_of_vocabulary_is_a_prompt_tokenized_for_another_model():
    # hiyouga/LlamaFactory#7328, verbatim: the qwen template on DeepSeek-R1-Distill-Qwen; the maintainer: deepseek3
    top = _top("ValueError: Token id 151665 is out of vocabulary")
    assert top.rule == "VC-1" and not top.changes
    assert "hiyouga/LlamaFactory#7328" in top.actions[0] and "own tokenizer" in top.actions[0]
    assert "Fed back from the model's own output" in top.actions[0]  # vllm#13175, NVIDIA-NeMo/RL#237
    negative = _top("ValueError: Token id -100 is out of vocabulary")
    assert "A negative id" in negative.actions[0]


def test_the_default_moe_config_warning_says_how_to_tune_one_for_this_gpu():
    # vllm#27496's file name (Qwen3-30B-A3B on GH200, slow; the reporter then linked a PR adding GH200 configs)
    top = _top(
        "WARNING 10-20 09:00:00 [fused_moe.py:1253] Using default MoE config. Performance might be sub-optimal! "
        "Config file not found at ['/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/"
        "configs/E=128,N=768,device_name=NVIDIA_GH200_480GB.json']"
    )
    assert top.rule == "VC-1" and top.severity == Severity.LOW and not top.changes
    assert "benchmark_moe.py" in top.actions[0] and "VLLM_TUNED_CONFIG_FOLDER" in top.actions[0]


def test_a_wordless_assert_pasted_alone_is_placed_in_vllms_files_that_hold_it():
    # verl-project/verl#4418, verbatim: the source line above a bare AssertionError, pasted alone
    top = _top("    assert token_lora_mapping.size(0) == M")
    assert top.rule == "VC-1" and top.title.startswith("vLLM's internal check failed in lora/ops/triton_ops/")
    assert "other files" in top.title and "the same statement is also in" in top.summary
    assert "lora_shrink" in top.title + top.summary and "Upgrade vLLM" in top.actions[0]
    # QwenLM/Qwen3-VL#247, verbatim: Qwen2-VL's mrope config on a vLLM without its support (vLLM 0.6.1)
    dated = _top('    assert "factor" in rope_scaling')
    assert (
        dated.rule == "VC-1"
        and dated.title == 'vLLM\'s internal check failed in config.py: assert "factor" in rope_scaling'
    )
    assert "(vLLM 0.4–0.6.2)" in dated.summary


def test_a_statement_vllm_does_not_hold_or_one_another_packages_frame_ran_is_not_vllms_check():
    # vllm's CI (a test's own assert, pytest's line), verbatim from a probe row: not a check of vLLM's package
    assert _top("assert output == other_output").rule != "VC-1"
    elsewhere = _top('  File "/srv/app/main.py", line 3, in f\n    assert "factor" in rope_scaling\nAssertionError')
    assert elsewhere.rule == "VC-2"


def test_a_rule_that_reads_the_cause_from_the_statement_ranks_above_the_place_of_the_check():
    # vllm#34094's title: OP-7.180 says why the causal-conv1d kernel's check failed; VC-1 only where
    findings = evaluate(Facts(events=parse_lines(["assert num_cache_lines >= batch"]).events)).findings
    assert [f.rule for f in findings[:2]] == ["OP-7.180", "VC-1"]


def test_an_assertion_quoted_inside_another_error_is_vllms_check_with_its_remedy():
    # triton-inference-server/vllm_backend PR #39, verbatim: its tests loaded and unloaded the model over and over
    top = _top(
        '2. Removes frequent loading and unloading of "vllm_opt" model from vllm_backend tests, which was causing '
        "issues with vllm's memory profiler and resulting in `tritonclient.utils.InferenceServerException: "
        "[StatusCode.INVALID_ARGUMENT] load failed for model 'vllm_opt': version 1 is at UNAVAILABLE state: Internal: "
        "AssertionError: Error in memory profiling. This happens when the GPU memory was not properly cleaned up "
        "before initializing the vLLM instance.`"
    )
    assert top.rule == "VC-1" and top.title.startswith("vLLM's internal check failed in worker/worker.py")
    assert "fresh process" in top.actions[0] and "PR #39" in top.actions[0]
    # the same words as someone's sentence, not after `AssertionError:`, are not the assertion
    said = evaluate(Facts(events=parse_lines(["Error in memory profiling. This happens when the GPU memory"]).events))
    assert not any(f.title.startswith("vLLM's internal check failed") for f in said.findings)


def test_an_assertion_vllms_executor_quotes_from_a_worker_is_the_assert_with_its_remedy():
    # vllm-project/recipes PR #760, verbatim (the paste lost the R of RuntimeError): DeepSeek-V4-Flash on RTX PRO 6000
    top = _top(
        "untimeError: Worker failed with error 'use_fp4_indexer_cache requires Blackwell datacenter GPUs (sm_10x, e.g. "
        "B200/GB200); sm_120 (consumer Blackwell) and earlier architectures are not supported.', please check the "
        "stack trace above for the root cause"
    )
    assert top.rule == "VC-1" and "mla/indexer.py" in top.title
    change = top.changes[0]
    assert (change.flag, change.proposed) == ("--attention-config.use_fp4_indexer_cache", "")
    assert "recipes PR #760" in top.actions[0]


def test_an_mtp_drafter_run_again_per_token_says_to_read_the_acceptance_per_position():
    # eugr/spark-vllm-docker#343, verbatim (wrapped in the report): 4 tokens on Gemma 4's MTP layer; 2 did better
    top = _top("WARNING [speculative.py:940] Enabling num_speculative_tokens > 1 will run multiple times")
    assert top.rule == "VC-1" and top.severity == Severity.LOW
    assert "spec_decode_num_accepted_tokens_per_pos_total" in top.actions[0] and "#343" in top.actions[0]


def test_deprecated_model_flag_and_use_inductor_say_what_replaces_them():
    # defilantech/LLMKube PR #360, verbatim (wrapped, its backticks escaped for Markdown): `--model <path>` on vLLM 0.20
    top = _top("WARNING [argparse_utils.py:257] With \\`vllm serve\\`, you should provide")
    assert top.rule == "VC-1" and top.title.startswith("vLLM warned: With `vllm serve`, you should provide the model")
    assert (top.changes[0].flag, top.changes[0].proposed) == ("--model", "")
    assert top.actions[0].startswith("Pass the model first: `vllm serve <model> …`")
    # NVIDIA-NeMo/RL#1652, verbatim: its instructions set use_inductor, which vLLM 0.12 removes
    inductor = _top(
        "(VllmAsyncGenerationWorker pid=3351223, ip=10.65.13.209) WARNING 12-17 12:47:06 [compilation.py:699] The "
        "'use_inductor' flag is deprecated and will be removed in the next release (v0.12.0). Please use the 'backend' "
        "option instead."
    )
    assert inductor.rule == "VC-1" and '"backend": "inductor"' in inductor.actions[0]


def test_a_statement_read_as_vllms_check_is_taken_back_when_its_own_traceback_or_pytest_places_it():
    # a statement as an issue's title, then the application's own traceback with it
    titled = parse_lines(
        [
            "assert self.model_runner.lora_manager is not None",
            "Traceback (most recent call last):",
            '  File "/home/u/proj/loader.py", line 5, in load',
            "    assert self.model_runner.lora_manager is not None",
            "AssertionError",
        ]
    ).events
    assert not any(e.catalog and e.catalog.kind == "check" for e in titled)
    # pytest's short traceback, and its long one with the failure line under the statement
    short = parse_lines(
        ["mypkg/loader.py:40: in load", "    assert token_lora_mapping.size(0) == M", "E   AssertionError"]
    )
    long = parse_lines([">       assert token_lora_mapping.size(0) == M", "E       AssertionError: assert 3 == 4"])
    for events in (short.events, long.events):
        assert not any(e.catalog and e.catalog.kind == "check" for e in events)
    # a comment the traceback printed with the line is not part of the statement
    commented = _top("    assert token_lora_mapping.size(0) == M  # shapes")
    assert commented.rule == "VC-1" and "lora/ops/triton_ops/" in commented.title


def test_an_unknown_vllm_variable_logged_at_warning_is_a_warning_that_says_where_such_variables_come_from():
    # defilantech/LLMKube#358, verbatim: Kubernetes service links of a Service named vllm-v020-smoke
    top = _top(
        "WARNING 04-28 22:43:20 [envs.py:1818] Unknown vLLM environment variable detected: "
        "VLLM_V020_SMOKE_SERVICE_PORT_HTTP"
    )
    assert top.rule == "VC-1" and top.title.startswith("vLLM warned: Unknown vLLM environment variable")
    assert top.severity == Severity.LOW and "enableServiceLinks: false" in top.actions[0]
    # vllm#45311, verbatim, with only the level before the logger's file: the image's own build variables
    image = _top("WARNING [envs.py:2057] Unknown vLLM environment variable detected: VLLM_BUILD_COMMIT")
    assert image.title.startswith("vLLM warned:") and "vllm#45311" in image.actions[0]


def test_a_config_without_architectures_names_the_class_to_add_logged_or_raised():
    # vllm#14105, verbatim: logged at warning by that release (deepseek-vl2-small in the vllm-openai container)
    top = _top("vllm-openai-1  | WARNING 03-03 02:50:08 registry.py:385] No model architectures are specified")
    assert top.rule == "VC-1" and top.title == "vLLM warned: No model architectures are specified"
    assert top.severity == Severity.HIGH and top.changes[0].flag == "--hf-overrides"
    assert "vllm#583" in top.actions[0] and "vllm#11224" in top.actions[0]
    raised = _top("ValueError: No model architectures are specified")
    assert raised.title == "vLLM refused: No model architectures are specified"


def test_the_third_reviews_cases_pytest_in_vllms_file_a_launcher_warning_and_a_comma_put_back():
    # pytest's location names vLLM's own file: the check stays vLLM's
    located = parse_lines(
        [
            "vllm/lora/ops/triton_ops/lora_expand_op.py:212: in _lora_expand",
            "    assert token_lora_mapping.size(0) == M",
            "E   AssertionError",
        ]
    ).events
    assert any(e.catalog and e.catalog.kind == "check" for e in located)
    # words vLLM only ever raises, logged at warning by a launcher, stay a refusal
    launcher = _top(
        "WARNING 05-01 12:00:00 [launcher.py:50] Engine start attempt 1 failed: use_inductor_graph_partition is only "
        "supported with torch>=2.9.0.dev. Set use_inductor_graph_partition=False instead."
    )
    assert launcher.title.startswith("vLLM refused: use_inductor_graph_partition is only supported")
    # eugr/spark-vllm-docker#343's whole line, the space after vLLM's glued comma put back
    mtp = _top(
        "WARNING [speculative.py:940] Enabling num_speculative_tokens > 1 will run multiple times of forward on same "
        "MTP layer, which may result in lower acceptance rate"
    )
    assert mtp.rule == "VC-1" and "spec_decode_num_accepted_tokens_per_pos_total" in mtp.actions[0]


def test_uva_refused_under_wsl_names_the_variable_that_turns_pinned_memory_on_even_inside_a_sentence():
    # syv-ai/qwen38-27b-rtx3090 PR #77, verbatim: the error quoted as inline code in a docs sentence; the fix, checked
    # by its maintainer against vLLM 0.28's source, is VLLM_WSL2_ENABLE_PIN_MEMORY=1
    line = (
        "New Windows users can otherwise hit `RuntimeError: UVA is not available` during DFlash2 startup or "
        "host-memory/DrvFs failures during preparation. The template contains no secrets; `.env` remains gitignored."
    )
    for text in (line, "RuntimeError: UVA is not available"):
        top = _top(text)
        assert top.rule == "VC-1" and top.title == "vLLM refused: UVA is not available", text
        assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("VLLM_WSL2_ENABLE_PIN_MEMORY", "1", "env")]
        assert "VLLM_USE_V2_MODEL_RUNNER=0" in top.actions[0]
    # a short message inside other words still needs a start and an end of its own
    assert message_catalog().match("we saw UVA is not available yesterday") == []


def test_a_transcription_format_this_vllm_does_not_produce_names_the_formats_and_the_release_that_added_more():
    # BerriAI/litellm#14944 (fixed by LiteLLM's PR #15010, which stopped sending verbose_json), the error body as its
    # reporter pasted it
    top = _top(
        '`{"error":{"message":"litellm.BadRequestError: Hosted_vllmException - Currently only support '
        "response_format `text` or `json`. Received Model Group=openai/whisper-large-v3\\nAvailable Model Group "
        'Fallbacks=None LiteLLM Retried: 1 times, LiteLLM Max Retries: 2","type":"None","param":"None","code":"500"}}`'
    )
    assert top.rule == "VC-1" and "response_format" in top.title
    assert "PR #15010" in top.actions[0] and "0.12 added verbose_json" in top.actions[0]


def test_a_video_opencv_cannot_fully_decode_is_re_encoded_or_served_by_a_release_that_skips_its_broken_frames():
    # vllm PR #25881, verbatim (0.9-0.11's words), and 0.8.3's wordless check of the same count (vllm#17775)
    for line in (
        "AssertionError: Expected reading 32 frames, but only loaded 31 frames from video.",
        "AssertionError: assert i == num_frames",
    ):
        top = _top(line)
        assert top.rule == "VC-1" and "multimodal/video.py" in top.title, line
        assert "ffmpeg" in top.actions[0] and "0.12 or later" in top.actions[0]


def test_an_assert_on_the_users_settings_with_a_known_fix_is_a_refusal_with_the_value():
    # vllm PR #36734 (for vllm#36697), verbatim with the backticks its author quoted it in: a hybrid Qwen3.5 model with
    # prefix caching; the PR's fix: --max-num-batched-tokens at least the block size
    line = (
        "``` Assertion failed, In Mamba cache align mode, block_size (2096) must be <= max_num_batched_tokens (2048). "
        "[type=assertion_error, input_value=ArgsKwargs((), {'model_co...transfer_config': None}), "
        "input_type=ArgsKwargs]```"
    )
    top = _top(line)
    assert top.rule == "VC-1" and top.title.startswith("vLLM refused: In Mamba cache align mode")
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--max-num-batched-tokens", "2048", "2096")
    assert [(a.flag, a.proposed) for a in top.alternatives] == [("--enable-prefix-caching", "false")]
    assert not any("found a state it assumes impossible" in action for action in top.actions)


def test_a_video_whose_broken_frames_were_skipped_is_a_note_about_the_video():
    # vllm PR #29001, verbatim: from 0.12 a frame OpenCV cannot read is skipped with this warning instead of an assert
    line = (
        "(APIServer pid=1135632) WARNING 11-19 15:28:19 [video.py:109] Video loading completed with 1 "
        "broken/unreadable frames. Expected 26 frames but only loaded 25 frames."
    )
    top = _top(line)
    assert top.rule == "VC-1" and top.severity == Severity.LOW and top.title.startswith("vLLM warned: Video loading")
    assert top.actions[0].startswith("Re-encode the video") and "upgrade" not in top.actions[0]
