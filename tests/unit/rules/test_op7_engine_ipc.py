"""OP-7.89: a malformed message between vLLM's front end and engine core (NVIDIA-NeMo/RL#2512's and
lsdefine/simple_GRPO#35's lines, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_engine_ipc
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_a_two_byte_request_type_is_two_messages_interleaved():
    top = evaluate(_facts(r"ValueError: b'\x00\x00' is not a valid EngineCoreRequestType")).top
    assert top.rule == "OP-7.89" and "two threads use it at once" in top.title
    assert "NVIDIA-NeMo/RL#2512" in top.actions[0]


def test_messagepack_with_bytes_left_over_is_the_same():
    line = "msgspec.DecodeError: MessagePack data is malformed: trailing characters (byte 13)"
    assert op7_engine_ipc.RULE_ENGINE_IPC.evaluate(_facts(line))
    assert not op7_engine_ipc.RULE_ENGINE_IPC.evaluate(_facts("ValueError: 3 is not a valid Color"))
