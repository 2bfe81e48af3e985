"""OP-5.30, OP-5.31, OP-5.33, OP-5.42: what the API server's access log says about failed requests: a path it has no
route for (404), requests it failed itself (500) when the text holds no exception to explain them, a route asked with
a method it does not take (405; a client's words for it too), and requests it refused as invalid (400) when the text
holds no reason.

OP-5.30, the client calls a path vLLM's OpenAI-compatible server has no route for.

Why a rule of its own: the server is up and the model is fine, yet every request fails; its access log says
which path the client asked for, and the path says what the client was written for. vLLM's OpenAI server
(`vllm serve`, `python -m vllm.entrypoints.openai.api_server`) serves OpenAI's routes under /v1
(/v1/chat/completions, /v1/completions, /v1/models, /v1/embeddings for pooling models) and a few of its own
(/health, /version, /tokenize, /metrics); read in 0.5.4 (entrypoints/openai/api_server.py) and 0.32.0 (the
api_router modules). `/generate` is the route of vLLM's early demo server (`python -m vllm.entrypoints.api_server`,
0.5.4; no module serves it in 0.32) and of Hugging Face's TGI; `/api/generate` and `/api/chat` are Ollama's. A
path that is one of OpenAI's without its `/v1` is a base URL missing it; `/v1/v1/…` a base URL that has it and a
client that adds it again. Source: vllm#6194 (a client calling /generate on the OpenAI server).

OP-5.31: vLLM's server answers 500 when a request fails inside it (an exception in the API server or the engine
while serving it) and logs the exception beside the access line; a paste with the 500 and no exception stops short
of the cause, and the finding says where it is (vllm#40856: an image download that failed; its lines were cut).

OP-5.42: a 400 is vLLM refusing a request before it runs, and its reason goes into the response's body, not the log:
vLLM 0.32 logs it with a stack when `--log-error-stack` is on (off unless VLLM_SERVER_DEV_MODE=1;
vllm/entrypoints/launchers/cli_args.py; the handlers in vllm/entrypoints/serve/exception_handling/handlers/, the request
schema's included), else only at DEBUG for the refusals vLLM raises itself (`create_error_response called with …`,
vllm/entrypoints/serve/exception_handling/error_response.py; the schema's validation handler builds its answer without
it). An access log full of 400s is a healthy server and
clients sending what it does not accept; the finding says where the reason is and how to make the server log it.
"""

from __future__ import annotations

from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

OPENAI_ROUTES = ("/v1/chat/completions", "/v1/completions", "/v1/models", "/v1/embeddings")
# Routes vLLM's OpenAI server has: a 404 there is not a missing route (OP-5.30 reads it as an unserved model).
SERVED_ROUTES = frozenset(
    {*OPENAI_ROUTES, "/v1/responses", "/v1/rerank", "/v1/score", "/tokenize", "/v1/audio/transcriptions"}
)
# Paths a browser or a probe asks for on any server: a 404 there says nothing about the client.
INCIDENTAL = frozenset({"/", "/favicon.ico", "/robots.txt"})


class Misroute(NamedTuple):
    written_for: str  # what the path belongs to
    use: str  # the route to call instead


# Another server's routes, and what vLLM's OpenAI server serves for each.
FOREIGN: dict[str, Misroute] = {
    "/generate": Misroute("vLLM's early demo server (vllm.entrypoints.api_server) and TGI", "/v1/completions"),
    "/generate_stream": Misroute("Hugging Face's TGI", '/v1/completions with "stream": true'),
    "/api/generate": Misroute("Ollama's API", "/v1/completions"),
    "/api/chat": Misroute("Ollama's API", "/v1/chat/completions"),
    "/api/tags": Misroute("Ollama's API", "/v1/models"),
}


def _misroute(path: str) -> Misroute | None:
    """What the path was written for, when the rule knows."""
    path = path.rstrip("/") or "/"
    if path in FOREIGN:
        return FOREIGN[path]
    if path.startswith("/v1/v1/"):
        return Misroute("a client that adds /v1 to a base URL ending in /v1", path.removeprefix("/v1"))
    if "/v1" + path in OPENAI_ROUTES:
        return Misroute("a client whose base URL lacks /v1", "/v1" + path)
    return None


