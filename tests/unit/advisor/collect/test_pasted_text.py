"""Whatever a person pastes is read: shipper JSON, HTTP error bodies, quoted and wrapped lines, tracebacks."""

from __future__ import annotations

import io
import json

import pytest

from advisor.collect.logs import LogReadError, parse_lines
from advisor.collect.pasted_text import (
    Frame,
    component_of,
    continues,
    exception_in,
    frame_in,
    release_named,
    unwrap,
)
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts

TP_LINE = "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8)."


def test_a_shipper_record_is_read_as_the_line_it_carries():
    record = json.dumps(
        {"log": "INFO 01-01 00:00:00 [x.py:1] Available KV cache memory: 1.5 GiB\n", "stream": "stderr"}
    )
    [event] = parse_lines([record]).events
    assert event.kind == K.AVAILABLE_KV_MEMORY and event.available_kv_gib == 1.5


@pytest.mark.parametrize(
    "line",
    [
        '{"object":"error","message":"The model `m` does not exist.","type":"NotFoundError","param":null,"code":404}',
        "Error code: 404 - {'object': 'error', 'message': 'The model `m` does not exist.', 'type': 'NotFoundError'}",
        '{"error":{"message":"The model `m` does not exist.","type":"NotFoundError","code":404}}',
    ],
    ids=["vllm-json", "openai-client-repr", "openai-nested"],
)
def test_an_http_error_body_is_read_as_its_message(line):
    piece = unwrap(line)
    assert piece.how == "error_body" and piece.text == "The model `m` does not exist." and piece.error_type
    result = parse_lines([line])
    assert result.error_bodies == 1
    [event] = result.events
    assert event.kind == K.VLLM_MESSAGE and event.catalog.template == "The model `{model}` does not exist."


def test_a_body_logged_as_an_escaped_string_in_another_programs_line_is_read_as_its_message():
    # llmariner/llmariner#619, verbatim: a Go service's logr line quoting vLLM's 400, the body's JSON escaped once more
    line = (
        '2025/01/26 05:01:04.180666 completions.go:151: grpc: "level"=0 "msg"="Received an error response" "code"=400 '
        '"status"="400 Bad Request" "body"="{\\"object\\":\\"error\\",\\"message\\":\\"\\\\\\"auto\\\\\\" tool '
        'choice requires --enable-auto-tool-choice and --tool-call-parser to be set\\",'
        '\\"type\\":\\"BadRequestError\\",\\"param\\":null,\\"code\\":400}"'
    )
    piece = unwrap(line)
    assert piece.how == "error_body" and piece.error_type == "BadRequestError"
    assert piece.text == '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def test_one_member_of_a_pretty_printed_body_is_read_as_its_message_with_its_escapes_decoded():
    # runpod-workers/worker-vllm#85: the body's `"message": …` line alone, a schema error's lines joined by `\n`
    line = (
        '"message": "1 validation error for ChatCompletionRequest\\nfunctions\\n  Extra inputs are not permitted '
        '[type=extra_forbidden, input_value=[], input_type=list]",'
    )
    piece = unwrap(line)
    assert piece.how == "error_body" and piece.text.startswith(
        "1 validation error for ChatCompletionRequest\nfunctions\n"
    )
    [event] = parse_lines([line]).events
    assert event.kind == K.REQUEST_SCHEMA_REFUSED and event.request_field == "functions"
    assert event.message == "Extra inputs are not permitted"


def test_exception_lines_are_found_after_any_prefix():
    assert exception_in("[Bug]: " + TP_LINE)[0] == "ValueError"
    assert exception_in("6月 10 16:45:05 host bash[1]: RuntimeError: CUDA error: x") == (
        "RuntimeError",
        "CUDA error: x",
    )
    assert exception_in("vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop is stopped.")[0] == (
        "AsyncEngineDeadError"
    )
    assert exception_in("INFO 01-01 00:00:00 [x.py:1] nothing went wrong") is None


