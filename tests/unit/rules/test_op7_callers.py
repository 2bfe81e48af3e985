"""OP-7.26: a package built on vLLM passes it an argument the installed vLLM does not take."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_callers
from rules.facts import Facts

SITE = "/usr/local/lib/python3.10/dist-packages"


def _traceback(keyword: str) -> list[str]:
    """huggingface/trl#3304's shape: TRL's vllm-serve builds vLLM's LLM, which passes the keyword to EngineArgs."""
    return [
        "Traceback (most recent call last):",
        f'  File "{SITE}/trl/scripts/vllm_serve.py", line 238, in main',
        "    llm = LLM(",
        f'  File "{SITE}/vllm/entrypoints/llm.py", line 212, in __init__',
        "    engine_args = EngineArgs(",
        f"TypeError: EngineArgs.__init__() got an unexpected keyword argument '{keyword}'",
    ]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_an_argument_a_later_vllm_added_names_the_first_release_that_takes_it_and_the_callers_extra():
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(_traceback("worker_extension_cls")))
    assert finding.title.startswith("trl passes vLLM an argument the installed vLLM version does not take")
    assert "vLLM 0.8 takes it (--worker-extension-cls)" in finding.summary  # EngineArgs has it from 0.8
    assert "`pip install 'trl[vllm]'`" in finding.actions[0]


def test_an_argument_vllm_removed_is_taken_out_or_an_older_vllm_installed():
    """OpenRLHF/OpenRLHF#702: paths the reporter shortened to each package's tree, against vLLM 0.7."""
    lines = [
        ' File "openrlhf/trainer/ray/vllm_engine.py", line 58, in __init__',
        " self.llm = vllm.LLM(*args, **kwargs)",
        ' File "vllm/entrypoints/llm.py", line 210, in __init__',
        " engine_args = EngineArgs(",
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_use_ray'",
    ]
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(lines))
    assert finding.title.startswith("openrlhf passes vLLM an argument")
    assert "vLLM 0.4–0.6 took it (--worker-use-ray)" in finding.summary
    [change] = finding.changes
    assert (change.flag, change.proposed) == ("--worker-use-ray", "") and change.removes
    assert finding.actions[1] == "Or install a vLLM from 0.4–0.6, which took it."


def test_an_argument_no_released_vllm_took_points_at_a_patched_build_even_from_a_bare_line():
    """PeterGriffinJin/Search-R1#33: code written for verl's patched vLLM, pasted as the error line alone."""
    line = "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'model_hf_config'"
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([line]))
    assert finding.title.startswith("the code that builds vLLM's engine passes vLLM an argument")
    assert "No released vLLM from 0.4–0.34 takes it" in finding.summary and "patched vLLM build" in finding.summary


def test_a_server_flag_passed_to_the_engine_is_named_as_the_command_lines_not_as_a_patched_build():
    """xorbitsai/inference#4196, verbatim: Xinference passed a launch form's `tool-call-parser` to AsyncEngineArgs;
    its own error line wraps Python's words, with no exception class."""
    line = (
        "添加参数会显示Server error: 500 - [address=0.0.0.0:46149, pid=156] AsyncEngineArgs.__init__() got an "
        "unexpected keyword argument 'tool-call-parser'"
    )
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([line]))
    assert "--tool-call-parser, a flag of vLLM's command line that no EngineArgs takes" in finding.title
    assert "no released EngineArgs (0.4–0.34) has a field tool_call_parser" in finding.summary
    assert finding.actions[0].startswith("Pass --tool-call-parser on the server's command line")
    underscored = "TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument 'tool_call_parser'"
    [same] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([underscored]))
    assert "--tool-call-parser, a flag of vLLM's command line" in same.title


def test_an_engine_argument_in_the_command_lines_spelling_is_written_with_underscores():
    line = "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'max-model-len'"
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([line]))
    assert "a command line's spelling of the engine argument max_model_len" in finding.title
    assert finding.actions == [
        "Write it max_model_len where the engine's keyword arguments are built (or pass --max-model-len on a command "
        "line)."
    ]


