"""OP-5.35: the client gave up waiting for vLLM's answer: it reached the server and its own timeout ran out.

Why a rule of its own: `openai.APITimeoutError: Request timed out.` (or httpx's `ReadTimeout`, requests' `Read timed
out. (read timeout=60)`) reads as vLLM failing, but the connection was made and the server was working: the client
stopped waiting. Two things settle what to do, and the text holds them when vLLM's stats lines are beside it: a
queue (requests waiting: the server was saturated, and the wait was spent queued) or a long generation (nothing
waiting: the request itself outlasted the timeout). What a person should know besides: vLLM cancels a request whose
client disconnected (`with_cancellation` on its OpenAI routes, vllm/entrypoints/serve/utils/api_utils.py, 0.32), so
the work is lost, and the OpenAI SDK retries a timed-out request twice by default (`DEFAULT_MAX_RETRIES = 2`, with
`DEFAULT_TIMEOUT` 600 s: openai-python src/openai/_constants.py), starting it over each time: a request longer than
the timeout never completes, and costs the server three times its work.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity
from rules.signals import fmt

QUEUED = 1  # requests waiting in a stats line beside the timeout: the wait was spent in vLLM's queue
OPENAI_TIMEOUT_S = 600  # openai-python's DEFAULT_TIMEOUT (src/openai/_constants.py)
OPENAI_RETRIES = 2  # openai-python's DEFAULT_MAX_RETRIES: a timed-out request is sent again twice

_RAISE_TIMEOUT = (
    "Raise the client's timeout above the longest request, or stream the response (stream=True: tokens arrive as "
    f"they are generated, and a read waits only for the next one). The OpenAI SDK: OpenAI(timeout=…), "
    f"{OPENAI_TIMEOUT_S} s by default; requests: timeout=(connect, read); an agent framework's own request timeout."
)
_RETRIES = (
    "vLLM cancels a request whose client disconnected, so the timed-out work is lost; the OpenAI SDK then sends it "
    f"again ({OPENAI_RETRIES} retries by default, OpenAI(max_retries=…)), from the start: a request longer than the "
    "timeout never completes, and each retry adds its work to the server's load."
)


def _check_client_timeout(facts: Facts) -> list[Finding]:
    timeouts = facts.events_of(LogEventKind.CLIENT_TIMEOUT)
    if not timeouts:
        return []
    timeout = next((e for e in timeouts if e.timeout_ms), None) or next(
        (e for e in timeouts if e.component == "OpenAI SDK"), timeouts[0]
    )
    queued = [e for e in c.stats_lines(facts) if (e.waiting or 0) >= QUEUED]
    return [_queued(timeout, queued[-1]) if queued else _long_request(timeout)]


def _waited(timeout: LogEvent) -> str:
    return f" after {fmt(timeout.timeout_ms / 1000)} s" if timeout.timeout_ms else ""


def _said(timeout: LogEvent) -> str:
    where = f" from {timeout.address}" if timeout.address else ""
    default = (
        f" (its timeout, unless set, is {OPENAI_TIMEOUT_S} s)"
        if timeout.component == "OpenAI SDK" and not timeout.timeout_ms
        else ""
    )
    return f"The client ({timeout.component}) gave up waiting for an answer{where}{_waited(timeout)}{default}."


def _queued(timeout: LogEvent, stats: LogEvent) -> Finding:
    return RULE_CLIENT_TIMEOUT.finding(
        Severity.HIGH,
        f"the client gave up waiting{_waited(timeout)} while {stats.waiting} request(s) queued in vLLM: the server "
        "was saturated, not down",
        summary=f"{_said(timeout)} vLLM's stats line beside it shows {stats.waiting} request(s) waiting and "
        f"{stats.running} running: a request's wait was spent in the queue before it ran. A longer timeout only "
        "hides the queue; fewer concurrent requests per replica, or more replicas, shortens it.",
        evidence=[
            c.log_evidence(timeout, name="the client's timeout", value=timeout.timeout_ms, unit="ms"),
            c.log_evidence(stats, name="requests waiting", value=stats.waiting),
        ],
        actions=[
            "Lower the load per replica (the client's concurrency, a gateway's limit) or add replicas; triage this "
            "server's /metrics (or its stats lines over time) for why it queues.",
            _RAISE_TIMEOUT,
            _RETRIES,
        ],
        confidence=0.7,
    )


def _long_request(timeout: LogEvent) -> Finding:
    return RULE_CLIENT_TIMEOUT.finding(
        Severity.MEDIUM,
        f"the client gave up waiting{_waited(timeout)}: it reached vLLM, and its request outlasted its timeout",
        summary=f"{_said(timeout)} The connection was made, so vLLM was up: the request ran longer than the client "
        "waited (a long generation, a long prompt on a slow device), or it queued behind others (vLLM's stats lines "
        "at that time say which: Waiting above 0 is a queue).",
        evidence=[c.log_evidence(timeout, name="the client's timeout", value=timeout.timeout_ms, unit="ms")],
        actions=[
            _RAISE_TIMEOUT,
            "Or cap the request: max_tokens bounds how long a generation runs.",
            _RETRIES,
        ],
        confidence=0.55,
    )


RULE_CLIENT_TIMEOUT = Rule(
    code="OP-5.35",
    title="the client gave up waiting for vLLM's answer",
    category=Category.RELIABILITY,
    check=_check_client_timeout,
    needs=("events",),
    page=RulePage(
        checks="A client's words for a read that timed out after its connection was made: the OpenAI SDK's "
        "`APITimeoutError: Request timed out.`, httpx's `ReadTimeout`, urllib3's `HTTPConnectionPool(host=…, "
        "port=…): Read timed out. (read timeout=N)` to a local host or a serving port, curl's `(28) Operation timed "
        "out after N milliseconds with … bytes received` (its --max-time), LiteLLM's `litellm.Timeout: Connection "
        "timed out after N seconds` (its request timeout, 600 s by default); and a proxy's access log saying the "
        "client closed the connection first: nginx's status 499, Envoy's response flag DC (with the request's "
        "duration), for one of vLLM's routes; with vLLM's stats lines beside it, whether requests were waiting.",
        why="The server was reachable and working: the client stopped waiting. Whether the wait was a queue or the "
        "request itself decides the fix; and vLLM cancels a disconnected client's request, which the OpenAI SDK "
        "then retries from the start.",
        example="`openai.APITimeoutError: Request timed out.` beside `Running: 64 reqs, Waiting: 180 reqs`: the "
        "requests queued; lower the load per replica or add replicas.",
        fix="Requests waiting: lower the load per replica or add replicas. Otherwise: raise the client's timeout "
        "above the longest request or stream the response; cap max_tokens.",
        limits="Without stats lines of the same time a queue cannot be told from a long request. A gateway's 504 "
        "is OP-5.25's; a connection that never reached the server is OP-5.34's.",
        references=[
            "https://github.com/openai/openai-python/blob/main/src/openai/_constants.py",
            "https://github.com/openai/openai-python#timeouts",
        ],
    ),
)

RULES: list[Rule] = [RULE_CLIENT_TIMEOUT]
