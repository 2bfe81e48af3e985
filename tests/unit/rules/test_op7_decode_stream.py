"""OP-7.192: tokenizers' DecodeStream failing under vLLM V1's detokenizer, read by its own words."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding

# vllm#17448, verbatim (the title): PR #19449 made vLLM 0.9.2 catch it and reset the stream
PREFIX = "Exception: Invalid prefix encountered"
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
    newer = top_finding(PREFIX, config=config(vllm_version="0.10.1"))
    assert newer.actions[0].startswith("This vLLM (0.9.2 or later) already catches it")


def test_stream_inputs_type_error_is_an_invalid_id_with_tokenizers_0_22_1():
    top = top_finding(STREAM_INPUT)
    assert top.rule == "OP-7.192" and "cannot take (a negative id)" in top.title
    assert "PR #26445" in top.actions[0] and "tokenizers<0.22.1" in top.actions[0]
    assert not top.changes  # neither is a flag of the launch
