"""VC-5: an error vLLM logged in catalog words that name nothing to change is named, with where its cause is; and
VC-1's remedies for the logged messages whose consequence is not in their words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts

TOOL_LINE = (
    "(APIServer pid=1) ERROR 12-01 10:14:22 [llama_tool_parser.py:141] Error in extracting tool call from response. "
    "Returning output in content with empty tool calls"
)
HERMES = [
    "(APIServer pid=1) ERROR 12-01 10:14:22 [hermes_tool_parser.py:117] Error in extracting tool call from response.",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/tool_parsers/hermes_tool_parser.py", line 101, in '
    "extract_tool_calls",
    "    raw_function_calls = [json.loads(match[0] if match[0] else match[1]) for match in function_call_tuples]",
    "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 95 (char 94)",
]


def _findings(*lines: str):
    return evaluate(Facts(events=parse_lines(list(lines)).events)).findings


def test_a_tool_parser_error_alone_is_named_with_the_parser_to_check():
    [finding] = _findings(TOOL_LINE)
    assert finding.rule == "VC-5"
    assert finding.title.startswith("vLLM logged an error in its tool-call parser: Error in extracting tool call")
    assert "vllm/tool_parsers/llama_tool_parser.py" in finding.summary  # the file the header names
    assert "traceback printed right under it" in finding.actions[0]
    assert "--tool-call-parser" in finding.actions[1] and "no tool_calls" in finding.actions[1]


def test_the_exception_under_a_logger_exception_line_is_the_failure_named():
    [finding] = _findings(*HERMES)
    assert finding.rule == "VC-5"
    assert finding.title.endswith("(JSONDecodeError: Expecting ',' delimiter: line 1 column 95 (char 94))")
    assert "hermes_tool_parser.py:117" in finding.summary  # one wording, many files: the header's file wins
    assert [e.name for e in finding.evidence] == ["vllm_error", "caught_exception"]
    assert finding.actions[0].startswith("The exception vLLM caught is under the line: JSONDecodeError")
    assert "hermes_tool_parser.py, in extract_tool_calls" in finding.actions[0]


def test_an_error_without_a_component_hint_says_where_its_cause_is():
    [finding] = _findings(
        "(APIServer pid=1) ERROR 12-01 10:14:22 [serving_chat.py:204] Error in preprocessing prompt inputs"
    )
    assert finding.rule == "VC-5"
    assert finding.title == "vLLM logged an error in its API server while serving: Error in preprocessing prompt inputs"
    assert len(finding.actions) == 1 and "grep -A 60 -F 'Error in preprocessing prompt inputs'" in finding.actions[0]


def test_a_cause_beside_it_outranks_it():
    findings = _findings(TOOL_LINE, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert findings and "VC-5" not in [f.rule for f in findings]


def test_the_exception_under_it_read_by_a_rule_of_its_own_answers_even_from_a_lower_severity():
    """A logger.exception line of vLLM 0.6-0.14 with the request's refusal under it: OP-5.12 (low) reads the line
    VC-5 (medium) cites as the exception it caught, so it is the answer, not a second finding under VC-5's."""
    findings = _findings(
        "ERROR 11-02 01:00:00 [serving_completion.py:300] Error in preprocessing prompt inputs",
        "ValueError: This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (100 in "
        "the messages, 2000 in the completion). Please reduce the length of the messages or completion.",
    )
    assert [f.rule for f in findings] == ["OP-5.12"]


def test_failed_kv_loads_propose_the_recompute_policy():
    [finding] = _findings(
        "(EngineCore_DP0 pid=412) ERROR 12-01 10:14:22 [scheduler.py:3760] Failing 2 request(s) due to KV load "
        "failure (failure_policy=fail, 8192 tokens affected). Request IDs: {'cmpl-a1', 'cmpl-b2'}"
    )
    assert finding.rule == "VC-1" and finding.severity.value == "high"
    assert finding.title.startswith("vLLM logged an error: Failing 2 request(s) due to KV load failure")
    [change] = finding.changes
    assert change.flag == "--kv-transfer-config" and '"kv_load_failure_policy": "recompute"' in change.proposed
    assert "the side it loads from" in finding.actions[0]


def test_removed_guided_fields_are_a_high_finding_that_names_structured_outputs():
    [finding] = _findings(
        "(APIServer pid=1) WARNING 12-01 10:14:22 [protocol.py:65] Request contains the removed guided-decoding "
        "field(s) ['guided_json'], which are ignored; output will NOT be constrained. Use `structured_outputs` (or "
        "`response_format`) instead; see docs/features/structured_outputs.md."
    )
    assert finding.rule == "VC-1" and finding.severity.value == "high"
    assert 'guided_json → `{"json": <schema>}`' in finding.actions[0]
    assert "--structured-outputs-config" in finding.actions[0]


def test_an_adapter_reloaded_in_place_warns_of_stale_prefix_cache():
    [finding] = _findings(
        "(APIServer pid=1) WARNING 12-01 10:14:22 [serving.py:218] Reloaded LoRA adapter 'sql' in place from the "
        "same path '/adapters/sql'. Prefix-cache blocks computed with its previous weights are not invalidated; load "
        "changed weights from a new path to avoid reusing them."
    )
    assert finding.rule == "VC-1" and finding.severity.value == "medium"
    assert "POST /reset_prefix_cache" in finding.actions[0]