def _sampling_traceback(keyword: str, function: str = "SamplingParams") -> list[str]:
    return [
        "Traceback (most recent call last):",
        f'  File "{SITE}/trl/scripts/grpo.py", line 12, in main',
        f"    params = {function}(",
        f'  File "{SITE}/vllm/sampling_params.py", line 30, in __init__',
        "    super().__init__(",
        f"TypeError: {function}.__init__() got an unexpected keyword argument '{keyword}'",
    ]


def test_a_keyword_another_vllm_function_refused_leaves_the_direction_open_for_a_caller():
    # PoolingParams' keywords per release are not in the catalog's table: which side is older is not known
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(_sampling_traceback("normalize_xyz", "PoolingParams")))
    assert "may be newer than trl supports" in finding.summary


def test_a_samplingparams_keyword_no_release_took_is_a_misspelling_or_a_fork_with_its_caller_named():
    # SamplingParams' keywords per release are in the catalog's table (0.4-0.34): none took this one
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(_sampling_traceback("guided_decoding_xyz")))
    assert "No released vLLM from 0.4–0.34 takes it: trl was written for a patched vLLM build" in finding.summary
    assert "(a misspelt keyword, or a fork of vLLM)" in finding.summary


def test_a_keyword_vllm_refused_without_a_caller_or_an_engine_argument_is_not_this():
    lines = [
        f'  File "{SITE}/vllm/sampling_params.py", line 30, in __init__',
        "TypeError: SamplingParams.__init__() got an unexpected keyword argument 'guided_decoding_xyz'",
    ]
    assert not op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(lines))


def test_a_bare_line_naming_a_class_frameworks_construct_is_a_version_mismatch_with_the_direction_open():
    # kserve/kserve#4501: KServe's OpenAI front end against vLLM 0.9, which no longer takes enable_reasoning
    line = "TypeError: OpenAIServingChat.__init__() got an unexpected keyword argument 'enable_reasoning'"
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([line]))
    assert finding.title.startswith("the code that constructs vLLM's OpenAIServingChat passes vLLM an argument")
    assert "--enable-reasoning is not among the flags of the newest vLLM servops knows" in finding.summary
    assert finding.actions[0].startswith("Install the vLLM version the calling code was written for")
    internal = "TypeError: FusedMoEModularKernel.forward() got an unexpected keyword argument 'w1_bias'"
    assert not op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([internal]))  # vLLM calling itself: not a caller's


def test_msgspecs_bare_refusal_of_a_keyword_older_samplingparams_took_is_a_caller_written_for_an_older_vllm():
    """lm-sys/FastChat#3600: FastChat's vLLM worker passed use_beam_search to SamplingParams, which vLLM 0.6.3 took
    out of its msgspec Struct (0.6.0–0.6.2's Struct still had it); the thread's fix was to stop passing it. The line
    names no class: the catalog's table of SamplingParams' keywords per release, read from every patch, says whose
    it is and which releases took it."""
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(
        _facts(["TypeError: Unexpected keyword argument 'use_beam_search'"])
    )
    assert finding.title.startswith("the code that builds vLLM's SamplingParams passes vLLM an argument")
    assert "vLLM 0.4–0.6.2 took it (a SamplingParams keyword)" in finding.summary
    assert finding.changes == []  # a keyword of the Python API, not a flag of any command line
    assert finding.actions[0].startswith("Take use_beam_search out of the keywords the calling code passes to")
    assert finding.actions[1] == "Or install a vLLM from 0.4–0.6.2, which took it."


def test_msgspecs_refusal_of_a_keyword_no_samplingparams_ever_took_is_not_read_as_vllms():
    assert op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(["TypeError: Unexpected keyword argument 'colour'"])) == []


def test_an_old_samplingparams_refusing_a_keyword_a_later_release_added_asks_for_that_release():
    # vLLM 0.4/0.5's SamplingParams was a plain class: Python's words name it. bad_words came in 0.6.4 (0.6.0–0.6.3
    # lack it): the catalog reads every patch, so the upgrade named is one that takes it, not any 0.6
    line = "TypeError: SamplingParams.__init__() got an unexpected keyword argument 'bad_words'"
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([line]))
    assert "builds vLLM's SamplingParams" in finding.title
    assert "vLLM 0.6.4.post1 takes it (a SamplingParams keyword)" in finding.summary
    assert finding.actions == [
        "Upgrade vLLM to 0.6.4.post1 or later, which takes the argument; `pip show vllm` says which is installed."
    ]


