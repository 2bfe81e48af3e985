"""What stands between a client and vLLM, in its own words: a gateway's 502 or 504 (vLLM's server answers
neither), a connection that never reached the server (the client's words naming where it went), the local address
the client called, an HTTP proxy variable aiohttp cannot read, and an orchestrator's
health check giving up on the server; and from the server's access log, a path it has no route for (404, also in
a client's words), a route asked with a method it does not take (405, also in a client's words), and a request it
failed (500).

Why read: these failures look like vLLM's, and the text a person pastes from their client, proxy or orchestrator
says they are not (microsoft/VibeVoice#248, vllm#16918, ray#54070).
"""

from __future__ import annotations

import re

from advisor.catalog.vllm_metrics import BY_NAME, NEWEST, version_text
from advisor.collect.log_patterns.pattern import Fields, Pattern, to_float, to_int, wording
from rules import vllm_defaults
from rules.catalog.common import is_local_host
from rules.catalog.op5_unreachable import OPENAI_SDK, OTHER_SERVERS
from rules.events import CUT_MID_ANSWER, NOT_HTTP_AT_SERVER
from rules.events import LogEventKind as K

# What the kubelet says a probe met (its HTTP and TCP probers' words): nothing listening, no answer in time, an
# answer with an error status, or a connection closed under it.
_PROBE_RESULTS = (
    ("refused", re.compile(r"connection refused|no route to host", re.IGNORECASE)),
    ("timeout", re.compile(r"deadline exceeded|timeout|timed out", re.IGNORECASE)),
    ("status", re.compile(r"status ?code:? ?(?P<status>\d{3})", re.IGNORECASE)),
    ("reset", re.compile(r"connection reset|\bEOF\b|broken pipe", re.IGNORECASE)),
)


def _health_check(match: re.Match[str]) -> Fields:
    if match["unhealthy"]:
        return {"message": match["unhealthy"], "component": "Docker Compose", "probe_result": "unhealthy"}
    if match["start_limit"]:
        return {
            "message": match.group(0),
            "component": "Modal",
            "timeout_ms": int(float(match["start_limit"]) * 1000),
            "probe_result": "start_deadline",
        }
    seconds = to_float(match["seconds"])
    reason = match["reason"] or ""
    found = next(((name, m) for name, pattern in _PROBE_RESULTS if (m := pattern.search(reason))), None)
    result = "timeout" if match["seconds"] else "restarted" if match["killed"] else found[0] if found else None
    return {
        "message": match.group(0),
        "component": "Ray Serve" if match["seconds"] else "Kubernetes",
        "timeout_ms": int(seconds * 1000) if seconds is not None else None,
        "probe": (match["probe"] or match["killed"] or "").lower() or None,
        "probe_result": result,
        "status": int(found[1]["status"]) if found and found[0] == "status" else None,
    }


# An error body in OpenAI's shape (JSON or a Python repr) whose message is empty, by its type: the status it names.
_EMPTY_BODY = r"""['"]message['"]\s*:\s*(?:''|"")\s*,\s*['"]type['"]\s*:\s*['"]{type}['"]"""


def _access_line(status: int, kind: K) -> Pattern:
    """uvicorn's access log line (vLLM's API server) answering `status`: its path and method."""
    return wording(
        (f'" {status}',),
        kind,
        # (the opening quote may be cut with what came before it: `POST /generate HTTP/1.1" 404 Not Found`,
        # GoogleCloudPlatform/ai-on-gke#777)
        rf'(?:"|^\s*)(?P<method>GET|POST|PUT|PATCH|DELETE) (?P<path>/[^\s?"]*)[^"\s]* HTTP/[\d.]+" {status}\b',
        lambda m: {"message": m["path"], "component": m["method"]},
    )


# ingress-nginx's access log (its default log format): after the status, the body's bytes, referer, user agent and
# request length, the request's time in seconds and the upstream's name in brackets.
_INGRESS_NGINX_ACCESS = re.compile(r'" \d{3} \d+ "[^"]*" "[^"]*" \d+ (?P<seconds>[\d.]+) \[[^\]]*\] \[')


# A 429 from where vLLM fetches, not from in front of it: the Hugging Face Hub's, a registry's (a pull rate limit)
_NOT_IN_FRONT = re.compile(r"huggingface|hf\.co|toomanyrequests|registry|docker\.io|pull", re.IGNORECASE)