def test_words_vllm_both_raises_and_logs_are_a_raise_when_the_line_opens_with_the_class():
    """The catalog keeps one entry for `Helion kernel '{op_name}' is disabled: {reason}` (vLLM 0.32 logs it as a
    warning and raises it as a RuntimeError): the line says which happened."""
    words = "Helion kernel 'fused_moe' is disabled: no config for this GPU"
    [raised] = _findings(f"RuntimeError: {words}")
    assert raised.rule == "VC-1" and raised.severity.value == "critical"
    assert _findings(f"(EngineCore_DP0 pid=412) WARNING 12-01 10:14:22 [register.py:290] {words}") == []
    [quoted] = _findings(
        "(APIServer pid=1) ERROR 12-01 10:14:22 [serving_chat.py:204] Error in preprocessing prompt inputs: "
        "ValueError: bad"
    )
    assert quoted.rule == "VC-5"  # a logged sentence quoting an exception is still the logged message


def test_a_warning_whose_words_say_something_failed_is_low_and_advice_is_left_out():
    [finding] = _findings(
        "(EngineCore_DP0 pid=412) WARNING 12-01 10:14:22 [shared_offload_region.py:438] Failed to close mmap_obj"
    )
    assert finding.rule == "VC-5" and finding.severity.value == "low"
    assert finding.title.startswith("vLLM logged a warning that something failed in its KV cache offloading")
    assert [e.name for e in finding.evidence] == ["vllm_warning"]
    advice = "Enforce eager set, disabling torch.compile and CUDAGraphs."
    assert [f.rule for f in _findings(f"(EngineCore_DP0 pid=412) WARNING 12-01 10:14:22 [vllm.py:1772] {advice}")] != [
        "VC-5"
    ]


WORKER = "(Worker_TP0 pid=110162) ERROR 11-17 07:54:19 [multiproc_executor.py:815] "


def test_a_workers_exception_header_alone_says_its_traceback_is_under_it():
    # a worker's line pasted alone once got no finding: vLLM logs it with logger.exception, its cause follows it
    [finding] = _findings(WORKER + "WorkerProc hit an exception.")
    assert finding.rule == "VC-5" and finding.title.endswith(": WorkerProc hit an exception")
    assert "during startup" not in finding.title  # logged while starting and while serving: the line cannot tell
    assert "the traceback printed right under it is the cause" in finding.actions[0]


def test_a_workers_traceback_without_the_engines_death_is_named_by_its_root_exception():
    traceback = [
        WORKER + "WorkerProc hit an exception.",
        WORKER + "Traceback (most recent call last):",
        WORKER + '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 2100, '
        "in execute_model",
        WORKER + "    logits = self.model.compute_logits(sample_hidden_states)",
        WORKER + "RuntimeError: shape '[4, -1]' is invalid for input of size 7",
    ]
    [finding] = _findings(*traceback)
    assert finding.rule == "VC-2"
    assert finding.title == "RuntimeError: shape '[4, -1]' is invalid for input of size 7 (in worker, phase unknown)"
    dead = [
        *traceback,
        "(EngineCore_DP0 pid=9) ERROR 11-17 07:54:19 [core.py:710] EngineCore encountered a fatal error.",
    ]
    assert _findings(*dead)[0].rule == "HL-2"  # beside the engine's death, HL-2 names the worker's exception


def test_pydantics_header_alone_asks_for_the_lines_under_it_not_a_traceback():
    """`1 validation error for ModelConfig` pasted alone (vllm#26161, zai-org/GLM-V#9): the reasons are pydantic's
    lines under it, which carry vLLM's words; vLLM's messages nearest the header's words would mislead."""
    lines = ["pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig"]
    top = evaluate(Facts(events=parse_lines(lines).events)).top
    assert top.rule == "VC-2" and "during startup" in top.title
    assert top.actions == [
        "Copy the lines under this header too: pydantic prints each refusal there, as a field with its problem or as "
        "`Value error, <words> [type=value_error, …]`, whose words are vLLM's reason (its message catalog reads them); "
        "the header only says which of vLLM's config classes refused the arguments it was built from."
    ]


def test_an_unknown_exception_on_a_tool_parsers_log_line_is_named_by_the_parser_and_its_checks():
    # vllm#16797, verbatim: a Docker Compose prefix, the tool parser's logger header, no traceback under it
    line = (
        "qwen2-5-vl-72b-server  | (APIServer pid=1) ERROR 08-28 20:53:08 [hermes_tool_parser.py:148] "
        "json.decoder.JSONDecodeError: Extra data: line 3 column 1 (char 56)"
    )
    [finding] = _findings(line)
    assert finding.rule == "VC-2"
    assert "(in tool-call parser," in finding.title
    assert "--tool-call-parser" in finding.actions[-1] and "stream=true" in finding.actions[-1]


def test_a_warning_that_reports_an_exception_where_it_happened_is_a_failure_vllm_logged():
    # vllm#28950, verbatim: vLLM's KV offloading worker (0.11) catching an assertion in a CPU-to-GPU transfer
    line = (
        "(EngineCore_DP0 pid=143) WARNING 11-18 07:48:24 [worker.py:116] Exception in ('CPU', 'GPU') transfer 235: "
        "AssertionError()"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "VC-5" and "KV cache offloading" in top.title
