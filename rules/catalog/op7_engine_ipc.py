"""OP-7.89: a message between vLLM's front end and its engine core arrived malformed (V1's ZMQ sockets).

Why a rule of its own: vLLM's V1 front end (LLM, AsyncLLM) and its engine core process talk over ZeroMQ sockets,
each request a frame holding its type (EngineCoreRequestType: one byte, `b"\\x00"` for ADD, vllm/v1/engine/__init__.py)
and frames of MessagePack (vllm/v1/serial_utils.py). A type of two bytes (`ValueError: b'\\x00\\x00' is not a valid
EngineCoreRequestType`) or MessagePack with bytes left over (`msgspec.DecodeError: MessagePack data is malformed:
trailing characters`) means two messages ran into each other, which ZeroMQ allows only when one socket is used from
two threads at once: its sockets are not thread-safe (ZeroMQ's guide: one thread per socket). Frameworks that drive
vLLM from threads of their own meet it under load: NVIDIA-NeMo/RL#2512's reporter traced `b'\\x00\\x00'` to two
threads writing to the engine core's input socket (an HTTP server and in-flight weight updates, async GRPO);
lsdefine/simple_GRPO#35 hit the MessagePack error after some dozens of training steps. No flag of vLLM's changes it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

MALFORMED = ("is not a valid EngineCoreRequestType", "MessagePack data is malformed")


def _check_engine_ipc(facts: Facts) -> list[Finding]:
    event = c.error_saying(facts, *MALFORMED)
    if event is None:
        return []
    return [
        RULE_ENGINE_IPC.finding(
            Severity.CRITICAL,
            "a message between vLLM's front end and its engine core arrived malformed: two messages ran together on "
            "one ZeroMQ socket, which happens when two threads use it at once",
            summary="vLLM V1's front end and engine core exchange typed frames over ZeroMQ; a type frame of two "
            "bytes, or MessagePack with bytes left over, is two messages interleaved. ZeroMQ sockets are not "
            "thread-safe, so the usual cause is the code driving vLLM calling its engine (LLM, AsyncLLM, "
            "collective_rpc, weight updates) from two threads at once.",
            evidence=[c.log_evidence(event, name="the malformed message", value=event.message)],
            actions=[
                "Find the second thread: a framework that serves HTTP and updates weights (or generates) at the same "
                "time on one engine must serialise those calls (a lock, or one thread that owns the engine); "
                "NVIDIA-NeMo/RL#2512 traced it to exactly that.",
                "With vLLM's own server nothing else calls the engine: then report it to vLLM with the traceback, the "
                "version and the load; a front end and engine core from two vLLM versions is the other suspect "
                '(`python -c "import vllm; print(vllm.__version__, vllm.__file__)"` in both).',
            ],
            confidence=0.65,
        )
    ]


RULE_ENGINE_IPC = Rule(
    code="OP-7.89",
    title="a message between vLLM's front end and its engine core arrived malformed",
    category=Category.RELIABILITY,
    check=_check_engine_ipc,
    needs=("events",),
    page=RulePage(
        checks="`ValueError: b'…' is not a valid EngineCoreRequestType` and `msgspec.DecodeError: MessagePack data is "
        "malformed: …`, alone or in a dead engine's traceback.",
        why="V1's front end and engine core exchange typed MessagePack frames over ZeroMQ, whose sockets are not "
        "thread-safe: two threads sending at once interleave messages.",
        example="`ValueError: b'\\x00\\x00' is not a valid EngineCoreRequestType` in async GRPO with an HTTP server "
        "and in-flight weight updates on one engine (NVIDIA-NeMo/RL#2512).",
        fix="One thread at a time on the engine (a lock in the calling framework); otherwise a report to vLLM.",
        limits="Which code made the second call is the caller's; the line names neither thread.",
        references=[
            "https://github.com/NVIDIA-NeMo/RL/issues/2512",
            "https://github.com/lsdefine/simple_GRPO/issues/35",
            "https://zguide.zeromq.org/docs/chapter2/#Multithreading-with-ZeroMQ",
        ],
    ),
)

RULES: list[Rule] = [RULE_ENGINE_IPC]
