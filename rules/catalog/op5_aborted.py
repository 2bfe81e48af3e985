"""OP-5.40: vLLM's log shows requests aborted, and how long each had run says which timeout ended it.

Why a rule of its own: vLLM logs `Aborted request <id>.` (V0's AsyncLLMEngine) or `Aborted request(s) <ids>.` (V1's
AsyncLLM, vllm/v1/engine/async_llm.py, 0.32) when a request ends without its answer: its client's connection closed
(a client or proxy timeout, a user who stopped the generation, a client that crashed) and vLLM cancelled the work
(`with_cancellation` on its OpenAI routes). The line reads like a failure of vLLM and is not one: a request vLLM
failed leaves an error in the log. When the log also holds each request's `Added request <id>.` (V0 by default,
unless --disable-log-requests; vLLM 0.32 only with --enable-log-requests), the time between the two is how long the
client waited, and aborts that all came after the same time are one timeout: nginx's proxy_read_timeout is 60 s by
default, the OpenAI SDK's timeout 600 s. Many threads on these lines end at a client's timeout (vllm#2484: 'the
request time out was too short').
A fallback: any finding at least as severe (an error, a client's own timeout, a gateway's status) says more.
"""

from __future__ import annotations

import statistics

from rules.catalog import common as c
from rules.catalog.op5_client_timeout import OPENAI_TIMEOUT_S
from rules.catalog.op5_disconnected import PROXY_READ_TIMEOUT_S
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity
from rules.signals import fmt

SAME_TIMEOUT = 0.1  # aborts within ±10 % of their median wait read as one timeout …
MIN_TIMED = 3  # … when at least this many were timed
SAME_SHARE = 0.6  # … and this share of them are that close
# Timeouts whose default is a round number an abort's wait lands on, in seconds: who has it by default.
KNOWN_TIMEOUTS_S = {
    PROXY_READ_TIMEOUT_S: f"nginx's proxy_read_timeout and ingress-nginx's proxy-read-timeout "
    f"({PROXY_READ_TIMEOUT_S} s by default), APISIX's and Kong's upstream timeouts ({PROXY_READ_TIMEOUT_S} s)",
    OPENAI_TIMEOUT_S: f"the OpenAI SDK's timeout ({OPENAI_TIMEOUT_S} s by default) and LiteLLM's request timeout "
    f"({OPENAI_TIMEOUT_S} s)",
}
QUEUED = 1  # requests waiting in a stats line beside the aborts: the wait was spent queued


def _ids(event: LogEvent) -> list[str]:
    return [i for i in (event.message or "").split(",") if i]


def _waits(facts: Facts) -> list[float]:
    """Seconds between each aborted request's Added line and its Aborted line, for the requests the text holds both."""
    added = {i: e.time_s for e in facts.events_of(LogEventKind.REQUEST_ADDED) for i in _ids(e) if e.time_s is not None}
    return [
        e.time_s - added[i]
        for e in facts.events_of(LogEventKind.REQUEST_ABORTED)
        for i in _ids(e)
        if e.time_s is not None and i in added and e.time_s >= added[i]
    ]


def _one_timeout(waits: list[float]) -> float | None:
    """The median wait when most aborts came after the same time (one timeout), else None."""
    if len(waits) < MIN_TIMED:
        return None
    median = statistics.median(waits)
    close = [w for w in waits if abs(w - median) <= SAME_TIMEOUT * median]
    return median if median > 0 and len(close) >= SAME_SHARE * len(waits) else None


def _check(facts: Facts) -> list[Finding]:
    aborted = facts.events_of(LogEventKind.REQUEST_ABORTED)
    if not aborted:
        return []
    count = sum(len(_ids(e)) for e in aborted)
    timeout = _one_timeout(_waits(facts))
    queued = [e for e in c.stats_lines(facts) if (e.waiting or 0) >= QUEUED]
    return [_finding(aborted[0], count, timeout, queued[-1] if queued else None)]


def _who_has(timeout: float) -> str:
    known = next((who for seconds, who in KNOWN_TIMEOUTS_S.items() if abs(timeout - seconds) <= 2), None)
    return f" ({known} are {fmt(timeout)} s)" if known else ""


def _finding(first: LogEvent, count: int, timeout: float | None, stats: LogEvent | None) -> Finding:
    waited = f" after {fmt(timeout)} s each" if timeout else ""
    title = f"{count} request(s) aborted{waited}: " + (
        f"their clients, or a proxy between, gave up at a {fmt(timeout)} s timeout"
        if timeout
        else "their clients disconnected or cancelled before the answer ended"
    )
    actions = [
        f"Find the {fmt(timeout)} s timeout between the client and vLLM{_who_has(timeout)}: raise it above the "
        "longest request, or stream the response so it is never idle that long."
        if timeout
        else "See how long each request ran before it was aborted: with request logging (vLLM 0.32: "
        "--enable-log-requests; older releases log requests unless --disable-log-requests) each request's `Added "
        "request` line gives its start; aborts all after the same time are a client's or a proxy's timeout.",
        "The client's own log says why it hung up (a timeout, a user's stop); the proxy's access log, a 499 or an "
        "Envoy DC flag, says the client closed first.",
    ]
    if stats is not None:
        actions.insert(
            0,
            f"{stats.waiting} request(s) were waiting in vLLM's stats line beside the aborts: the wait was spent "
            "queued; lower the load per replica (the client's concurrency, a gateway's limit) or add replicas.",
        )
    return RULE.finding(
        Severity.MEDIUM,
        title,
        summary="vLLM aborts a request when its client's connection closes before the answer ends, and cancels "
        "the work; it is not vLLM failing the request (that leaves an error in the log). A client or proxy "
        "timeout, a user stopping the generation or a client that crashed closes it.",
        evidence=[c.log_evidence(first, name="requests aborted", value=count)]
        + ([c.log_evidence(stats, name="requests waiting", value=stats.waiting)] if stats else []),
        actions=actions,
        confidence=0.6 if timeout else 0.4,
    )


RULE = Rule(
    code="OP-5.40",
    title="requests aborted: their clients went away",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="vLLM's `Aborted request <id>.` (V0) and `Aborted request(s) <ids>.` (V1) lines; with the `Added "
        f"request <id>.` lines, each aborted request's wait, and whether {fmt(SAME_SHARE * 100)} % of at least "
        f"{MIN_TIMED} came within {fmt(SAME_TIMEOUT * 100)} % of the same time (one timeout, named where it is a "
        "known default: 60 s, 600 s); stats lines with requests waiting beside them.",
        why="An abort is the client leaving, not vLLM failing; the time it left after names the timeout to raise, "
        "and a queue beside it says the wait was spent queued.",
        example="Aborts 60 s after each request was added, behind nginx: its proxy_read_timeout (60 s by default) "
        "closed the connection to vLLM while the generation ran.",
        fix="The timeout between client and vLLM raised above the longest request, or the response streamed; a "
        "queue shortened by less load per replica or more replicas.",
        limits="A fallback: any finding at least as severe names more. Without Added lines the wait is unknown; the "
        "log's timestamps count whole seconds.",
        references=["https://github.com/vllm-project/vllm/issues/2484"],
    ),
)

RULES: list[Rule] = [RULE]
