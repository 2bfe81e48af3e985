"""OP-7.189: vLLM's engine was created off the process's main thread, where Python refuses a signal handler.

Why a rule of its own: Python lets only the main thread of the main interpreter install a signal handler, and says so
in words that name neither vLLM nor the thread: `ValueError: signal only works in main thread of the main
interpreter`. The early V1 engine's client installed one when it was constructed, so an engine built where a host
program runs its models on another thread failed at construction: Triton Inference Server's Python backend
(vllm#12690: `Failed to initialize Python stub: ValueError: signal only works in main thread …`, with VLLM_USE_V1=1),
and a program creating AsyncLLMEngine.from_engine_args from its own thread (vllm#13806, which did not fail with
VLLM_USE_V1=0). In vLLM 0.32 only the engine core process installs handlers (vllm/v1/engine/core.py, in that process's
own main thread), so the client no longer does.
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

OFF_MAIN_THREAD = re.compile(r"signal only works in main thread(?: of the main interpreter)?")


def _signal_thread_finding(facts: Facts, event: LogEvent, _match: re.Match[str]) -> Finding:
    removed = vllm_defaults.V0_REMOVED_FROM
    last_v0 = f"{removed[0]}.{removed[1] - 1}"
    release = c.vllm_release(facts)
    v0_there = release is None or release < removed  # before 0.8 V1 was opt-in (VLLM_USE_V1=1, vllm#12690's case)
    return RULE_SIGNAL_THREAD.finding(
        Severity.CRITICAL,
        "vLLM's engine was created off the process's main thread, and a signal handler was installed there, which "
        "Python refuses",
        summary="Python lets only the main thread install a signal handler. The early V1 engine's client installed "
        "one when it was built, so a host that runs its model code on another thread (Triton Inference Server's "
        "Python backend, a web framework's worker thread, a thread of your own) fails as the engine is created. "
        "vLLM 0.32's client installs none (only the engine core process does, in its own main thread).",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        changes=[
            ConfigChange(
                flag="VLLM_USE_V1",
                proposed="0",
                reason=f"V0's engine installs no handler in the caller (vllm#13806: the error went away with it); "
                f"vLLM up to {last_v0} carry V0 (before 0.8 it is the default, which VLLM_USE_V1=1 had replaced)",
                cost=f"V0's engine, slower than V1 and gone after {last_v0}: a stopgap",
                kind="env",
            )
        ]
        if v0_there
        else [],
        actions=[
            "Create the engine (LLM, AsyncLLMEngine, AsyncLLM) on the main thread, or upgrade vLLM to a release "
            "whose engine client installs no signal handler (0.32's does not).",
            "Under Triton Inference Server, use a vLLM release its vLLM backend was built for (vllm#12690 met "
            "this in the Python backend with VLLM_USE_V1=1).",
        ],
        confidence=0.75,
    )


RULE_SIGNAL_THREAD = Rule(
    code="OP-7.189",
    title="vLLM's engine was created off the main thread, where Python refuses a signal handler",
    category=Category.STARTUP,
    check=c.on_phrase(OFF_MAIN_THREAD, _signal_thread_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `ValueError: signal only works in main thread of the main interpreter`.",
        why="An engine built inside a host's worker thread fails as it is created, in words that name no vLLM.",
        example='`pb_stub.cc:366] "Failed to initialize Python stub: ValueError: signal only works in main thread '
        "of the main interpreter` (vllm#12690, Triton's Python backend with VLLM_USE_V1=1).",
        fix="The engine created on the main thread; VLLM_USE_V1=0 on releases before 0.11; a release whose client "
        "installs no handler.",
        limits="Reads Python's words only: another library in the same process can raise them too.",
        references=[
            "https://github.com/vllm-project/vllm/issues/12690",
            "https://github.com/vllm-project/vllm/issues/13806",
        ],
    ),
)

RULES: list[Rule] = [RULE_SIGNAL_THREAD]