def _gateway_status(match: re.Match[str]) -> Fields | None:
    """The status, and the gateway the line's format names with how long the request ran there, when it does."""
    status = int(match["status"] or match["status2"] or match["status3"] or match["status4"])
    if status == 429 and _NOT_IN_FRONT.search(match.string):
        return None
    fields: Fields = {"message": match.group(0), "status": status}
    ingress = _INGRESS_NGINX_ACCESS.search(match.string)
    if ingress:
        seconds = to_float(ingress["seconds"])
        fields |= {"component": "ingress-nginx", "timeout_ms": int(seconds * 1000) if seconds is not None else None}
    return fields


# Envoy's reset reasons (its response body's words) as what they say of vLLM: it refused or was not there, it
# closed the connection before answering, or Envoy's own circuit breaker refused the request.
_ENVOY_REASONS = {
    "connection failure": "refused",
    "remote connection failure": "refused",
    "local connection failure": "refused",
    "connection termination": "closed",
    "remote reset": "closed",
    "overflow": "overflow",
}


def _envoy(match: re.Match[str]) -> Fields:
    """Envoy's status and what its words say happened: refused, closed, overflow, no_endpoints, route_timeout."""
    if match["timeout"]:
        return {"message": "route_timeout", "status": 504, "component": "Envoy"}
    if match["none"]:
        return {"message": "no_endpoints", "status": 503, "component": "Envoy"}
    if match["bare"]:
        return {"message": "unreached", "status": 503, "component": "Envoy"}
    reason = match["reason"].strip()
    return {"message": _ENVOY_REASONS.get(reason, reason), "status": 503, "component": "Envoy"}


# What a client's connection met, in the words of the libraries and tools that report it.
_CONNECT_RESULTS = (
    ("refused", re.compile(r"connection refused|ECONNREFUSED|Connect call failed|actively refused", re.IGNORECASE)),
    ("timeout", re.compile(r"timed out|ETIMEDOUT|ConnectTimeout|i/o timeout", re.IGNORECASE)),
    (
        "unresolved",
        re.compile(
            r"Name or service not known|nodename nor servname|failure in name resolution|Could not resolve host|"
            r"ENOTFOUND|getaddrinfo failed|no such host|NameResolutionError",
            re.IGNORECASE,
        ),
    ),
    ("unreachable", re.compile(r"No route to host|Network is unreachable|EHOSTUNREACH|ENETUNREACH", re.IGNORECASE)),
)
# A route of vLLM's OpenAI-compatible server (or Ollama's native API a client fell back to): a failed connection
# asking for one was meant for an inference server, not for a model hub or a media URL vLLM fetches.
_SERVER_ROUTE = re.compile(
    r"^/(?:v1/|api/(?:chat|generate|tags|embed)|health|metrics|ping|invocations|version|tokenize|detokenize|pooling)"
)
# The ports inference servers listen on by default: vLLM's, and those of the local servers a client falls back to
# (Ollama, LM Studio: OP-5.34's table).
SERVING_PORTS = (vllm_defaults.API_SERVER_PORT, *OTHER_SERVERS)


def _users_server(host: str | None, number: int | None, path: str | None = None) -> bool:
    """Whether a client's target is a server of the user's: a local host (without IPv6 brackets), an inference
    server's default port or one of vLLM's routes; a model hub or a media URL vLLM fetches is not."""
    return (
        (host is not None and is_local_host(host))
        or number in SERVING_PORTS
        or (path is not None and _SERVER_ROUTE.match(path) is not None)
    )


def _connect_result(text: str) -> str | None:
    """What a client's connection met, in the words of its library (refused, timeout, unresolved, unreachable)."""
    return next((name for name, words in _CONNECT_RESULTS if words.search(text)), None)


def _unreachable(
    component: str, match: re.Match[str], host: str | None, port: str | None, path: str | None = None
) -> Fields | None:
    """The fields of a client's failed connection, or None when its target is no server of the user's; curl is
    always a person asking a server."""
    host = host.strip("[]") if host else None
    number = to_int(port)
    if not (component == "curl" or _users_server(host, number, path)):
        return None
    return {
        "message": match.group(0),
        "component": component,
        "address": f"{host}:{number}" if host and number else host,
        "url_path": path,
        "connect_result": _connect_result(match.string),
    }


def _addressless(component: str, match: re.Match[str]) -> Fields:
    """A client's failed connection in words that name no address (the OpenAI SDK's, httpx's): what it met only."""
    return {"message": match.group(0), "component": component, "connect_result": _connect_result(match.string)}


def _client_closed(component: str, match: re.Match[str]) -> Fields | None:
    """A proxy's access log saying the client closed the connection before the answer: for vLLM's routes only, with
    how long the request had run where the format says (ingress-nginx's)."""
    if _SERVER_ROUTE.match(match["path"]) is None:
        return None
    ingress = _INGRESS_NGINX_ACCESS.search(match.string)
    seconds = to_float(ingress["seconds"]) if ingress else None
    return {"message": match.group(0), "component": component, "timeout_ms": int(seconds * 1000) if seconds else None}