def _check_routes(facts: Facts) -> list[Finding]:
    missing = [e for e in facts.events_of(LogEventKind.ROUTE_NOT_FOUND) if e.message not in INCIDENTAL]
    if not missing:
        return []
    read = [(event, _misroute(event.message or "")) for event in missing]
    event, misroute = next(((e, m) for e, m in read if m), read[0])  # the first whose path says what it was for
    return [_route_finding(event, misroute, len(missing))]


def _route_finding(event: LogEvent, misroute: Misroute | None, count: int) -> Finding:
    if event.message is None:
        return _unnamed_route_finding(event)
    if (event.message.rstrip("/") or "/") in SERVED_ROUTES:
        return _served_route_finding(event, count)
    path = event.message
    called = f"{event.component} {path}" if event.component else path
    title = f"the client calls {called}, a path the server has no route for (HTTP 404)"
    said = f": it is the route of {misroute.written_for}" if misroute else ""
    first = (
        f"Point the client's request URL at the OpenAI endpoints under /v1: use {misroute.use} instead of {path}."
        if misroute
        else f"Point the client's request URL at one of the OpenAI endpoints under /v1 ({', '.join(OPENAI_ROUTES)}) "
        f"instead of {path}; `curl <server>/v1/models` lists what the server serves."
    )
    return RULE_ROUTE.finding(
        Severity.HIGH,
        title + said,
        summary="vLLM's OpenAI-compatible server answers 404 to a path it has no route for: the server and the model "
        "are fine, and every request of this client fails the same way"
        + (f" ({count} such requests in the text)." if count > 1 else ".")
        + " Its routes are OpenAI's under /v1 and a few of its own (/health, /version, /tokenize, /metrics).",
        evidence=[c.log_evidence(event, name="path with no route", value=path)],
        actions=[
            first,
            "In an OpenAI client library, the base URL is `http://<host>:<port>/v1` and the library adds the rest.",
        ],
        confidence=0.85 if misroute else 0.6,
    )


def _served_route_finding(event: LogEvent, count: int) -> Finding:
    """A 404 on a route vLLM's server has: vLLM answers 404 there itself for a model name it does not serve
    (OpenAIServing._check_model: `The model `x` does not exist.`, NotFoundError), or the request reached a server
    without that route (a router, another service on the port)."""
    path = event.message or ""
    return RULE_ROUTE.finding(
        Severity.HIGH,
        f"{path} answered 404: it is one of vLLM's routes, so the request named a model the server does not serve, "
        "or reached a server without that route",
        summary=f"vLLM serves {path}; its own 404 there is its answer to a request whose `model` is not one it serves "
        '(the body says `The model `<name>` does not exist.`, type NotFoundError). A 404 with `{"detail": "Not '
        'Found"}` instead means the request reached a server without the route: another service on that port, or '
        "a router or gateway in front that does not forward it"
        + (f" ({count} such requests in the text)." if count > 1 else "."),
        evidence=[c.log_evidence(event, name="HTTP 404 on a served route", value=path)],
        changes=[
            ConfigChange(
                flag="--served-model-name",
                proposed="<the name clients send>",
                reason="vLLM answers 404 on its own routes to a model name it does not serve",
            )
        ],
        actions=[
            "Send the model name the server serves: `curl <server>/v1/models` lists it, and it is --served-model-name "
            "when that is set (else the --model argument as written, a local path included); or serve it under the "
            "name clients send with --served-model-name (several names may be given).",
            "If the body is `Not Found` with no vLLM error, find what answers on that host and port (a router, a "
            "gateway, another server) and point the client at the vLLM server itself.",
        ],
        confidence=0.7,
    )