def test_a_wrapped_message_is_joined_but_two_records_of_one_writer_are_not():
    assert continues(
        "▎ ValueError: To serve at least one request with the model's max seq len (196608),", "▎ 23.25 GiB"
    )
    assert not continues(
        "host bash[1]: RuntimeError: CUDA error: an illegal memory access", "host bash[1]: CUDA kernel"
    )
    assert continues("ValueError: a sentence ends here.", "and the message goes on")
    assert not continues("INFO 01-01 00:00:00 [x.py:1] no error here", "next line")
    text = "ValueError: Total number of attention heads (12) must be\ndivisible by tensor parallel size (8).\n"
    [event] = parse_lines(io.StringIO(text)).events
    assert event.kind == K.VLLM_MESSAGE and event.catalog.captured["tensor_parallel_size"] == "8"


def test_a_stats_line_cut_inside_a_word_is_joined_into_the_word_and_a_whole_one_takes_nothing():
    # vllm#1492, as its reporter's paste wrapped it (V0's wording: Pending, then GPU and CPU KV usage)
    cut = (
        "INFO 10-27 20:44:35 llm_engine.py:624] Avg prompt throughput: 642.0 tokens/s, Avg generation throughput: "
        "61.0 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 20 reqs, GPU KV cache u\n"
        "sage: 98.7%, CPU KV cache usage: 0.0%\n"
    )
    [stats] = parse_lines(io.StringIO(cut)).events
    assert (stats.waiting, stats.kv_usage) == (20, 0.987)
    whole = cut.replace("u\nsage", "usage")
    assert not continues(whole.splitlines()[0], "and the next line")


def test_a_stats_line_cut_after_its_throughputs_is_read_and_the_next_sentence_stays_its_own():
    # vllm#2971: the reporter's lines end after the generation throughput; a person's next line is not their rest
    text = (
        "`Avg prompt throughput: 175.5 tokens/s, Avg generation throughput: 15.5 tokens/s,`\nHere's my speed on 0.3.2\n"
    )
    assert not continues(*text.splitlines())
    [stats] = parse_lines(io.StringIO(text)).events
    assert (stats.prompt_throughput_tps, stats.generation_throughput_tps, stats.running, stats.waiting) == (
        175.5,
        15.5,
        None,
        None,
    )


def test_the_release_a_person_names_tags_the_stats_lines_after_it():
    assert [release_named(t) for t in ("on the 0.2.7 release", "vllm==0.10.1.1", "v0.8 is slow")] == [
        "0.2.7",
        "0.10.1.1",
        "0.8",
    ]
    # two releases in one line say which were compared, not which one follows; a bare 0.5 is any number
    assert [release_named(t) for t in ("from 0.2.7 to 0.3.2", "temperature 0.5", "host 10.0.0.1")] == [None] * 3
    text = (
        "on 0.2.7:\nAvg prompt throughput: 1.0 tokens/s, Avg generation throughput: 9.0 tokens/s\n"
        "INFO 02-21 10:00:00 api_server.py:1] vLLM API server version 0.3.2\n"
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s\n"
    )
    assert [e.version for e in parse_lines(io.StringIO(text)).of_kind(K.STATS_LINE)] == ["0.2.7", "0.3.2"]


def test_the_component_is_the_deepest_vllm_frame_else_the_message():
    frames = [
        Frame("/usr/lib/python3/site-packages/vllm/v1/engine/core.py", 1, "step"),
        Frame("/x/vllm/v1/sample/sampler.py", 9, "forward"),
    ]
    assert component_of(frames, "RuntimeError: boom") == "sampler"
    assert component_of([], "NcclError: NCCL_ERROR_SYSTEM_ERROR") == "distributed communication (NCCL)"
    assert component_of([], "ValueError: something") is None
    # vllm#46726, verbatim: DeepGEMM's assert names its own source, not CUDA's
    deepgemm = "RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/attention.hpp:219): Unsupported"
    assert component_of([], deepgemm) == "DeepGEMM kernels"


def test_any_text_is_read_and_says_what_it_recognised():
    result = parse_lines(["hello world", "not a log at all"])
    assert result.events == [] and result.lines_read == 2 and "2 lines" in result.describe()


