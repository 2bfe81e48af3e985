"""OP-5.37: the server closed a client's connection without answering, or before its answer's end.

Why a rule of its own: curl's `(52) Empty reply from server`, requests' `Remote end closed connection without
response`, httpx's `Server disconnected without sending a response` and aiohttp's `ServerDisconnectedError` say the
connection was made and then closed before any answer: not a refused connection (OP-5.34) and not a client that gave
up waiting (OP-5.35). Two causes explain nearly all of them. The server went away while the request ran: vLLM's
engine died (its API server then exits), the container was killed, the pod restarted. Or the client reused a pooled
connection the server had just closed: vLLM's API server closes a keep-alive connection after 5 s idle
(VLLM_HTTP_TIMEOUT_KEEP_ALIVE, uvicorn's timeout_keep_alive: vllm/envs.py, 0.32), while httpx keeps idle connections
5 s too (its default keepalive_expiry), aiohttp 15 s (keepalive_timeout) and requests until the server closes them, so
a request sent on a connection at the moment the server closes it meets an empty reply: now and then, on a healthy
server, after a pause in the traffic. An answer cut after it began (httpx's `incomplete chunked read`, aiohttp's
`Response payload is not completed`) is no such race: the server went away mid-stream, or a proxy closed a stream
quiet for longer than its read timeout (nginx's proxy_read_timeout counts between two reads, 60 s by default).
"""

from __future__ import annotations

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import CUT_MID_ANSWER, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Events in the same text that say the server went away: its engine died, a worker died, it was killed.
_WENT_AWAY = (
    LogEventKind.FATAL_ERROR,
    LogEventKind.ENGINE_DEAD,
    LogEventKind.WORKER_DIED,
    LogEventKind.HOST_OOM_KILLED,
)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.SERVER_DISCONNECTED)
    if not events:
        return []
    gone = facts.events_of(*_WENT_AWAY)
    if gone:
        return [_went_away(events[0], gone[0])]
    if events[0].connect_result == CUT_MID_ANSWER:
        return [_cut_off(events[0])]
    return [_curl_closed(events[0]) if events[0].component == "curl" else _closed(events[0])]


PROXY_READ_TIMEOUT_S = 60  # nginx's proxy_read_timeout default, between two reads from vLLM (nginx's proxy module)


def _cut_off(event: LogEvent) -> Finding:
    """An answer cut before its end: the server (or what forwards it) closed the connection mid-stream. No pooled
    connection race explains it: the answer had begun on it."""
    return RULE.finding(
        Severity.MEDIUM,
        f"the server's answer to {event.component} was cut off before its end: it went away mid-stream, or a proxy "
        "in between closed the connection",
        summary="The answer had begun (a streamed or chunked body) and the connection closed before its last "
        "chunk. The server dying or restarting during the request does that, and so does a proxy or load balancer "
        "that closes a connection quiet for longer than its timeout: a long prefill before the first token, or a "
        "stall between tokens.",
        evidence=[c.log_evidence(event, name="answer cut off", value=event.component)],
        actions=[
            _SERVER_LOG,
            f"If a proxy forwards the stream, its read timeout counts between two chunks (nginx's proxy_read_timeout, "
            f"{PROXY_READ_TIMEOUT_S} s by default; a cloud load balancer's idle timeout, often 60 s): raise it above "
            "the longest wait for the first token, and turn its buffering off for streams (nginx proxy_buffering "
            "off).",
            "A gateway's timeout for the whole request cuts a stream that is still producing tokens: Envoy Gateway's "
            "HTTPRoute default is 15 s, which `timeouts: {request: 0s}` on the route lifts (modelplaneai/modelplane "
            "PR #174: every streamed completion died mid-generation through it).",
        ],
        confidence=0.55,
    )


_SERVER_LOG = (
    "Read vLLM's log (and `kubectl get pods`' restarts) at that time: an engine death, an OOM kill or a restart there "
    "is the cause."
)