def _unnamed_route_finding(event: LogEvent) -> Finding:
    """A client's words for the 404 (`{'detail': 'Not Found'}`, FastAPI's body for a path with no route), which do
    not say the path: the base URL the client was given is what to check."""
    return RULE_ROUTE.finding(
        Severity.HIGH,
        'the client calls a path the server has no route for (HTTP 404 `{"detail": "Not Found"}`): its base URL '
        "has /v1 doubled or missing, or names another server's route",
        summary='`{"detail": "Not Found"}` is FastAPI\'s answer (vLLM\'s server runs on it) for a path no route '
        "serves: the server is up, and the URL the client builds is not one of its routes. vLLM's own errors for a "
        'route it has (an unknown model) are `{"object": "error", …}` bodies instead.',
        evidence=[c.log_evidence(event, name="HTTP 404 body", value="Not Found")],
        actions=[
            "Check the base URL the client was given: a client that adds /v1/… itself (many rerank and embedding "
            "integrations) needs `http://<host>:<port>` without /v1, or it calls /v1/v1/…; an OpenAI client library "
            "needs the URL with /v1. The server's access log line for the request shows the path it got.",
            f"vLLM's OpenAI routes: {', '.join(OPENAI_ROUTES)}, and /v1/rerank, /v1/score for rerank and score models; "
            "`curl <server>/v1/models` lists the models it serves.",
        ],
        confidence=0.6,
    )


RULE_ROUTE = Rule(
    code="OP-5.30",
    title="the client calls a path the server has no route for",
    category=Category.CONFIGURATION,
    check=_check_routes,
    needs=("events",),
    page=RulePage(
        checks='The API server\'s access log answering 404: `"POST /generate HTTP/1.1" 404 Not Found` (not for `/` '
        "or /favicon.ico, which browsers ask for); a client's own words for it, FastAPI's `{'detail': 'Not Found'}` "
        "body.",
        why="A client written for another server, or a base URL with /v1 missing or doubled, fails on every request "
        "while the server is healthy.",
        example='`"POST /generate HTTP/1.1" 404 Not Found` from a client written for vLLM\'s demo server, against '
        "the OpenAI server (vllm#6194).",
        fix="The OpenAI endpoint under /v1 that does the same (/v1/completions for /generate and Ollama's "
        "/api/generate, /v1/chat/completions for /api/chat); the base URL with /v1 once.",
        limits="A client's `{'detail': 'Not Found'}` does not say the path, so the finding says what to check in the "
        "base URL, not which route to call; the routes a speech model adds are not listed.",
        references=["https://github.com/vllm-project/vllm/issues/6194"],
    ),
)

# --- OP-5.31 the server failed requests, and the text holds no exception ----------------------------------

# Events that carry an exception or a vLLM message: with one of them, another rule explains the 500.
EXPLAINED_BY = (LogEventKind.UNPLACED_ERROR, LogEventKind.VLLM_MESSAGE)


def _unexplained(facts: Facts, kind: LogEventKind, explained_by: tuple[LogEventKind, ...]) -> list[LogEvent]:
    """The access lines of `kind`, or none when the text holds an event that says why (another rule answers it)."""
    if facts.events_of(*explained_by):
        return []
    return facts.events_of(kind)


def _paths(events: list[LogEvent]) -> str:
    """The paths the access lines name, each once, in order; uvicorn's exception line names none."""
    return ", ".join(sorted({e.message for e in events if e.message})) or "a route the text does not name"


def _check_server_errors(facts: Facts) -> list[Finding]:
    failed = _unexplained(facts, LogEventKind.SERVER_ERROR_RESPONSE, EXPLAINED_BY)
    if not failed:
        return []
    return [
        RULE_SERVER_ERROR.finding(
            Severity.MEDIUM,
            f"the server failed {len(failed)} request(s) to {_paths(failed)} with HTTP 500; the exception is not in "
            "the text",
            summary="vLLM answers 500 when serving a request raised inside the server: in the API server (the "
            "request's processing, its media download, the chat template) or in the engine. It logs that exception "
            "with a traceback next to the access line, and the text here stops short of it, so the cause is not "
            "in it.",
            evidence=[c.log_evidence(failed[0], name="request failed by the server", value=failed[0].message)],
            actions=[
                "Read the API server's log around the 500 line: the ERROR lines and traceback just before it (or "
                "after, from another process; uvicorn's `Exception in ASGI application` is followed by it) name the "
                "exception; paste them for the cause.",
                "Retry the same request alone: the same 500 again is its content (its media, its messages), a 500 "
                "only under load is the server's state.",
            ],
            confidence=0.5,
        )
    ]


