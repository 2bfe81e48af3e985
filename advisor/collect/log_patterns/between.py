"""What stands between a client and vLLM, in its own words: a gateway's 502 or 504 (vLLM's server answers
neither), the local address the client called, an HTTP proxy variable aiohttp cannot read, and an orchestrator's
health check giving up on the server; and from the server's access log, a path it has no route for (404, also in
a client's words), a route asked with a method it does not take (405, also in a client's words), and a request it
failed (500).

Why read: these failures look like vLLM's, and the text a person pastes from their client, proxy or orchestrator
says they are not (microsoft/VibeVoice#248, vllm#16918, ray#54070).
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Fields, Pattern, to_float, wording
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
    seconds = to_float(match["seconds"])
    reason = match["reason"] or ""
    found = next(((name, m) for name, pattern in _PROBE_RESULTS if (m := pattern.search(reason))), None)
    return {
        "message": match.group(0),
        "component": "Ray Serve" if match["seconds"] else "Kubernetes",
        "timeout_ms": int(seconds * 1000) if seconds is not None else None,
        "probe": match["probe"].lower() if match["probe"] else None,
        "probe_result": "timeout" if match["seconds"] else (found[0] if found else None),
        "status": int(found[1]["status"]) if found and found[0] == "status" else None,
    }


def _access_line(status: int, kind: K) -> Pattern:
    """uvicorn's access log line (vLLM's API server) answering `status`: its path and method."""
    return wording(
        (f'" {status}',),
        kind,
        rf'"(?P<method>GET|POST|PUT|PATCH|DELETE) (?P<path>/[^\s?"]*)[^"\s]* HTTP/[\d.]+" {status}\b',
        lambda m: {"message": m["path"], "component": m["method"]},
    )


# ingress-nginx's access log (its default log format): after the status, the body's bytes, referer, user agent and
# request length, the request's time in seconds and the upstream's name in brackets.
_INGRESS_NGINX_ACCESS = re.compile(r'" \d{3} \d+ "[^"]*" "[^"]*" \d+ (?P<seconds>[\d.]+) \[[^\]]*\] \[')


def _gateway_status(match: re.Match[str]) -> Fields:
    """The status, and the gateway the line's format names with how long the request ran there, when it does."""
    fields: Fields = {"message": match.group(0), "status": int(match["status"] or match["status2"])}
    ingress = _INGRESS_NGINX_ACCESS.search(match.string)
    if ingress:
        seconds = to_float(ingress["seconds"])
        fields |= {"component": "ingress-nginx", "timeout_ms": int(seconds * 1000) if seconds is not None else None}
    return fields


PATTERNS: tuple[Pattern, ...] = (
    wording(  # a client's or proxy's words for a gateway status: "Error: 502", "Error code: 504", "502 Bad Gateway"
        ("502", "504"),
        K.GATEWAY_ERROR,
        r"(?i)(?:\b(?:error|status|status code|code|returned|http/\d(?:\.\d)?)\W{0,3}(?P<status>502|504)\b"
        r"|\b(?P<status2>502|504)\s+(?:bad gateway|gateway time-?out))",
        _gateway_status,
    ),
    wording(  # nginx's error log giving up on its upstream (nginx, ingress-nginx, OpenResty-based gateways): a 504
        ("upstream timed out",),
        K.GATEWAY_ERROR,
        r"upstream timed out \(\d+: [^)]*\) while [a-z ]*upstream",
        lambda m: {"message": m.group(0), "status": 504, "component": "nginx"},
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
    wording(  # a client's words for it: FastAPI's body for a path with no route, `{'detail': 'Not Found'}`
        ("Not Found",),
        K.ROUTE_NOT_FOUND,
        r"""['"]detail['"]:\s*['"]Not Found['"]""",
        lambda m: {"status": 404},
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
    wording(
        ("health check response", "Liveness probe failed", "Readiness probe failed", "Startup probe failed"),
        K.HEALTH_CHECK_FAILED,
        r"Didn't receive health check response for replica .*? after (?P<seconds>[\d.]+)s.*"
        r"|(?P<probe>Liveness|Readiness|Startup) probe failed:?\s*(?P<reason>.*)",
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
