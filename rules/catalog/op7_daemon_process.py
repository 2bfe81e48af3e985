"""OP-7.99: vLLM was started inside a daemon process, which Python forbids to start children.

Why a rule of its own: Python's multiprocessing refuses a daemon process any child (`AssertionError: daemonic
processes are not allowed to have children`, multiprocessing/process.py), and vLLM starts children: its tensor-parallel
workers under the multiprocessing executor, and in V1 its engine core even at one GPU. Whoever builds `LLM(...)` or
starts the server inside a `multiprocessing.Pool` worker, or a framework's actor process that is a daemon, meets it.
The threads agree on the way out: vllm-project/vllm#18308 (0.8.5: `LLM(...)` inside `multiprocessing.Pool()`; the
reporter started a `Process(..., daemon=False)` instead), argilla-io/distilabel#805 (a pool of non-daemon processes
for vLLM with tensor parallelism), xorbitsai/inference#1028 (Xinference's actor with vLLM 0.3.2 across GPUs),
LMCache/LMCache#376 (the same assertion in vLLM's worker processes).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_daemon(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.DAEMON_NO_CHILDREN)
    if not events:
        return []
    return [
        RULE_DAEMON.finding(
            Severity.CRITICAL,
            "vLLM was started inside a daemon process (a multiprocessing.Pool worker, a framework's actor), which "
            "Python forbids to start the worker processes vLLM needs",
            summary="Python's multiprocessing asserts that a process starting a child is no daemon. vLLM starts "
            "its tensor-parallel workers as child processes, and the V1 engine starts its engine core as one even "
            "on one GPU, so building the engine inside a daemon fails before anything loads.",
            evidence=[c.log_evidence(events[0], name="Python's assertion", value=events[0].message)],
            actions=[
                "Start vLLM in a process that is no daemon: `multiprocessing.Process(target=…, daemon=False)` "
                "instead of a `multiprocessing.Pool` worker (vllm#18308), or a pool whose processes are not daemons "
                "(distilabel#805); or run the server as its own program and call it over HTTP.",
                "A framework that starts vLLM in its own worker processes (an actor system, a pipeline library) "
                "has to start them as non-daemons: use its release that does, or its option for an external vLLM "
                "server.",
            ],
            confidence=0.8,
        )
    ]


RULE_DAEMON = Rule(
    code="OP-7.99",
    title="vLLM started inside a daemon process",
    category=Category.CONFIGURATION,
    check=_check_daemon,
    needs=("events",),
    page=RulePage(
        checks="Python's `AssertionError: daemonic processes are not allowed to have children`.",
        why="vLLM starts its workers (and V1 its engine core) as child processes, which a daemon process may not have.",
        example="`LLM(...)` built inside `multiprocessing.Pool()` on vLLM 0.8.5 (vllm#18308).",
        fix="Start vLLM from a non-daemon process (`Process(daemon=False)`), or run the server apart and call it.",
        limits="The assertion does not say which framework made the process a daemon; the traceback above it does.",
        references=[
            "https://github.com/vllm-project/vllm/issues/18308",
            "https://github.com/argilla-io/distilabel/pull/805",
            "https://github.com/xorbitsai/inference/issues/1028",
        ],
    ),
)

RULES: list[Rule] = [RULE_DAEMON]