def _client_timeout(
    component: str, match: re.Match[str], host: str | None = None, port: str | None = None
) -> Fields | None:
    """The fields of a client that gave up waiting for an answer; None when the words name a host that is no
    server of the user's (a model hub vLLM downloads from)."""
    number = to_int(port)
    if host is not None and not _users_server(host.strip("[]"), number):
        return None
    seconds = to_float(match.groupdict().get("seconds"))
    return {
        "message": match.group(0),
        "component": component,
        "address": f"{host}:{number}" if host and number else None,
        "timeout_ms": int(seconds * 1000) if seconds is not None else None,
    }


# Envoy's access log (its default format, and Istio's, which adds the response code's and the connection's details and
# the upstream's transport failure before the bytes): the request line, the status, the response flags, and the
# request's duration in ms. Its flags as what they say of vLLM, as its response bodies do (_ENVOY_REASONS).
_ENVOY_ACCESS = (
    r'"(?:GET|POST|PUT|DELETE|PATCH) (?P<path>/\S*) HTTP/[\d.]+" (?P<status>\d{1,3}) '
    r'(?P<flags>[A-Z]{2,4}(?:,[A-Z]{2,4})*) (?:\S+ \S+ "[^"]*" )?\d+ \d+ (?P<ms>\d+) '
)
_ENVOY_FLAGS = {
    "UF": "refused",
    "UH": "no_endpoints",
    "UO": "overflow",
    "UC": "closed",
    "UR": "closed",
    "UT": "route_timeout",
}
ENVOY_CLIENT_GONE = "DC"  # the downstream (the client) closed the connection before the response ended


def _envoy_flags(match: re.Match[str]) -> list[str]:
    """The response flags of an Envoy access-log line for one of vLLM's routes (none for another route's)."""
    return match["flags"].split(",") if _SERVER_ROUTE.match(match["path"]) else []


def _envoy_upstream(match: re.Match[str]) -> Fields | None:
    """The flag that says what happened between Envoy and vLLM (the first known one), as Envoy's error."""
    reason = next((_ENVOY_FLAGS[f] for f in _envoy_flags(match) if f in _ENVOY_FLAGS), None)
    if reason is None:
        return None
    return {"message": reason, "status": 504 if reason == "route_timeout" else 503, "component": "Envoy"}


_RESPONSE_CODE = re.compile(r'"?response_code"?\s*[:=]\s*"?(?P<status>\d{3})')


def _ext_proc(match: re.Match[str]) -> Fields:
    """Envoy's ext_proc filter failing a request: a message timeout or another error, with the access log's status."""
    status = _RESPONSE_CODE.search(match.string)
    return {
        "message": "ext_proc_timeout" if "timeout" in match["what"] else "ext_proc",
        "status": to_int(status["status"]) if status else None,
        "component": "Envoy",
    }


def _envoy_client_gone(match: re.Match[str]) -> Fields | None:
    """DC: the client closed its connection before the answer ended, after the request's duration."""
    if ENVOY_CLIENT_GONE not in _envoy_flags(match):
        return None
    return {"message": match.group(0), "component": "the client (Envoy's DC)", "timeout_ms": to_int(match["ms"])}


_URL = r"https?://(?P<host>\[[^\]]+\]|[^/:\s)'\"\\]+)(?::(?P<port>\d+))?(?P<path>/[^\s)'\"\\]*)?"


def _scraped_metric(match: re.Match[str]) -> Fields:
    """The family a scraper missed, with the releases that export it and its successor where vLLM's table knows it."""
    name = match["name"]
    family = BY_NAME.get(name)
    # open-ended ("0.32–") when the newest release the table was checked against still exports it
    until = "" if family is None or family.until == NEWEST else version_text(family.until)
    releases = f"{version_text(family.since)}–{until}" if family else None
    return {
        "message": name,
        "component": "the endpoint picker",
        "known_releases": releases,
        "accepted_instead": family.successor if family else None,
    }


