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
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_unexplained(facts: Facts) -> list[Finding]:
    failed = facts.last_event(LogEventKind.ENGINE_CORE_FAILED)
    if failed is None or facts.events_of(*c.STARTUP_CAUSE_KINDS):
        return []
    return [
        RULE_UNEXPLAINED.finding(
            Severity.CRITICAL,
            "engine core failed to start; no known cause in the log",
            evidence=[c.log_evidence(failed)],
            confidence=0.5,
            summary="The log says the engine failed to start but shows none of the known causes.",
            actions=["Read the traceback above 'EngineCore failed to start.' in the EngineCore/worker output."],
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
        checks="`Engine core initialization failed` / `EngineCore failed to start.` with no other startup-failure "
        "event.",
        why="The real cause is in a traceback the collector did not recognise.",
        example="Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
        fix="Read the traceback above that line; re-run triage with the worker logs.",
        limits="Only says that something failed.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)

RULES: list[Rule] = [RULE_UNEXPLAINED]
