"""OP-7.192: tokenizers' DecodeStream failing under vLLM V1's detokenizer, read by its own words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import config, top_finding

# vllm#17448, verbatim (the title): PR #19449 made vLLM 0.9.2 catch it and reset the stream
PREFIX = "Exception: Invalid prefix encountered"
# vllm PR #24159's test log, verbatim: tokenizers 0.22.0's longer words, which 0.9.2's exact match missed
LONGER = (
    "E           Exception: Invalid prefix encountered while decoding stream. Token ID: 237167, Expected prefix: ' ', "
    "Actual string: '���»'"
)
# vllm#26071, verbatim: a negative id reaching DecodeStream, a TypeError with tokenizers 0.22.1 (PR #26445)
STREAM_INPUT = (
    "(APIServer pid=250) ERROR 10-02 09:44:01 [serving_chat.py:1145] TypeError: argument 'id': StreamInput must be "
    "either an integer or a list of integers"
)


def test_an_invalid_prefix_is_the_decode_streams_edge_case_that_0_9_2_catches():
    top = top_finding(PREFIX)
    assert top.rule == "OP-7.192" and "(`Invalid prefix encountered`)" in top.title
    assert top.actions == [
        "Upgrade vLLM to 0.9.2 or later: its detokenizer catches this, resets the decode stream and goes on (PR "
        "#19449, vllm#17448)."
    ]
    assert "the engine is declared dead" in top.summary  # online, not one request (vllm#26071)
    newer = top_finding(PREFIX, config=config(vllm_version="0.10.1"))
    assert newer.actions[0].startswith("This vLLM (0.9.2 or later) catches these words")


def test_tokenizers_0_22s_longer_words_point_at_pr_24159_whatever_the_release():
    top = top_finding(LONGER, config=config(vllm_version="0.10.1"))
    assert top.rule == "OP-7.192" and top.actions[0].startswith("Upgrade vLLM to a release with PR #24159")
    assert "tokenizers<0.22" in top.actions[0]


def test_stream_inputs_type_error_is_a_negative_id_and_the_pin_is_offered_where_it_helps():
    top = top_finding(STREAM_INPUT)
    assert top.rule == "OP-7.192" and "(a negative id)" in top.title
    assert "helps only on vLLM 0.10.2 to 0.11.0" in top.actions[0] and not top.changes
    pinned = top_finding(STREAM_INPUT, config=config(vllm_version="0.11.0"))
    assert "install the tokenizers before 0.22.1" in pinned.actions[0]


def test_the_words_inside_a_repr_or_a_sentence_are_still_the_decode_stream():
    for line in (
        "Exception('Invalid prefix encountered')",
        "Exception: Invalid prefix encountered.",
        "Error in output handler: Invalid prefix encountered, aborting",
    ):
        assert top_finding(line).rule == "OP-7.192", line


def test_other_words_with_invalid_prefix_are_not_the_decode_stream():
    line = "ValueError: Invalid prefix encountered in CIDR 10.0.0.0/33"
    assert not parse_lines([line]).of_kind(LogEventKind.DECODE_STREAM_FAILED)


def test_inside_the_output_handlers_traceback_the_decode_stream_leads_the_engines_death():
    # vllm#26071's shape: AsyncLLM's output handler failed on the TypeError, and the server's engine was dead after it
    lines = [
        "(APIServer pid=250) ERROR 10-02 09:44:01 [async_llm.py:480] AsyncLLM output_handler failed.",
        "(APIServer pid=250) ERROR 10-02 09:44:01 [async_llm.py:480] Traceback (most recent call last):",
        '(APIServer pid=250) ERROR 10-02 09:44:01 [async_llm.py:480]   File "/usr/local/lib/python3.12/dist-packages/'
        'vllm/v1/engine/detokenizer.py", line 235, in _protected_step',
        "(APIServer pid=250) ERROR 10-02 09:44:01 [async_llm.py:480]     token = self.stream.step(self.tokenizer, "
        "next_token_id)",
        STREAM_INPUT.replace("[serving_chat.py:1145]", "[async_llm.py:480]"),
        "(APIServer pid=250) ERROR 10-02 09:44:01 [serving_chat.py:1145] vllm.v1.engine.exceptions.EngineDeadError: "
        "EngineCore encountered an issue. See stack trace (above) for the root cause.",
    ]
    top = top_finding(*lines)
    assert top.rule == "OP-7.192" and top.severity.value == "critical"