PATTERNS: tuple[Pattern, ...] = (
    wording(  # the Gateway API Inference Extension's endpoint picker (and llm-d's scheduler, built on it) scraping a
        # vLLM pod's /metrics for a family it does not expose (its JSON log escapes the quotes:
        # kubernetes-sigs/gateway-api-inference-extension#2900)
        ('metric family \\"vllm:', 'metric family "vllm:'),
        K.SCRAPED_METRIC_MISSING,
        r'metric family \\?"(?P<name>vllm:\w+)\\?" not found',
        _scraped_metric,
    ),
    wording(  # a connection to a "host" that is a media file's name: vLLM fetching an image_url the client built from
        # a local file name (`http://1.jpg`, QwenLM/Qwen3-VL#1084)
        ("Cannot connect to host", "ConnectionPool(host="),
        K.MEDIA_URL_FILE_NAME,
        r"(?:Cannot connect to host |ConnectionPool\(host=\\?')(?P<host>[\w.-]+\.(?:jpe?g|png|gif|webp|bmp|tiff?|mp4|"
        r"mov|avi|mkv|webm|wav|mp3|flac|ogg|m4a))\b",
        lambda m: {"message": m["host"], "component": "aiohttp" if m.group(0).startswith("Cannot") else "urllib3"},
    ),
    wording(  # curl's own errors for a connection: 6 (could not resolve), 7 (could not connect), 28 (timed out)
        ("curl: (",),
        K.SERVER_UNREACHABLE,
        r"curl: \((?:6|7|28)\) (?:Failed to connect to (?P<host>\S+) port (?P<port>\d+)|Could not resolve host: "
        r"(?P<rhost>\S+)|Connection timed out|Couldn't connect to server|Connection refused).*",
        lambda m: _unreachable("curl", m, m["host"] or m["rhost"], m["port"]),
    ),
    wording(  # urllib3 (requests): the pool gave up on a connection it could not make
        ("ConnectionPool(host=",),
        K.SERVER_UNREACHABLE,
        r"HTTPS?ConnectionPool\(host='(?P<host>[^']+)', port=(?P<port>\d+)\): Max retries exceeded with url: "
        r"(?P<path>\S+) \(Caused by (?:NewConnectionError|ConnectTimeoutError|NameResolutionError).*",
        lambda m: _unreachable("urllib3", m, m["host"], m["port"], m["path"]),
    ),
    wording(  # aiohttp
        ("Cannot connect to host",),
        K.SERVER_UNREACHABLE,
        r"Cannot connect to host (?P<host>\[[^\]]+\]|[^\s:]+):(?P<port>\d+) ssl:\S+ \[.*",
        lambda m: _unreachable("aiohttp", m, m["host"], m["port"]),
    ),
    wording(  # Node.js (an OpenAI SDK for JavaScript, a UI behind it)
        ("ECONNREFUSED", "ETIMEDOUT", "ENOTFOUND"),
        K.SERVER_UNREACHABLE,
        r"(?:connect (?:ECONNREFUSED|ETIMEDOUT) (?P<host>\[[^\]]+\]|[\d.]+):(?P<port>\d+)"
        r"|getaddrinfo ENOTFOUND (?P<ghost>\S+))",
        lambda m: _unreachable("Node.js", m, m["host"] or m["ghost"], m["port"]),
    ),
    wording(  # Go's net package (a gateway, Prometheus' scrape, a Go client); a kubelet probe's line stays its own.
        # `dial tcp: lookup NAME on DNS:53: no such host` names the server's name, not its port (53 is the resolver's)
        ("dial tcp",),
        K.SERVER_UNREACHABLE,
        r"^(?!.*probe failed).*?(?:(?:Get|Post) \\?\"?" + _URL + r"\\?\"?: )?dial tcp"
        r"(?: (?P<dhost>\[[^\]]+\]|[^\s:]+):(?P<dport>\d+)|: lookup (?P<lhost>[^\s:]+)| ).*",
        lambda m: _unreachable("Go", m, m["dhost"] or m["host"] or m["lhost"], m["dport"] or m["port"], m["path"]),
    ),
    wording(  # the OpenAI SDK (Python's, Node's): a connection that failed, naming no address; frameworks reword its
        # class and keep its message (LiteLLM's `…common_utils.OpenAIError: Connection error.`, an agent's `OpenAI API
        # error: Connection error.`)
        ("APIConnectionError", "OpenAIError: Connection error", "OpenAI API error: Connection error"),
        K.SERVER_UNREACHABLE,
        r"(?:openai\.)?APIConnectionError: Connection error\.?|(?:\b[\w.]*OpenAIError|OpenAI API error): Connection "
        r"error\.?",
        lambda m: _addressless(OPENAI_SDK, m),
    ),
    wording(  # HTTP met something that does not speak it: uvicorn (vLLM's server) got no HTTP request; a client got no
        # HTTP answer (curl's, h11's words)
        ("Invalid HTTP request received", "Received HTTP/0.9 when not allowed", "illegal status line"),
        K.PROTOCOL_MISMATCH,
        r"(?P<server>Invalid HTTP request received\.?)|(?P<curl>Received HTTP/0\.9 when not allowed)"
        r"|(?P<h11>illegal status line)",
        lambda m: {
            "message": m.group(0),
            "component": NOT_HTTP_AT_SERVER if m["server"] else "curl" if m["curl"] else "httpx (h11)",
        },
    ),
    wording(  # urllib3's own exception, pasted without the pool's line that names the address (opea-project/
        # GenAIExamples#1739: `urllib3.exceptions.NewConnectionError: <urllib3.connection.HTTPConnection object at
        # 0x…>: Failed to establish a new connection: [Errno 111] Connection refused`)
        ("Failed to establish a new connection",),
        K.SERVER_UNREACHABLE,
        r"NewConnectionError: <urllib3\.connection\.HTTPS?Connection object at 0x[0-9a-f]+>: Failed to establish a "
        r"new connection: \[Errno -?\d+\] .+",
        lambda m: _addressless("urllib3 (requests)", m),
    ),
    wording(  # LiteLLM's words for the same (its provider's exception wrapped: OpenAIException, Hosted_vllmException)
        ("Exception - Connection error",),
        K.SERVER_UNREACHABLE,
        r"litellm\.(?:exceptions\.)?\w+: (?:\w+: )?\w+Exception - Connection error\.?",
        lambda m: _addressless("LiteLLM", m),
    ),
    wording(  # httpx, the OpenAI SDK's transport, in the cause it chains: what the connection met
        ("ConnectError",),
        K.SERVER_UNREACHABLE,
        # the second alternative: httpx's own words, pasted without the module
        r"(?:httpx|httpcore)\.ConnectError: .+|\bConnectError: All connection attempts failed",
        lambda m: _addressless("httpx", m),
    ),
    wording(  # the server closed the connection without answering, in each client's words
        (
            "Empty reply from server",
            "Recv failure: Connection reset",
            "Remote end closed connection",
            "Server disconnected",
            "ServerDisconnected",
            "Connection closed before headers received",
        ),
        K.SERVER_DISCONNECTED,
        r"(?P<curl>curl: \(52\) Empty reply from server|curl: \(56\) Recv failure: Connection reset by peer)"
        r"|(?P<requests>Remote end closed connection without response)"
        # an asyncio HTTP client's words for the same (mlcommons/endpoints#381 against vLLM's image under podman)
        r"|(?P<asyncio_client>Connection closed before headers received)"
        r"|(?P<httpx>Server disconnected without sending a response)|(?P<aiohttp>ServerDisconnectedError)",
        lambda m: {
            "message": m.group(0),
            "component": {"requests": "requests (http.client)", "asyncio_client": "the client"}.get(
                m.lastgroup or "", m.lastgroup
            ),
        },
    ),
    wording(  # … or after it began: a streamed (chunked) answer cut before its end, in each client's words (h11 via
        # httpx, aiohttp, urllib3 via requests)
        (
            "incomplete chunked read",
            "peer closed connection without sending complete message body",
            "Response payload is not completed",
            "InvalidChunkLength",
            "outstanding read data",
            "TransferEncodingError",
            "Response ended prematurely",
            "Connection broken: IncompleteRead",
        ),
        K.SERVER_DISCONNECTED,
        # (httpx names the read it was in, or not: modelplaneai/modelplane PR #174 pasted it without, an Envoy gateway's
        # 15 s default request timeout cutting a stream)
        r"(?P<httpx>peer closed connection without sending complete message body(?: \(incomplete chunked read\))?)"
        r"|(?P<curl>curl: \(18\) transfer closed with outstanding read data remaining)"
        r"|(?P<aiohttp>Response payload is not completed)"
        # aiohttp's parser on a chunked body cut off (vllm#6885: benchmark_serving.py while the server failed the
        # request mid-stream)
        r"|(?P<aiohttp_chunks>aiohttp\.http_exceptions\.TransferEncodingError: 400, message:)"
        # urllib3 2's words for a body cut short (`ChunkedEncodingError: Response ended prematurely`,
        # Infobellit-Solutions-Pvt-Ltd/EchoSwift#1 against vLLM on OpenShift), and urllib3 1's
        r"|(?P<requests>Connection broken: InvalidChunkLength|Response ended prematurely"
        r"|Connection broken: IncompleteRead)",
        lambda m: {
            "message": m.group(0),
            "component": {"requests": "requests (urllib3)", "aiohttp_chunks": "aiohttp"}.get(
                m.lastgroup or "", m.lastgroup
            ),
            "connect_result": CUT_MID_ANSWER,
        },
    ),
    wording(  # Envoy's access log: the client hung up before the answer ended (DC), after the request's duration
        (" DC ",),
        K.CLIENT_TIMEOUT,
        _ENVOY_ACCESS,
        _envoy_client_gone,
    ),
    wording(  # nginx's access log: 499, its own status for a client that closed the connection before the answer
        ('" 499 ',),
        K.CLIENT_TIMEOUT,
        r'"(?:GET|POST) (?P<path>/\S*) HTTP/[\d.]+" 499 ',
        lambda m: _client_closed("nginx (499)", m),
    ),
    wording(  # curl's --max-time (-m) reached: the connection was made and the answer did not come in time
        ("Operation timed out after",),
        K.CLIENT_TIMEOUT,
        r"curl: \(28\) Operation timed out after (?P<ms>\d+) milliseconds with \d+ (?:out of -?\d+ )?bytes received",
        lambda m: {"message": m.group(0), "component": "curl", "timeout_ms": to_int(m["ms"])},
    ),
    wording(  # LiteLLM's request timeout (600 s by default), in its older and newer words
        ("litellm.Timeout",),
        K.CLIENT_TIMEOUT,
        r"litellm\.Timeout: Connection timed out"
        r"(?: after (?P<seconds>[\d.]+) seconds|\. Timeout passed=(?P<passed>[\d.]+))",
        lambda m: {
            "message": m.group(0),
            "component": "LiteLLM",
            "timeout_ms": int(float(m["seconds"] or m["passed"]) * 1000),
        },
    ),
    wording(  # the OpenAI SDK gave up waiting (its timeout, 600 s by default, after two retries)
        ("APITimeoutError",),
        K.CLIENT_TIMEOUT,
        r"(?:openai\.)?APITimeoutError: Request timed out\.?",
        lambda m: _client_timeout(OPENAI_SDK, m),
    ),
    wording(  # httpx, the OpenAI SDK's transport: the read that timed out
        ("ReadTimeout",),
        K.CLIENT_TIMEOUT,
        r"(?:httpx|httpcore)\.ReadTimeout\b.*",
        lambda m: _client_timeout("httpx", m),
    ),
    wording(  # urllib3 (requests): where, and its read timeout
        ("Read timed out",),
        K.CLIENT_TIMEOUT,
        r"HTTPS?ConnectionPool\(host='(?P<host>[^']+)', port=(?P<port>\d+)\): Read timed out\."
        r"(?: \(read timeout=(?P<seconds>[\d.]+)\))?",
        lambda m: _client_timeout("urllib3", m, m["host"], m["port"]),
    ),
    wording(  # Rust's reqwest (the Codex CLI): where, not why
        ("error sending request for url",),
        K.SERVER_UNREACHABLE,
        r"error sending request for url \(" + _URL + r"\)",
        lambda m: _unreachable("reqwest", m, m["host"], m["port"], m["path"]),
    ),
    wording(  # Envoy's access log (Istio's sidecars and gateways) for one of vLLM's routes: its response flags
        ('" 503 U', '" 504 UT', '" 502 U', '" 0 U'),
        K.GATEWAY_ERROR,
        _ENVOY_ACCESS,
        _envoy_upstream,
    ),
    wording(  # a client's or proxy's words for a gateway status: "Error: 502", "Error code: 504", "502 Bad Gateway",
        # and a proxy's refusal of a body too large for it ("413 Request Entity Too Large": vLLM answers no 413)
        ("502", "504", "413", "429"),
        K.GATEWAY_ERROR,
        r"(?i)(?:\b(?:error|status|status code|code|returned|http/\d(?:\.\d)?)\W{0,3}(?P<status>502|504|413|429)\b"
        r"|\b(?P<status2>502|504)\s+(?:bad gateway|gateway time-?out)"
        r"|\b(?P<status3>413)\s+(?:request entity too large|payload too large|content too large)"
        r"|\b(?P<status4>429)\s+too many requests)",
        _gateway_status,
    ),
    wording(  # Envoy failing a request in its external processing filter (ext_proc: how AIBrix's gateway plugin and
        # the Gateway API Inference Extension's endpoint picker choose the vLLM pod), in its access log's response
        # code details (vllm-project/aibrix#916: `"response_code":"504", …
        # "response_code_details":"ext_proc_error_per-message_timeout_exceeded"`)
        ("ext_proc_error",),
        K.GATEWAY_ERROR,
        r"ext_proc_error_(?P<what>[\w-]+)",
        _ext_proc,
    ),
    wording(  # Envoy's own response bodies (Istio's sidecars and gateways, Envoy Gateway, Emissary, Contour, KServe's
        # Knative ingress): a 503 when it could not get an answer from its upstream, a 504 for its route's timeout
        ("upstream connect error", "no healthy upstream", "upstream request timeout"),
        K.GATEWAY_ERROR,
        r"upstream connect error or disconnect/reset before headers\.(?: retried and the latest)? reset reason: "
        r"(?P<reason>[a-z ]+)|(?P<none>no healthy upstream)|(?P<timeout>upstream request timeout)"
        # the words quoted without their reset reason (vllm-project/aibrix#1103)
        r"|(?P<bare>upstream connect error or disconnect/reset before headers)",
        _envoy,
    ),
    wording(  # nginx's error log giving up on its upstream (nginx, ingress-nginx, OpenResty-based gateways): a 504
        ("upstream timed out",),
        K.GATEWAY_ERROR,
        r"upstream timed out \(\d+: [^)]*\) while [a-z ]*upstream",
        lambda m: {"message": m.group(0), "status": 504, "component": "nginx"},
    ),
    wording(  # nginx's error log for the 502s it answers: nothing listening, closed or reset before the response's
        # header, or every server of the upstream group marked failed
        ("while connecting to upstream", "while reading response header from upstream"),
        K.GATEWAY_ERROR,
        r"(?P<refused>connect\(\) (?:to \S+ )?failed \(111: Connection refused\) while connecting to upstream)"
        r"|(?P<no_endpoints>no live upstreams while connecting to upstream)"
        r"|(?P<closed>(?:upstream prematurely closed connection|recv\(\) failed \(104: Connection reset by peer\)) "
        r"while reading response header from upstream)",
        lambda m: {"message": m.lastgroup, "status": 502, "component": "nginx"},
    ),
    wording(  # requests' raise_for_status() on a 500 (`500 Server Error: Internal Server Error for url: …`): the
        # server was reached and failed the request, whatever its address (read before the address itself)
        ("500 Server Error",),
        K.SERVER_ERROR_RESPONSE,
        r"500 Server Error: Internal Server Error for url: \S+?://[^/\s]+(?P<path>/[^\s?]*)",
        lambda m: {"message": m["path"], "component": "client"},
    ),
    wording(  # what a client called; a server's own "… running on http://0.0.0.0:8000" is where it listens
        ("://localhost", "://127.0.0.1", "://0.0.0.0"),
        K.LOCAL_ENDPOINT,
        r"(?<! on )https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d+)?[^\s'\"]*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # aiohttp refusing a URL with no scheme: a proxy variable written as host:port
        ("InvalidURL",),
        K.PROXY_URL_INVALID,
        r"InvalidURL: (?P<url>(?![A-Za-z][\w+.-]*://)[\w.-]+:\d+)\s*$",
        lambda m: {"message": m["url"]},
    ),
    _access_line(404, K.ROUTE_NOT_FOUND),  # a path with no route
    wording(  # httpx's raise_for_status() on it: `Client error '404 Not Found' for url 'http://host:8000/v1/…'`
        ("404 Not Found' for url",),
        K.ROUTE_NOT_FOUND,
        r"Client error '404 Not Found' for url '(?:[a-z]+://[^/']+)?(?P<path>/[^'?]*)",
        lambda m: {"message": m["path"]},
    ),
    wording(  # a client's words for it: FastAPI's body for a path with no route, `{'detail': 'Not Found'}`
        ("Not Found",),
        K.ROUTE_NOT_FOUND,
        r"""['"]detail['"]:\s*['"]Not Found['"]""",
        lambda m: {"status": 404},
    ),
    _access_line(401, K.UNAUTHORIZED),  # a request without the server's API key
    wording(  # vLLM's own 401 body (its --api-key middleware answers exactly this, read whole or as the body's
        # message once the reader unwrapped it), or the OpenAI SDK's words for it
        ("Unauthorized", "AuthenticationError"),
        K.UNAUTHORIZED,
        r"""['"]error['"]:\s*['"]Unauthorized['"]|^Unauthorized$|(?P<sdk>(?:openai\.)?AuthenticationError): Error """
        r"code: 401\b",
        lambda m: {"message": m.group(0), "component": OPENAI_SDK if m["sdk"] else None},
    ),
    _access_line(405, K.METHOD_NOT_ALLOWED),  # a route asked with a method it does not take
    wording(  # a client's words for it: `openai.APIStatusError: Error code: 405 - {'detail': 'Method Not Allowed'}`
        ("405", "Method Not Allowed"),
        K.METHOD_NOT_ALLOWED,
        r"(?i)\b(?:error code|status code|status|http)\W{0,3}405\b.*|\b405\s+method not allowed.*"
        r"|['\"]detail['\"]:\s*['\"]Method Not Allowed['\"]",
        lambda m: {"status": 405},
    ),
    _access_line(500, K.SERVER_ERROR_RESPONSE),  # a request the server itself failed
    wording(  # uvicorn's error log for the same, before the traceback it prints (uvicorn/protocols/http/*.py)
        ("Exception in ASGI application",),
        K.SERVER_ERROR_RESPONSE,
        r"Exception in ASGI application",
        lambda m: {"component": "uvicorn"},
    ),
    wording(  # a client's words for it: `Exception: API request failed with status 500: Internal Server Error`
        # (rllm's router, rllm-org/rllm#217), `Error code: 500 - … Internal Server Error`; the status line
        # `HTTP/1.1 500 Internal Server Error`; the body alone, the plain text Starlette answers for an exception no
        # handler turned into vLLM's JSON error (starlette/middleware/errors.py), whole or after the SDK's class
        ("Internal Server Error", "500 status code (no body)"),
        K.SERVER_ERROR_RESPONSE,
        r"(?i)\b(?:error code|status code|status|http(?:/\d(?:\.\d)?)?)\W{0,3}500\b.{0,20}internal server error"
        r"|^(?:(?:openai\.)?InternalServerError:\s*)?Internal Server Error\s*$"
        # an agent's own words for the SDK's error (`OpenAI API error: Internal Server Error`, FoundationAgents/
        # OpenManus#827), and the OpenAI Node SDK's for a 500 whose body it did not get (`500 status code (no body)`)
        r"|\bAPI error:\s*Internal Server Error\s*$|\b500 status code \(no body\)",
        lambda m: {"component": "client"},
    ),
    wording(  # vLLM's JSON error with an empty message: an exception whose text was empty (vllm#57725: a malformed
        # structured-output specification answered so), its type naming the status
        ("InternalServerError", "Internal Server Error"),
        K.SERVER_ERROR_RESPONSE,
        _EMPTY_BODY.format(type="Internal ?Server ?Error"),
        lambda m: {"component": "empty error body"},
    ),
    _access_line(400, K.BAD_REQUEST_RESPONSE),  # a request the server refused as invalid
    wording(  # the same for a refusal: a 400 body whose message is empty (microsoft/autogen#5965)
        ("BadRequestError",),
        K.BAD_REQUEST_RESPONSE,
        _EMPTY_BODY.format(type="BadRequestError"),
        lambda m: {"component": "empty error body"},
    ),
    wording(  # the OpenAI Node SDK's words for a 400 whose body it did not get (APIError.makeMessage): cline#396
        ("400 status code (no body)",),
        K.BAD_REQUEST_RESPONSE,
        r"\b400 status code \(no body\)",
        lambda m: {"component": "client"},
    ),
    wording(
        (
            "health check response",
            "Liveness probe failed",
            "Readiness probe failed",
            "Startup probe failed",
            "probe, will be restarted",
            "initializing for too long",
            "dependency failed to start: container",
        ),
        K.HEALTH_CHECK_FAILED,
        r"Didn't receive health check response for replica .*? after (?P<seconds>[\d.]+)s.*"
        # Docker Compose refusing a service whose dependency's healthcheck never passed (zeenolife/ai-baby-monitor#4)
        r"|dependency failed to start: container (?P<unhealthy>\S+) is unhealthy"
        # Modal's limit on a container's start (its runner's words): a deadline on the whole start, not a probe
        r"|Runner has been initializing for too long: (?P<start_limit>[\d.]+) seconds"
        r"|(?P<probe>Liveness|Readiness|Startup) probe failed:?\s*(?P<reason>.*)"
        # the kubelet's Killing event: the probe gave up and the container is killed (its reason is in another event)
        r"|Container \S+ failed (?P<killed>liveness|startup) probe, will be restarted",
        _health_check,
    ),
    wording(  # a container's last exit code, as `kubectl describe pod` prints it under `Last State: Terminated`
        ("Exit Code:",),
        K.CONTAINER_EXIT_CODE,
        r"^\s*Exit Code:\s+(?P<code>\d+)\s*$",
        lambda m: {"exit_code": int(m["code"])},
    ),
    wording(  # a probe's settings, as `kubectl describe pod` prints them under the container
        ("delay=",),
        K.PROBE_SETTINGS,
        r"^\s*(?P<probe>Liveness|Readiness|Startup):\s+(?P<how>.*?)\s+delay=(?P<delay>\d+)s\s+timeout=(?P<timeout>\d+)s"
        r"\s+period=(?P<period>\d+)s\s+#success=\d+\s+#failure=(?P<failures>\d+)",
        lambda m: {
            "message": m["how"],
            "probe": m["probe"].lower(),
            "timeout_ms": int(m["timeout"]) * 1000,
            "probe_delay_s": float(m["delay"]),
            "probe_period_s": float(m["period"]),
            "probe_failures": int(m["failures"]),
        },
    ),
)
