"""OP-7.6 to OP-7.8: packages around vLLM at versions it was not built or written for, read from their words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_own_calls, op7_packages
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import config, top_finding


def _facts(text: str) -> Facts:
    return Facts(events=parse_lines(text.strip("\n").splitlines()).events)


def test_an_undefined_torch_symbol_in_vllms_extension_is_a_vllm_built_for_another_torch():
    # vllm#2680: an old vLLM beside a newer torch; the reporter upgraded vLLM
    facts = _facts(
        "cache_ops.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops15to_dtype_layout4callERKNS_6TensorE"
    )
    [finding] = op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(facts)
    assert finding.title.startswith("vLLM's compiled extension (cache_ops.cpython-38-x86_64-linux-gnu.so)")
    assert "another PyTorch" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM")


def test_vllms_extension_cut_after_its_path_is_read_as_the_usual_mismatch_and_says_the_reason_is_missing():
    # mudler/LocalAI PR #9950, verbatim: the line ends at the path; the PR found a wheel built against torch 2.10
    # installed beside torch 2.11
    line = "ImportError: /backends/cuda13-nvidia-l4t-arm64-vllm/venv/lib/python3.12/site-packages/vllm/_C.abi3.so:"
    [finding] = op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(_facts(line))
    assert finding.title.startswith("vLLM's compiled extension (_C.abi3.so) could not be loaded (the text ends at its")
    assert "another PyTorch" in finding.title and finding.confidence < op7_packages.CONFIDENCE
    # another library named first is what the loader could not find, not this reading
    assert op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(_facts("ImportError: libcudart.so.12:")) == []


def test_an_nvjitlink_symbol_in_a_pip_cuda_library_is_an_older_nvjitlink_found_first_not_a_torch_to_reinstall():
    # zai-org/GLM-4#686, verbatim (its backtick kept): fixed by putting pip's nvjitlink lib first on LD_LIBRARY_PATH
    line = (
        "`ImportError: /home/paibo/anaconda3/envs/neptune/lib/python3.12/site-packages/torch/lib/../../nvidia/cusparse/"
        "lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12"
    )
    [finding] = op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(_facts(line))
    assert "needs the nvJitLink of CUDA 12.4" in finding.title and "older libnvJitLink.so.12 first" in finding.title
    assert "nvidia.nvjitlink" in finding.actions[0] and not any("reinstall torch" in a for a in finding.actions)


def test_another_packages_library_is_named_as_its_own():
    facts = _facts(
        "ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi"
    )
    [finding] = op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(facts)
    assert "the compiled library flash_attn_2_cuda" in finding.title
    assert "flash_attn_2_cuda" in finding.actions[0]


def test_a_library_under_its_package_folder_names_the_package_to_upgrade():
    # llm-d#325: LMCache built from source in the image; its PyPI wheel (0.3.7) loaded
    facts = _facts(
        "ImportError: /opt/vllm/lib64/python3.12/site-packages/lmcache/c_ops.cpython-312-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs"
    )
    [finding] = op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(facts)
    assert finding.title.startswith("lmcache's compiled extension (c_ops.cpython-312-x86_64-linux-gnu.so)")
    assert "`pip install --upgrade lmcache`" in finding.actions[0]
    own = _facts("/x/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi")
    [vllm] = op7_packages.RULE_UNDEFINED_SYMBOL.evaluate(own)
    assert vllm.title.startswith("vLLM's compiled extension (_C.abi3.so)")


def test_a_model_type_transformers_lacks_is_read_even_retyped():
    # vllm-ascend#8409, as the reporter retyped it (typos theirs)
    facts = _facts(
        "报错：value error, the checkoutpoint you are trying to load has model type `qwen3_5_moe`  but Transformers "
        "does not recognize this architecture .  this could be because of an issue with the checkoutpoint, or "
        "because your verison of Transformers is out of date."
    )
    [finding] = op7_packages.RULE_MODEL_TYPE.evaluate(facts)
    assert "model type qwen3_5_moe" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM")


def test_older_transformers_bare_key_error_in_its_model_type_mapping_reads_the_same():
    # vllm#4315, as pasted: transformers' AutoConfig before it named the model type (transformers PR #27976)
    auto = "/usr/local/lib/python3.10/dist-packages/transformers/models/auto/configuration_auto.py"
    facts = _facts(
        "\n".join(
            [
                "Traceback (most recent call last):",
                f'  File "{auto}", line 1155, in from_pretrained',
                '    config_class = CONFIG_MAPPING[config_dict["model_type"]]',
                f'  File "{auto}", line 852, in __getitem__',
                "    raise KeyError(key)",
                "KeyError: 'dbrx'",
            ]
        )
    )
    [finding] = op7_packages.RULE_MODEL_TYPE.evaluate(facts)
    assert finding.title.startswith("the installed transformers does not know model type dbrx")


def test_a_key_error_raised_elsewhere_is_not_a_model_type():
    facts = _facts(
        """
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/models/llama.py", line 400, in load_weights
    param = params_dict[name]
