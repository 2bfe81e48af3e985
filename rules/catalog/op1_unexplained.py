"""OP-1.9: the engine failed to start and the log shows none of the causes OP-1 names.

Apart from the other OP-1 modules because it is their complement: it fires only when no
startup-failure event that another sub-rule explains (`events.STARTUP_FAILURE_KINDS`) is in the
log, and no message of vLLM's catalog or named exception either (VC-1, VC-2 name those), so the reader
is sent to the traceback instead of a guessed remedy. It is a fallback of the whole failure: any other
finding as severe (a rule that read the cause from the environment, the network, Ray) explains it, and
"no known cause" would contradict it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import ZMQ_CLOSED_SOCKET, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_unexplained(facts: Facts) -> list[Finding]:
    failed = facts.last_event(LogEventKind.ENGINE_CORE_FAILED)
    if failed is None or facts.events_of(*c.STARTUP_CAUSE_KINDS):
        return []
    worker = (failed.message or "").startswith("WorkerProc")
    who = "a GPU worker process" if worker else "the engine"
    printed = (
        "pyzmq's refusal to poll a socket that was closed: vLLM's V0 front end (0.6-0.10) closes its sockets to the "
        "engine process when that process fails to start or exits, and its output loop then raises this once per "
        "pending task, after the engine failed to start"
        if failed.message == ZMQ_CLOSED_SOCKET
        else f"what vLLM prints after {who} failed to start"
    )
    return [
        RULE_UNEXPLAINED.finding(
            Severity.CRITICAL,
            f"engine core failed to start; no known cause in the log: {who} failed, and its cause is not in the text",
            evidence=[c.log_evidence(failed)],
            confidence=0.5,
            summary=f"'{(failed.message or '').strip()}' is {printed}; it carries "
            "no cause, and the text holds none of the causes servops knows. The cause is the first traceback "
            "before it, in the process that failed: each process's lines carry its prefix.",
            actions=[
                "Find the first traceback before this line in the failed process's own lines: `(EngineCore_DP0 "
                "pid=…)` for the engine core, `(VllmWorker rank=N pid=…)` or `(Worker_TP0 pid=…)` for a GPU worker "
                "(`(RayWorkerWrapper …)` under Ray); paste it, from `Traceback (most recent call last):` to its last "
                "line, to `servops triage`.",
                "If no process printed one, a process was killed without a Python error: an exit code or signal "
                "line (`died with exit code -9`, `Killed`), `dmesg | grep -i -E 'oom|killed process'` on the host "
                "or `kubectl describe pod` (OOMKilled) says by whom; host memory while loading weights is the usual "
                "one.",
            ],
        )
    ]


RULE_UNEXPLAINED = Rule(
    code="OP-1.9",
    title="engine failed to start for an unrecognised reason",
    category=Category.STARTUP,
    check=_check_unexplained,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="`Engine core initialization failed` / `EngineCore failed to start.` / `WorkerProc initialization "
        "failed due to an exception in a background process.` (or V0's `ZMQError: Operation not supported` from "
        "its front end's closed sockets) with no other startup-failure event.",
        why="The real cause is in a traceback the collector did not recognise.",
        example="Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
        fix="Read the traceback above that line; re-run triage with the worker logs.",
        limits="Only says that something failed.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)

RULES: list[Rule] = [RULE_UNEXPLAINED]