def test_msgspecs_refusal_under_the_frame_that_built_samplingparams_names_that_package():
    # FastChat's worker builds SamplingParams itself; msgspec raises from C, so its frame is the deepest one
    lines = [
        "Traceback (most recent call last):",
        f'  File "{SITE}/fastchat/serve/vllm_worker.py", line 128, in generate_stream',
        "    sampling_params = SamplingParams(",
        "TypeError: Unexpected keyword argument 'use_beam_search'",
    ]
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(lines))
    assert finding.title.startswith("fastchat passes vLLM an argument the installed vLLM version does not take")
    assert finding.actions[0].startswith("Take use_beam_search out of the keywords fastchat passes to SamplingParams")


def test_python_39s_classless_constructor_refusal_is_engineargs_when_its_keyword_came_and_went():
    """hiyouga/LlamaFactory#6654's line, verbatim (Python 3.9 names no class): `limit_mm_per_prompt` is an engine
    argument from 0.5.5, so an older vLLM refused it; `worker_use_ray` one that 0.7 dropped. A keyword every release
    took (`gpu_memory_utilization`) or none did was not EngineArgs' refusal."""
    [new] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(
        _facts(["TypeError: __init__() got an unexpected keyword argument 'limit_mm_per_prompt'"])
    )
    assert "(limit_mm_per_prompt)" in new.title and new.actions[0].startswith("Upgrade vLLM to 0.5.5 or later")
    [old] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(
        _facts(["TypeError: __init__() got an unexpected keyword argument 'worker_use_ray'"])
    )
    assert [change.flag for change in old.changes] == ["--worker-use-ray"]
    for keyword in ("gpu_memory_utilization", "foo_bar", "model"):
        line = f"TypeError: __init__() got an unexpected keyword argument '{keyword}'"
        assert op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([line])) == []


def test_a_keyword_a_method_of_vllms_refused_is_the_callers_release_not_a_flag():
    """openai/openai-cookbook PR #2353: its notebook called LLM.generate(prompt_token_ids=…), which newer vLLM removed
    (token ids go in as the prompt); the reporter's sentence quotes the error, verbatim."""
    said = (
        "In new vllm version, 'prompt_token_ids' don't exist in llm.generate. If running example code in code book, "
        "it will raise error: \"LLM.generate() got an unexpected keyword argument 'prompt_token_ids' \""
    )
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts([said]))
    assert finding.title.startswith("the calling code calls vLLM's LLM.generate with prompt_token_ids")
    assert "TokensPrompt(prompt_token_ids=ids)" in finding.actions[0] and "--prompt-token-ids" not in finding.summary
    assert finding.changes == []


def test_vllms_functions_frameworks_call_by_name_are_read_as_a_call_for_another_release():
    # ray-project/ray#52975, verbatim: Ray Serve passed trust_remote_code, which vLLM PR #17805 removed (its reporter
    # named the PR); the refusal quoted as code in a sentence that goes on after it
    ray = (
        "3. it fails with `resolve_chat_template_content_format() got an unexpected keyword argument "
        "'trust_remote_code'` due to https://github.com/vllm-project/vllm/pull/17805 removing the args"
    )
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(Facts(events=parse_lines([ray]).events))
    assert finding.title.startswith("the calling code calls vLLM's resolve_chat_template_content_format with trust")
    assert "vllm/entrypoints/chat_utils.py (to 0.31)" in finding.actions[0]
    # the Spyre plugin's maintainers (torch-spyre/sendnn-inference): upstream changed Pooler.for_embed's signature
    spyre = "`TypeError: Pooler.for_embed() got an unexpected keyword argument 'default_pooling_type'`"
    [plugin] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(Facts(events=parse_lines([spyre]).events))
    assert "Pooler.for_embed with default_pooling_type" in plugin.title
    # a function of nobody's known is not vLLM's
    other = "TypeError: foo() got an unexpected keyword argument 'bar'"
    assert op7_callers.RULE_CALLER_ARGUMENT.evaluate(Facts(events=parse_lines([other]).events)) == []