KeyError: 'dbrx'
"""
    )
    assert op7_packages.RULE_MODEL_TYPE.evaluate(facts) == []


def test_a_changed_signature_names_the_package_the_call_went_into():
    # vllm#16339: llguidance older than vLLM's requirement; 0.7.11 fixed it
    facts = _facts(
        """
File "/venv/vllm/v1/structured_output/backend_guidance.py", line 161, in validate_guidance_grammar
    err = llguidance.LLMatcher.validate_grammar(guidance_grm,
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
TypeError: LLMatcher.validate_grammar() got some positional-only arguments passed as keyword arguments: 'tokenizer'
"""
    )
    [event] = facts.events_of(K.UNPLACED_ERROR)
    assert event.code == "err = llguidance.LLMatcher.validate_grammar(guidance_grm,"
    [finding] = op7_packages.RULE_API_MISMATCH.evaluate(facts)
    assert finding.title.startswith("vLLM calls llguidance with an API the installed llguidance version does not")


def test_an_import_names_its_package_and_vllms_own_calls_are_left_to_op7_65():
    for text, package in (
        (
            "ImportError: cannot import name 'ProcessorMixin' from 'transformers.processing_utils' (x.py)",
            "transformers",
        ),
        ("ImportError: cannot import name 'TokenizerInfo' from 'xgrammar' (/venv/xgrammar/__init__.py)", "xgrammar"),
    ):
        [finding] = op7_packages.RULE_API_MISMATCH.evaluate(_facts(text))
        assert f"vLLM calls {package}" in finding.title
    own = _facts(
        """
File "/x/vllm/v1/engine/core.py", line 10, in step
    out = self.model_executor.execute_model(scheduler_output, 3)
TypeError: execute_model() takes 2 positional arguments but 3 were given
"""
    )
    assert op7_packages.RULE_API_MISMATCH.evaluate(own) == []
    assert [f.rule for f in op7_own_calls.RULE_OWN_CALL.evaluate(own)] == ["OP-7.65"]


def test_a_frame_in_the_transformers_backend_means_this_vllm_lacks_the_architecture():
    # QwenLM/Qwen3-VL#1493: 0.10.2 built Qwen3-VL-235B through models/transformers.py; 0.11.0 served it
    frame = (
        "(Worker_TP3_EP3 pid=35672) ERROR 09-25 10:53:36 [multiproc_executor.py:585]   File "
        '"/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/transformers.py", line 792, in __init__'
    )
    [finding] = op7_packages.RULE_TRANSFORMERS_BACKEND.evaluate(_facts(frame))
    assert "no implementation of its architecture" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM")
    assert op7_packages.RULE_TRANSFORMERS_BACKEND.evaluate(
        _facts("INFO 01-01 00:00:00 [base.py:123] Using Transformers modeling backend.")
    )
    asked = _facts(frame)
    asked.config = config(flags={"--model-impl": "transformers"})
    assert op7_packages.RULE_TRANSFORMERS_BACKEND.evaluate(asked) == []


def test_output_that_only_closes_its_reasoning_means_the_template_opened_it():
    # vllm#12999 (0.7.2, DeepSeek-R1-Distill-Qwen-32B): the model's answer to "hello", as pasted
    output = _facts(
        """
Alright, the user just said "hello." That's a friendly greeting. I should respond in a warm and welcoming manner.
</think>

Hello! How can I assist you today?
"""
    )
    [finding] = op7_packages.RULE_REASONING_OPEN.evaluate(output)
    assert "</think> without <think>" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM to 0.7.3 or later")
    whole = _facts("<think>\nThe user greets me.\n</think>\nHello!")
    assert op7_packages.RULE_REASONING_OPEN.evaluate(whole) == []
    # a prompt logged by vLLM that ends with the template's <think> is vLLM's line, not the output
    logged = _facts(
        "INFO 02-10 10:00:00 logger.py:37] Received request chat-1: prompt: '<｜User｜>hi<｜Assistant｜><think>\\n'"
    )
    assert op7_packages.RULE_REASONING_OPEN.evaluate(logged) == []


def test_cuda_error_803_puts_the_host_drivers_library_first():
    # gpustack/gpustack#4678: the vLLM 0.15 image's compat libraries under the NVIDIA runtime, driver 580
    facts = _facts(
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / "
        "cuda driver combination"
    )
    [finding] = op7_packages.RULE_DRIVER_MISMATCH.evaluate(facts)
    assert [(c.flag, c.kind) for c in finding.changes] == [("LD_LIBRARY_PATH", "env")]
    assert "mismatch" in finding.title


def test_a_package_between_vllm_and_the_one_it_calls_is_named_as_the_caller():
    # HabanaAI/vllm-fork#2040: Intel Neural Compressor importing a transformers name removed in 4.56
    lines = [
        '  File "/usr/lib/python3/dist-packages/neural_compressor/torch/utils/utility.py", line 41, in <module>',
        "    SUPPORTED_LAYERS = [nn.Linear, transformers.modeling_utils.Conv1D]",
        "AttributeError: module 'transformers.modeling_utils' has no attribute 'Conv1D'",
    ]
    [top] = op7_packages.RULE_API_MISMATCH.evaluate(Facts(events=parse_lines(lines).events))
    assert top.title.startswith("neural_compressor calls transformers with an API")
    assert "Install a transformers version neural_compressor supports" in top.actions[0]


def test_an_exception_class_of_transformers_own_is_an_api_mismatch_with_transformers():
    # vllm#51744: vLLM 0.27.0 reading Gemma 4's head_dim globally under transformers 5.15.0
    lines = [
        "transformers.integrations.heterogeneity.configuration_utils.AmbiguousGlobalPerLayerAttributeError:",
        "'head_dim' is a per-layer attribute and may vary across layers.",
    ]
    [top] = op7_packages.RULE_API_MISMATCH.evaluate(Facts(events=parse_lines(lines).events))
    assert top.title == (
        "vLLM calls transformers with an API the installed transformers version does not have "
        "(AmbiguousGlobalPerLayerAttributeError)"
    )


def test_a_config_name_transformers_took_is_a_transformers_newer_than_the_vllm_release():
    # EuroEval#1117 (vLLM 0.9.2 beside transformers 4.54.1), the line every vLLM command ended with
    facts = _facts("ValueError: 'aimv2' is already used by a Transformers config, pick another name.")
    [finding] = op7_packages.RULE_NAME_TAKEN.evaluate(facts)
    assert finding.title.startswith("the installed transformers now defines aimv2 itself")
    assert "0.10.0" in finding.actions[0] and "pip show vllm" in finding.actions[0]


def test_a_tokenizer_json_with_merges_the_installed_tokenizers_cannot_read_asks_for_tokenizers_0_20():
    """The serde error transformers passes on from TokenizerFast.from_file, as the allenai/open-instruct#738 report
    quotes it: the model section (its merges) of a file saved by tokenizers 0.20 or later."""
    paste = [
        '  File "/usr/lib/python3.10/site-packages/transformers/tokenization_utils_fast.py", line 111, in __init__',
        "    fast_tokenizer = TokenizerFast.from_file(fast_tokenizer_file)",
        "Exception: data did not match any variant of untagged enum ModelWrapper at line 1251012 column 3",
    ]
    events = parse_lines(paste).events
    assert [e.component for e in events if e.kind == K.TOKENIZER_FILE_UNREADABLE] == ["ModelWrapper"]
    [finding] = op7_packages.RULE_TOKENIZER_FILE.evaluate(Facts(events=events))
    assert finding.title == (
        "the model's tokenizer.json was saved by a newer tokenizers than the one installed: its vocabulary and merges "
        "(the model section) does not parse (tokenizers 0.20 changed how a BPE model's merges are written)"
    )
    assert "tokenizers>=0.20" in finding.actions[0] and not finding.changes  # a package, never a vLLM flag


def test_another_section_of_the_tokenizer_json_is_named_without_the_merges_story():
    events = parse_lines(
        ["data did not match any variant of untagged enum PyPreTokenizerTypeWrapper at line 40 column 3"]
    )
    [finding] = op7_packages.RULE_TOKENIZER_FILE.evaluate(Facts(events=events.events))
    assert "its pre-tokenizer does not parse" in finding.title and "0.20" not in finding.title
    assert finding.confidence < 0.85


def test_the_tokenizer_attribute_transformers_5_removed_is_a_transformers_version_mismatch():
    # QwenLM/Qwen3-VL#2058, verbatim: transformers 5.3.0 removed it (4.57.6 fixed it)
    removed = (
        "(APIServer pid=75487) AttributeError: Qwen2Tokenizer has no attribute all_special_tokens_extended. Did you "
        "mean: 'num_special_tokens_to_add'?"
    )
    [finding] = op7_packages.RULE_API_MISMATCH.evaluate(_facts(removed))
    assert "calls transformers with an API" in finding.title and "transformers<5" in finding.actions[0]
    # a model family's own attribute is no transformers version: the original Qwen tokenizer's im_start_id on a
    # Qwen1.5 model (owenliang/qwen-vllm#8, confirmed there), a remote tokenizer without vocab (zai-org/GLM-4#579)
    for own in (
        "AttributeError: 'Qwen2TokenizerFast' object has no attribute 'im_start_id'",
        "AttributeError: 'CachedChatGLM4Tokenizer' object has no attribute 'vocab'",
    ):
        assert op7_packages.RULE_API_MISMATCH.evaluate(_facts(own)) == [], own


def test_a_processor_without_the_transformers_backends_token_count_is_an_architecture_this_vllm_lacks():
    # vllm#27198, verbatim: Llama 3.2 Vision on 0.11.0, which had dropped Mllama (its registry: until 0.10.2)
    line = "AttributeError: 'MllamaProcessor' object has no attribute '_get_num_multimodal_tokens'"
    [finding] = op7_packages.RULE_TRANSFORMERS_BACKEND.evaluate(_facts(line))
    assert finding.severity.value == "critical" and "MllamaProcessor._get_num_multimodal_tokens" in finding.title
    assert "0.10.2" in finding.actions[0]
    assert op7_packages.RULE_API_MISMATCH.evaluate(_facts(line)) == []


def test_a_model_type_line_cut_after_the_type_is_still_transformers_not_knowing_it():
    # timothystewart6/vllm-gb10#97, verbatim: the ValidationError's line wrapped after the model type; the image pinned
    # transformers 5.8.1, older than gemma4_unified
    facts = _facts("  Value error, The checkpoint you are trying to load has model type `gemma4_unified`")
    [finding] = op7_packages.RULE_MODEL_TYPE.evaluate(facts)
    assert "model type gemma4_unified" in finding.title


def test_a_framework_that_runs_vllm_named_in_an_import_error_is_its_release_or_integration_not_vllm_calling_it():
    # modelscope/ms-swift#4248, verbatim: an outdated trl lacked what ms-swift imports (`pip install -U trl` fixed it);
    # vllm#9401, verbatim: ms-swift's vLLM engine gone after an upgrade to vLLM 0.6.3
    top = top_finding("AttributeError: module 'trl.scripts.vllm_serve' has no attribute 'WeightSyncWorkerExtension'")
    assert top.rule == "OP-7.8" and top.title.startswith("the installed trl has no WeightSyncWorkerExtension")
    swift = top_finding("ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'")
    assert "swift's vLLM integration did not import" in swift.title
    assert any("pip show ms-swift" in action for action in swift.actions)


def test_a_structured_output_librarys_class_names_its_package_without_the_calling_line():
    # guidance-ai/llguidance#160, verbatim: the same refusal pasted alone (llguidance 0.7.11 resolves it)
    facts = _facts(
        "TypeError: LLMatcher.validate_grammar() got some positional-only arguments passed as keyword arguments: "
        "'tokenizer'"
    )
    [finding] = op7_packages.RULE_API_MISMATCH.evaluate(facts)
    assert "llguidance" in finding.title
    # a class no table names stays unread: the package is not in the words
    unknown = _facts("TypeError: Foo.bar() got an unexpected keyword argument 'x'")
    assert op7_packages.RULE_API_MISMATCH.evaluate(unknown) == []


def test_a_class_of_xgrammar_names_the_package_when_the_calling_line_names_none():
    # vLLM's xgrammar backend calls through `self.compiler`: the line names no package, Python's words the class
    facts = _facts(
        """
File "/venv/vllm/v1/structured_output/backend_xgrammar.py", line 90, in compile_grammar
    ctx = self.compiler.compile_json_schema(grammar_spec, any_whitespace=not self.disable_any_whitespace)
TypeError: GrammarCompiler.compile_json_schema() got an unexpected keyword argument 'any_whitespace'
"""
    )
    [finding] = op7_packages.RULE_API_MISMATCH.evaluate(facts)
    assert "xgrammar" in finding.title