def test_a_paste_cut_inside_a_traceback_says_the_error_line_is_missing():
    # vllm#17965: the last two lines of a traceback, its EngineDeadError line cut off
    frame = '  File "/x/vllm/v1/engine/core_client.py", line 558, in get_output'
    cut = parse_lines([frame, "    raise self._format_exception(outputs) from None"])
    assert cut.ends_in_traceback and "ends inside a traceback, before its exception line" in cut.describe()
    ended = parse_lines([frame, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue."])
    assert not ended.ends_in_traceback and "ends inside" not in ended.describe()


def test_a_bare_traceback_names_its_root_exception_and_component():
    text = """Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/sample/sampler.py", line 90, in forward
    logits = self.apply_penalties(logits)
RuntimeError: shape mismatch in penalties
"""
    result = parse_lines(io.StringIO(text))
    [event] = result.events
    assert result.tracebacks == 1
    assert event.kind == K.UNPLACED_ERROR and event.exception == "RuntimeError" and event.component == "sampler"
    assert event.message == "RuntimeError: shape mismatch in penalties"


def test_binary_input_is_one_clear_error():
    with pytest.raises(LogReadError, match="NUL bytes"):
        parse_lines(["\x00\x01 binary"], label="--logs dump.bin")


def test_older_engines_death_lines_are_read():
    worker = "ERROR 07-23 22:46:18 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 82 died, exit code: -15"
    [died] = parse_lines([worker]).events
    assert died.kind == K.WORKER_DIED and died.exit_code == -15 and died.level == "ERROR"
    [failed] = parse_lines(["RuntimeError: Engine process failed to start. See stack trace for the root cause."]).events
    assert failed.kind == K.ENGINE_CORE_FAILED


def test_a_json_body_printed_over_lines_and_a_plain_error_string_are_read_as_error_bodies():
    # kserve/kserve#4345: KServe's model server answering for a LoRA adapter it had not registered
    body = ["{", '    "error": "Model with name llama_adapter does not exist."', "}"]
    result = parse_lines(body)
    [event] = result.events
    assert event.message == "HTTP error: Model with name llama_adapter does not exist." and event.line_no == 1
    assert result.error_bodies == 1 and result.lines_read == 3
    pretty = ["{", '  "object": "error",', '  "message": "The model `x` does not exist.",', '  "code": 404', "}"]
    [message] = parse_lines(pretty).events
    assert message.kind == K.VLLM_MESSAGE and message.message == "The model `x` does not exist."
    # a nested object's brace does not end the body: its members after it are still the body's
    nested = ["{", '  "error": {', '    "message": "The model `x` does not exist."', "  },", '  "id": 1', "}"]
    [inner] = parse_lines([*nested, "INFO next"]).events
    assert inner.message == "The model `x` does not exist." and inner.line_no == 1
    # a lone brace that no closing one follows within the limit is read line by line
    assert parse_lines(["{", *["x"] * 50]).lines_read == 51


def test_pythons_own_words_on_an_error_line_name_their_class_not_a_vllm_message():
    # kubeai-project/kubeai#533: V0's engine logs the AttributeError's words alone, then its traceback
    line = "ERROR 05-26 00:17:47 [engine.py:448] 'ColumnParallelLinear' object has no attribute 'input_scale'"
    [event] = parse_lines([line]).events
    assert event.kind == K.UNPLACED_ERROR and event.exception == "AttributeError"
    assert event.message == "AttributeError: 'ColumnParallelLinear' object has no attribute 'input_scale'"
    assert not parse_lines(["INFO 05-26 00:17:47 [x.py:1] 'A' object has no attribute 'b'"]).events  # not an error


def test_a_body_a_client_prints_after_its_error_words_is_read_with_a_reason_holding_quotes():
    # vllm#44000: Claude Code's report of vLLM's 400 on a system message inside `messages`
    body = [
        "API Error: 400 {",
        '  "error": {',
        "    \"message\": \"1 validation error:\\n  {'type': 'literal_error', 'loc': ('body', 'messages', 1, "
        "'role'), 'msg': \\\"Input should be 'user' or 'assistant'\\\", 'input': 'system'}\",",
        '    "code": 400',
        "  }",
        "}",
    ]
    [event] = parse_lines(body).events
    assert event.kind == K.REQUEST_SCHEMA_REFUSED and event.request_field == "messages[1].role"
    assert event.message == "Input should be 'user' or 'assistant'"


def test_a_notebooks_traceback_frames_are_read_with_the_line_of_their_arrow():
    """unslothai/unsloth#2426 as pasted from Colab: IPython 7's frame (a link to the file), its context lines, the
    `-->` line it was in, and Python's words for a submodule of a module that is not a package."""
    lines = [
        "[/usr/local/lib/python3.11/dist-packages/unsloth_zoo/vllm_utils.py](https://localhost:8080/#) in "
        "patch_vllm_lora_tokenizer()",
        "    190 ",
        "--> 191         import vllm.transformers_utils.tokenizer_group.tokenizer_group",
        "    192         vllm.transformers_utils.tokenizer_group.tokenizer_group.get_lora_tokenizer = _return_nothing",
        "",
        "ModuleNotFoundError: No module named 'vllm.transformers_utils.tokenizer_group.tokenizer_group'; "
        "'vllm.transformers_utils.tokenizer_group' is not a package",
    ]
    [event] = parse_lines(lines).events
    assert event.kind == K.UNPLACED_ERROR and event.exception == "ModuleNotFoundError"
    assert event.catalog is None  # Python's words, not vLLM's lazy-import message
    assert event.code_file == "/usr/local/lib/python3.11/dist-packages/unsloth_zoo/vllm_utils.py"
    assert event.function == "patch_vllm_lora_tokenizer"
    assert event.code == "import vllm.transformers_utils.tokenizer_group.tokenizer_group"


def test_ipython_8s_frame_names_its_file_line_and_function():
    line = (
        "File ~/miniconda3/envs/x/lib/python3.11/site-packages/autogen_ext/models/openai/_openai_client.py:962, in "
        "OpenAIChatCompletionClient.__init__(self, **kwargs)"
    )
    path = "~/miniconda3/envs/x/lib/python3.11/site-packages/autogen_ext/models/openai/_openai_client.py"
    assert frame_in(line) == Frame(path, 962, "OpenAIChatCompletionClient.__init__")
    assert frame_in("    at least 3 requests failed in 2 runs") is None


def test_markdown_bold_around_a_line_is_read_through_and_pythons_double_star_is_left():
    """QwenLM/Qwen3-VL#806: the reporter bolded the error line of the log they pasted."""
    piece = unwrap("2025-02-19 **ModuleNotFoundError: No module named 'decord'**")
    assert piece.text == "2025-02-19 ModuleNotFoundError: No module named 'decord'"
    assert unwrap("    return fn(*args, **kwargs)").text == "    return fn(*args, **kwargs)"
    assert unwrap("f(*a, **kw, **extra)").text == "f(*a, **kw, **extra)"


def test_a_whole_line_in_markdowns_inline_code_is_read_through_and_its_inner_spans_are_kept():
    """unslothai/unsloth#1208: the reporter wrapped the error line in backticks; vllm#3329's inner span stays."""
    assert unwrap("`KeyError: 'layers.0.mlp.down_proj.weight'`").text == "KeyError: 'layers.0.mlp.down_proj.weight'"
    inner = "`RuntimeError: Cannot find any model weights with `/models/x``"
    assert unwrap(inner).text == "RuntimeError: Cannot find any model weights with `/models/x`"
    assert unwrap("Set `--limit-mm-per-prompt` to increase this limit.").text.startswith("Set `--limit")
    assert unwrap("```").text == "```"


def test_a_braced_literal_python_cannot_build_is_no_error_body_and_no_crash():
    """vllm-project/vllm-omni#5348: torch prints a tensor's type and shape as `CUDABoolType{[1, 1]}`, which
    ast.literal_eval parses as a set of lists and then cannot build (TypeError: unhashable type)."""
    line = "RuntimeError: expand(CUDABoolType{[1, 1]}, size=[0]): the number of sizes"
    assert (unwrap(line).text, unwrap(line).how) == (line, "line")
    [event] = parse_lines([line]).events
    assert event.exception == "RuntimeError"


def test_an_exception_line_in_markdowns_italics_is_read_through_and_a_names_underscores_are_left():
    """ROCm/vllm#48: the reporter set the error line in italics, `_` on either side."""
    assert unwrap("_ModuleNotFoundError: No module named 'hipbsolidxgemm'_").text == (
        "ModuleNotFoundError: No module named 'hipbsolidxgemm'"
    )
    assert unwrap("_OpNamespace_ has no attribute_").text == "_OpNamespace_ has no attribute_"
    assert unwrap("__init__() got an unexpected keyword argument 'x_'").text.startswith("__init__()")


def test_a_failed_asserts_source_line_pasted_alone_names_the_assertion_error_it_raised():
    """vllm-ascend's sleep mode (the corpus's startup-ascend-sleep-mode-camem-not-compiled): only the `assert` line
    of the traceback was pasted. An assert of a name calls nothing that could raise deeper: it failed."""
    [event] = parse_lines(['[rank12]:     assert camem_available, "camem allocator is not available"']).events
    assert (event.kind, event.message) == (K.UNPLACED_ERROR, "AssertionError: camem allocator is not available")
    assert event.nearest[0].template == "cumem allocator is not available"  # vLLM's own allocator says the same
    # an assert that calls something may have raised deeper, and a source line under a frame is the frame's
    assert not parse_lines(['    assert check(x), "check failed"']).events
    framed = ['  File "/x/vllm/a.py", line 3, in f', '    assert ready, "not ready"', "AssertionError: not ready"]
    assert [e.message for e in parse_lines(framed).events] == ["AssertionError: not ready"]


def test_a_failed_comparison_pasted_alone_without_a_message_keeps_the_comparison_as_its_words():
    """vllm#34094's title is the bare assert (`assert num_cache_lines >= batch`): Python raises AssertionError with no
    words, so the comparison is all there is to read. An assert of a name alone, without a message, is not read.
    A statement vLLM's own code holds is the message catalog's wordless check, placed in its file."""
    [event] = parse_lines(["assert num_cache_lines >= batch"]).events
    assert (event.kind, event.message, event.exception) == (
        K.VLLM_MESSAGE,
        "assert num_cache_lines >= batch",
        "AssertionError",
    )
    assert event.catalog is not None and event.catalog.kind == "check"
    assert event.catalog.file == "vllm/model_executor/layers/mamba/ops/causal_conv1d.py"
    [mine] = parse_lines(["assert my_cache_lines >= batch"]).events
    assert (mine.kind, mine.message) == (K.UNPLACED_ERROR, "AssertionError: assert my_cache_lines >= batch")
    assert [e.kind for e in parse_lines(["assert num_cache_lines >= batch", "AssertionError"]).events] == [
        K.VLLM_MESSAGE
    ]
    assert not parse_lines(["assert ready"]).events
    # the exception line Python prints under it is the same error, not a second one
    [one] = parse_lines(["    assert batch_size == 1", "AssertionError"]).events
    assert one.message == "AssertionError: assert batch_size == 1"
    # one further down is another error
    later = [
        "assert batch_size == 1",
        "INFO 01-01 00:00:00 [a.py:1] starting",
        "ERROR 01-01 00:00:00 [b.py:2] AssertionError",
    ]
    assert [e.message for e in parse_lines(later).events] == [
        "AssertionError: assert batch_size == 1",
        "AssertionError",
    ]


def test_pydantics_value_error_cut_before_its_type_is_read_only_as_pydantic_prints_it():
    """llm-compressor#2805's line (verbatim) is compressed-tensors' validator error, cut before `[type=value_error`;
    a sentence that happens to start the same way is not."""
    [event] = parse_lines(
        ["Value error, Must use group or tensor_group quantization strategy in order to apply"]
    ).events
    assert event.message == "ValueError: Must use group or tensor_group quantization strategy in order to apply"
    assert not parse_lines(["Value error, please retry later"]).events


def test_pydantics_line_for_a_validators_error_is_that_error_in_vllms_configuration():
    """vLLM's config classes are pydantic dataclasses: a ValueError in their checks is printed as pydantic's `Value
    error, <words> [type=value_error, input_value=ArgsKwargs(…)]` (vllm#35967's line, verbatim), read as the
    ValueError it wraps, raised in vLLM's configuration as it starts; the header above it names the class."""
    line = (
        "Value error, invalid literal for int() with base 10: '4.0' [type=value_error, input_value=ArgsKwargs((), "
        "{'model_co...transfer_config': None}), input_type=ArgsKwargs]"
    )
    [event] = parse_lines([line]).events
    assert (event.kind, event.message) == (
        K.UNPLACED_ERROR,
        "ValueError: invalid literal for int() with base 10: '4.0'",
    )
    assert (event.component, event.phase) == ("vLLM's configuration (validated as it starts)", "startup")
    [header] = parse_lines(["pydantic_core._pydantic_core.ValidationError: 2 validation errors for VllmConfig"]).events
    assert (header.exception, header.component) == ("ValidationError", "vLLM's configuration (validated as it starts)")
    # a request's schema is not the configuration
    assert component_of([], "1 validation error for ChatCompletionRequest") is None


def test_pythons_refusal_of_a_calls_arguments_pasted_without_its_class_is_a_typeerror():
    """vllm#3694's title, verbatim: Python's words for a call whose arguments do not fit, which only a TypeError
    carries, were read as nothing at all."""
    [event] = parse_lines(["NeuronExecutor.__init__() takes 7 positional arguments but 8 were given"]).events
    assert event.kind == K.UNPLACED_ERROR and event.exception == "TypeError"
    [missing] = parse_lines(["NeuronWorker.__init__() missing 1 required positional argument: 'cache_config'"]).events
    assert missing.exception == "TypeError"
    assert not parse_lines(["The server takes 7 positional arguments but 8 were given to it"]).events


def test_a_wrapped_errors_escaped_newline_gives_the_wrapped_exception():
    """huggingface/smolagents#1794's line, verbatim: a UI's error holds the TypeError's words after an escaped
    newline; the TypeError is the cause. Without an exception after the last `\\n` the wrapper stays."""
    line = (
        'gradio.exceptions.Error: "Error in interaction: Error in generating model output:\\nLLM.generate() got an '
        "unexpected keyword argument 'guided_options_request'\""
    )
    [event] = parse_lines([line]).events
    assert event.exception == "TypeError"
    assert event.message == "TypeError: LLM.generate() got an unexpected keyword argument 'guided_options_request'"
    [wrapper] = parse_lines(['RuntimeError: "step failed:\\nsee the worker log"']).events
    assert wrapper.exception == "RuntimeError"
    [inner] = parse_lines(['Exception: "request failed:\\nValueError: bad value"']).events
    assert (inner.exception, inner.message) == ("ValueError", "ValueError: bad value")


def test_a_line_typed_in_lower_case_is_read_as_the_exception_and_the_message_it_names():
    # OpenBuddy/OpenBuddy#45, verbatim: vLLM's bfloat16 refusal retyped in lower case
    line = (
        "valueerror: bfloat16 is only supported on gpus with compute capability of at least 8.0. your tesla "
        "v100-sxm2-32gb gpu has compute capability 7.0."
    )
    assert unwrap(line).text.startswith("ValueError: bfloat16")
    [event] = parse_lines([line]).events
    assert event.kind == K.VLLM_MESSAGE and event.catalog is not None


def test_a_cut_body_printed_inside_a_string_literal_is_read_with_its_doubled_escapes_undone():
    # langchain-ai/langgraphjs#1065, verbatim: a JavaScript client's debug print, cut where the thread's text ends
    line = (
        '`\'{"object":"error","message":"\\\\"auto\\\\" tool choice requires --enable-auto-tool-choice and '
        '--tool-call-parser to be set","type":"BadRequestError","pa'
    )
    read = unwrap(line)
    assert read.how == "error_body"
    assert read.text == '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    # a body whose escapes are single stays as it was: its message ends at its own closing quote
    plain = '{"object":"error","message":"a \\\\ path","type":"BadRequestError","pa'
    assert unwrap(plain).text == "a \\ path"


def test_a_miscased_class_and_escaped_quotes_are_read_as_python_and_vllm_wrote_them():
    assert unwrap("permissionError: [error 13] Permission denied: '/.cache'").text.startswith("PermissionError: ")
    escaped = '\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    assert unwrap(escaped).text.startswith('"auto" tool choice')
    body = '{"error": {"message": "a \\"quoted\\" word"}}'  # an error body's JSON keeps its escapes for the parser
    assert unwrap(body).text == 'a "quoted" word'


def test_an_exception_after_a_cjk_sentences_full_width_colon_is_found():
    # OpenBMB/MiniCPM#141, verbatim (an issue title): "vllm inference of quantized weights fails:"
    assert exception_in("[Bug]: vllm 推理量化权重报错：KeyError: 'lm_head.weight'") == ("KeyError", "'lm_head.weight'")


def test_an_exception_glued_to_a_cjk_sentences_last_ideograph_is_found_and_its_class_is_only_ascii():
    # eosphoros-ai/DB-GPT#1600, verbatim (an issue title): "inference with vLLM fails" with no space before the class
    line = "使用VLLM推理报错AttributeError: 'TokenizerGroup' object has no attribute 'eos_token_id'"
    assert exception_in(line) == ("AttributeError", "'TokenizerGroup' object has no attribute 'eos_token_id'")
    assert exception_in("モデル読み込みでValueError: bad value") == ("ValueError", "bad value")
    for lead in ("【求助】", "怎么解决？", "エラー！", "ㅠㅠ", "오류 발생"):
        assert exception_in(f"{lead}ValueError: bad value") == ("ValueError", "bad value"), lead
    assert exception_in("xAttributeError: glued to a Latin letter is a word of its own") is None


def test_msgspecs_keyword_refusal_without_its_class_is_a_type_error():
    # zai-org/GLM-4#663, verbatim (an issue title): "openai_api_server fails on a request:"
    line = "openai_api_server接收请求报错：Unexpected keyword argument 'use_beam_search'"
    assert exception_in(line) == ("TypeError", "Unexpected keyword argument 'use_beam_search'")
    assert exception_in("we saw an unexpected keyword argument here") is None


def test_an_exception_shown_as_its_repr_is_read_as_the_exception():
    # gpustack/gpustack#2193, verbatim ("problem:"); and V0's engine logging an exception's repr (vllm's pasted_errors)
    assert exception_in("问题：AttributeError(\"'Qwen3ForCausalLM' object has no attribute 'pooler'\")") == (
        "AttributeError",
        "'Qwen3ForCausalLM' object has no attribute 'pooler'",
    )
    v0 = "ERROR 12-25 15:08:47 engine.py:135] IndexError('Error in model execution: tuple index out of range')"
    assert exception_in(v0) == ("IndexError", "Error in model execution: tuple index out of range")
    assert exception_in("we called foo('x') here") is None


def test_cs_terminate_on_an_uncaught_exception_names_its_class_and_takes_the_what_line_under_it():
    # vllm-neuron#7, verbatim: the engine core aborted right after the weights were sharded
    alone = evaluate(Facts(events=parse_lines(["terminate called after throwing an instance of 'c10::Error'"]).events))
    assert alone.top.rule == "VC-2" and alone.top.title.startswith("c10::Error (")
    assert alone.top.actions[0].startswith("Copy the line under this one too")
    # with its what() line the message is read as the exception's, and a wording that knows it speaks first
    fault = parse_lines(
        [
            "terminate called after throwing an instance of 'c10::Error'",
            "  what():  CUDA error: an illegal memory access was encountered",
        ]
    )
    assert evaluate(Facts(events=fault.events)).top.rule == "HL-4"