RULE_SERVER_ERROR = Rule(
    code="OP-5.31",
    title="the server failed requests (HTTP 500) and the text holds no exception",
    category=Category.RELIABILITY,
    check=_check_server_errors,
    needs=("events",),
    page=RulePage(
        checks='The API server\'s access log answering 500 (`"POST /v1/chat/completions HTTP/1.1" 500 Internal Server '
        "Error`), or uvicorn's `Exception in ASGI application`, in a text with no exception and no vLLM message.",
        why="A 500 is the server failing the request; its exception is logged beside the access line, and a paste "
        "without it has no cause to name.",
        example="stats lines and one `500 Internal Server Error` for an image request; the next lines (cut) held "
        "the failed image download (vllm#40856).",
        fix="The exception logged with the 500; a retry alone tells the request's content from the server's state.",
        limits="Says where the cause is, not what it is.",
        references=["https://github.com/vllm-project/vllm/issues/40856"],
    ),
)

# --- OP-5.42 the server refused requests as invalid (400), and the text holds no reason ------------------------------

# Events that say why a request was refused: with one of them, the rule that reads it explains the 400.
REFUSAL_EXPLAINED_BY = (
    *EXPLAINED_BY,
    LogEventKind.REQUEST_TOO_LONG,
    LogEventKind.REQUEST_SCHEMA_REFUSED,
    LogEventKind.CHAT_TEMPLATE_REFUSED,
    LogEventKind.EMPTY_PROMPT,
)


def _check_refused(facts: Facts) -> list[Finding]:
    refused = _unexplained(facts, LogEventKind.BAD_REQUEST_RESPONSE, REFUSAL_EXPLAINED_BY)
    if not refused:
        return []
    return [
        RULE_REFUSED.finding(
            Severity.MEDIUM,
            f"the server refused {len(refused)} request(s) to {_paths(refused)} as invalid (HTTP 400); the reason "
            "is not in the text",
            summary="vLLM answers 400 when it refuses a request before running it: a prompt plus max_tokens past "
            "--max-model-len, a field or value it does not accept (tool_choice auto without "
            "--enable-auto-tool-choice, a parameter out of range), a chat template refusing the messages. The "
            "reason goes into the response's body; vLLM 0.32 logs it only with --log-error-stack or at DEBUG. "
            "The server is up: the clients send what it does not accept.",
            evidence=[c.log_evidence(refused[0], name="request refused by the server", value=refused[0].message)],
            actions=[
                "Read one refused response's body: the client's error (`openai.BadRequestError: Error code: 400 - "
                "{...}`) or the same request sent with `curl -s`; its message names the field and the limit. Paste "
                "it for the cause.",
                "Or make the server log why: restart it with --log-error-stack (vLLM 0.32 then logs the exception "
                "behind each refusal its handlers answer, the request schema's included), or VLLM_LOGGING_LEVEL=DEBUG "
                "(`create_error_response called with <exception>: <reason>`, for the refusals vLLM raises itself).",
                "If every request is refused since a change, compare the client's requests with the server's flags: "
                "a lower --max-model-len, a tool-calling client against a server without --enable-auto-tool-choice, "
                "a new --chat-template.",
            ],
            confidence=0.5,
        )
    ]


RULE_REFUSED = Rule(
    code="OP-5.42",
    title="the server refused requests as invalid (HTTP 400) and the text holds no reason",
    category=Category.RELIABILITY,
    check=_check_refused,
    needs=("events",),
    page=RulePage(
        checks='The API server\'s access log answering 400 (`"POST /v1/chat/completions HTTP/1.1" 400 Bad Request`) '
        "in a text with no exception, no vLLM message and no request refusal another rule reads (too long, the "
        "schema, the chat template, an empty prompt).",
        why="A 400 is the client's request refused, with its reason in the response body: vLLM 0.32 does not log "
        "it unless asked to, so a log of 400s holds no cause.",
        example='Three `"POST /v1/chat/completions HTTP/1.1" 400 Bad Request` lines and nothing else.',
        fix="The refused response's body; --log-error-stack (every handler's refusal) or VLLM_LOGGING_LEVEL=DEBUG "
        "(vLLM's own refusals) to have the server log it.",
        limits="Says where the reason is, not what it is.",
        references=[
            "vllm/entrypoints/serve/exception_handling/error_response.py (0.32)",
            "vllm/entrypoints/launchers/cli_args.py (0.32: log_error_stack)",
        ],
    ),
)