def _curl_closed(event: LogEvent) -> Finding:
    """curl opens a connection of its own for each run, so no idle one was reused: the server (or what forwards to
    it) went away."""
    return RULE.finding(
        Severity.MEDIUM,
        "the server closed curl's connection without answering: it restarted or died at that moment, or what "
        "forwards to it did",
        summary="curl connects anew each time it runs, so this is no stale pooled connection: the process that "
        "accepted it closed it before answering. vLLM crashing or being killed during the request, a pod restarting, "
        "or a forwarder in between (`kubectl port-forward` to a pod that went away, a proxy) do that.",
        evidence=[c.log_evidence(event, name="no answer", value="curl")],
        actions=[
            _SERVER_LOG,
            "If a `kubectl port-forward` carries it, restart the forward after the pod restarted: it forwards to the "
            "one pod it picked when it started, even when given a Service.",
        ],
        confidence=0.6,
    )


def _went_away(event: LogEvent, gone: LogEvent) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        f"the server closed {event.component}'s connection without answering: it went away while the request ran",
        summary="The text also holds the server's end (an engine death, a worker's, a kill): the connection closed "
        "because the process answering it stopped. The empty reply is a consequence; the other finding names the "
        "cause.",
        evidence=[c.log_evidence(event, name="no answer"), c.log_evidence(gone, name="the server's end")],
        actions=["Triage the server's end (the finding for it above or below this one); the client's error follows."],
        confidence=0.5,
    )


def _closed(event: LogEvent) -> Finding:
    keep_alive = vllm_defaults.HTTP_KEEP_ALIVE_S
    return RULE.finding(
        Severity.MEDIUM,
        f"the server closed {event.component}'s connection without answering: it restarted or died at that moment, "
        f"or the client reused a connection vLLM had closed after {keep_alive} s idle",
        summary="The connection was made and closed before any answer. If it happened once, during a restart, a "
        "crash or a kill, the server's log at that time says so. If it happens now and then on a healthy server, "
        f"after pauses in the traffic, it is a race: vLLM closes idle keep-alive connections after {keep_alive} s, "
        "and a client that sends on a pooled connection at that moment gets no reply.",
        evidence=[c.log_evidence(event, name="no answer", value=event.component)],
        actions=[
            _SERVER_LOG,
            f"Otherwise keep the client's idle connections shorter than vLLM's {keep_alive} s (httpx "
            f"`Limits(keepalive_expiry={keep_alive - 1})`, aiohttp `TCPConnector(keepalive_timeout={keep_alive - 1})`),"
            " or raise vLLM's (VLLM_HTTP_TIMEOUT_KEEP_ALIVE, seconds, in the server's environment) above the "
            "client's; retrying the request on a fresh connection is safe for a completion that never started.",
        ],
        confidence=0.6,
    )


RULE = Rule(
    code="OP-5.37",
    title="the server closed the connection without answering",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="curl's `(52) Empty reply from server` and `(56) Recv failure: Connection reset by peer`, requests' "
        "`Remote end closed connection without response`, "
        "httpx's `Server disconnected without sending a response`, aiohttp's `ServerDisconnectedError`; an answer cut "
        "mid-stream (httpx's `incomplete chunked read`, aiohttp's `Response payload is not completed`, requests' "
        "`InvalidChunkLength`, `Response ended prematurely` and `IncompleteRead`, curl's `(18) transfer closed with "
        "outstanding read data remaining`); the "
        "server's death in the same text (a fatal error, a dead worker, an OOM kill) makes it that death's "
        "consequence.",
        why="A connection closed without an answer is neither refused nor timed out: the server went away, or a "
        "pooled connection met vLLM's 5 s keep-alive closing it.",
        example="`httpx.RemoteProtocolError: Server disconnected without sending a response.` now and then from a "
        "benchmark client after pauses, with nothing in vLLM's log.",
        fix="The server's end, where there is one; else client connections kept idle less than vLLM's keep-alive, or "
        "VLLM_HTTP_TIMEOUT_KEEP_ALIVE raised above the client's.",
        limits="Without the server's log, a crash and the keep-alive race read the same; the finding names both.",
        references=["https://www.python-httpx.org/advanced/resource-limits/"],
    ),
)

RULES: list[Rule] = [RULE]
