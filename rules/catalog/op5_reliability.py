"""OP-5 reliability: requests that never get an answer — aborted, failed or rejected as too long.

OP-5.8 watches the share of finished requests that were aborted or errored (clients timing
out); OP-5.12 counts requests rejected as longer than --max-model-len (docs/reference.md §2.8).
"""

from __future__ import annotations

import math

from rules import signals
from rules.catalog import common as c
from rules.events import LogEventKind as K
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

ABORT_SHARE = 0.05
TOO_LONG_MANY = 5  # this many rejections make it medium severity
MAX_MODEL_LEN_STEP = 1024  # a proposed --max-model-len is the longest rejected request rounded up to this


# --- OP-5.8 many requests aborted or failed ----------------------------------------------------


def _check_aborts(facts: Facts) -> list[Finding]:
    if facts.window is None:
        return []
    by_reason = facts.window.total.by_label("vllm:request_success_total")
    total = sum(by_reason.values())
    failed = by_reason.get("abort", 0.0) + by_reason.get("error", 0.0)
    if total <= 0 or failed / total <= ABORT_SHARE:
        return []
    share = failed / total
    return [
        RULE_ABORTS.finding(
            Severity.MEDIUM,
            f"{share:.0%} of finished requests aborted or failed > {ABORT_SHARE:.0%}",
            evidence=[
                Evidence(
                    source=signals.window_source(facts),
                    name="vllm:request_success_total{abort,error} share",
                    value=round(share, 3),
                    threshold=ABORT_SHARE,
                    comparison=">",
                )
            ],
            confidence=0.7,
            summary="Clients gave up (timeouts, disconnects) or requests errored.",
            actions=["Compare client timeouts with TTFT/e2e p99; check the server log for request errors."],
        )
    ]


RULE_ABORTS = Rule(
    code="OP-5.8",
    title="many requests aborted or failed",
    category=Category.RELIABILITY,
    check=_check_aborts,
    needs=("window",),
    page=RulePage(
        checks="Share of vllm:request_success_total with finished_reason abort or error (0.13+) over the window, "
        f"above {c.percent(ABORT_SHARE)}.",
        why="request_success_total counts aborts (client disconnects) too; a high share means clients time out.",
        example=f"12 % of finished requests aborted > {c.percent(ABORT_SHARE)}.",
        fix="Compare client timeouts with latency; fix the latency cause or raise timeouts.",
        limits="Aborts can be normal for interactive UIs (users pressing stop).",
        references=[c.METRICS_DOCS],
    ),
)


# --- OP-5.12 requests rejected as too long -----------------------------------------------------


def _check_too_long(facts: Facts) -> list[Finding]:
    events = facts.events_of(K.REQUEST_TOO_LONG)
    if not events:
        return []
    limit = max((e.max_model_len or 0) for e in events) or (facts.config.max_model_len if facts.config else None)
    longest = max((e.requested_tokens or e.prompt_tokens or 0) for e in events)
    changes = []
    fits = facts.memory.max_model_len_that_fits if facts.memory else None
    proposed = int(math.ceil(longest / MAX_MODEL_LEN_STEP) * MAX_MODEL_LEN_STEP) if longest else None
    if limit and proposed and fits and limit < proposed <= fits:
        changes.append(
            ConfigChange(
                flag="--max-model-len",
                current=str(limit),
                proposed=str(proposed),
                reason=f"the longest rejected request needs {longest:,} tokens; up to {fits:,} fit the KV cache",
                cost="fewer long requests run at once",
            )
        )
    return [
        RULE_TOO_LONG.finding(
            Severity.MEDIUM if len(events) >= TOO_LONG_MANY else Severity.LOW,
            f"{len(events)} request(s) rejected as longer than max-model-len {fmt(limit)} "
            f"(longest {fmt(longest)} tokens)",
            evidence=[c.log_evidence(events[-1], "rejected request tokens", longest or None, limit, ">", "tokens")],
            changes=changes,
            confidence=0.7,
            summary="Clients send prompts (plus max_tokens) longer than the server accepts: they get HTTP 400.",
            actions=[
                "Truncate or summarise long inputs client-side, or raise --max-model-len where memory allows "
                "(servops advise)."
            ],
        )
    ]


RULE_TOO_LONG = Rule(
    code="OP-5.12",
    title="requests rejected as too long",
    category=Category.RELIABILITY,
    check=_check_too_long,
    needs=("events",),
    page=RulePage(
        checks="Log lines of the request-too-long 400 errors (every version's wording, docs/reference.md §2.8): how "
        f"many ({TOO_LONG_MANY}+ is medium severity), and the longest prompt (+ max_tokens) against "
        "--max-model-len.",
        why="These requests fail outright; either clients need to shorten them or the limit is set below what the "
        "memory would allow.",
        example="5 requests rejected: maximum context length 8,192, longest 11,300 tokens; 26,048 fit -> 12288.",
        fix=f"Raise --max-model-len to the longest request rounded up to {MAX_MODEL_LEN_STEP:,} when the memory "
        "figures say it fits; else truncate client-side.",
        limits="Only sees rejections that reached the server log; from 0.32 an over-long max_tokens is clamped "
        "silently, not rejected.",
        references=[],
    ),
)


RULES: list[Rule] = [RULE_ABORTS, RULE_TOO_LONG]