# --- OP-5.33 a route asked with a method it does not take (405) ------------------------------------------------

# vLLM's inference routes take POST only (an OpenAI client always POSTs to them); GET is for /v1/models, /health.
POST_ROUTES = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses", "/tokenize")


def _check_method_not_allowed(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.METHOD_NOT_ALLOWED)
    if not events:
        return []
    event = next((e for e in events if e.component), events[0])  # the server's own line says the method
    method, path = event.component, event.message
    if method and method != "POST" and (path or "").rstrip("/") in POST_ROUTES:
        title = f"the server got {method} {path}, a route that takes POST only (HTTP 405)"
        said = (
            f"{path} takes POST. A {method} there is a browser or a health check pointed at it, a client built "
            "for another API, or a redirect in front of the server: a proxy or load balancer answering a POST with "
            "301/302 (HTTP to HTTPS, a trailing slash) makes the client follow it as a GET."
        )
    else:
        title = "HTTP 405 Method Not Allowed for the client's POST: a proxy or redirect in between changed it"
        said = (
            "An OpenAI client POSTs to /v1/chat/completions and /v1/completions, and vLLM's server takes POST there, "
            "so a 405 means the request arrived as another method or was answered by something else: a proxy, load "
            "balancer or tunnel in front of the server (Cloudflare, nginx, an ingress) redirecting it (a 301/302 "
            "turns a POST into a GET) or refusing the method itself."
        )
    return [
        RULE_METHOD_NOT_ALLOWED.finding(
            Severity.HIGH,
            title,
            summary=said + (f" {len(events)} such answers in the text." if len(events) > 1 else ""),
            evidence=[c.log_evidence(event, name="HTTP 405", value=path or event.raw)],
            actions=[
                "Call the server directly, past the proxy: `curl -X POST http://<host>:<port>/v1/chat/completions "
                '-H \'Content-Type: application/json\' -d \'{"model": "<name>", "messages": [{"role": '
                '"user", "content": "hi"}]}\'`; if it answers, the 405 is the proxy\'s.',
                "Then give the client the URL the proxy does not redirect (its https:// address, with or without "
                "the trailing slash it wants), or set the proxy to pass POST through to the API path unchanged.",
            ],
            confidence=0.7,
        )
    ]


RULE_METHOD_NOT_ALLOWED = Rule(
    code="OP-5.33",
    title="a request answered 405 Method Not Allowed: a method the route does not take, or a proxy that changed it",
    category=Category.RELIABILITY,
    check=_check_method_not_allowed,
    needs=("events",),
    page=RulePage(
        checks="HTTP 405 in the server's access log (`\"GET /v1/chat/completions HTTP/1.1\" 405`) or in a client's "
        "error (`Error code: 405 - {'detail': 'Method Not Allowed'}`).",
        why="vLLM's inference routes take POST, and OpenAI's clients always POST to them: a 405 says the request "
        "reached the server as another method (a redirect turns a POST into a GET) or that something in front of "
        "it answered.",
        example="openai.APIStatusError: Error code: 405 - {'detail': 'Method Not Allowed'} for chat completions "
        "through Cloudflare, while the same server answered directly (vllm#7463: 'It was cloudflare's fault').",
        fix="None to the server: call it directly to confirm, then the URL the proxy does not redirect, or the "
        "proxy set to pass POST through.",
        limits="Without the server's access line the method the request arrived with is unknown; the finding then "
        "names the proxy or redirect as the likely cause.",
        references=["https://github.com/vllm-project/vllm/issues/7463"],
    ),
)

RULES: list[Rule] = [RULE_ROUTE, RULE_SERVER_ERROR, RULE_METHOD_NOT_ALLOWED, RULE_REFUSED]
