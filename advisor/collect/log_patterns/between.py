"""What stands between a client and vLLM, in its own words: a gateway's 502 or 504 (vLLM's server answers
neither), the local address the client called, an HTTP proxy variable aiohttp cannot read, and an orchestrator's
health check giving up on the server; and from the server's access log, a path it has no route for (404), a
route asked with a method it does not take (405, also in a client's words), and a request it failed (500).

Why read: these failures look like vLLM's, and the text a person pastes from their client, proxy or orchestrator
says they are not (microsoft/VibeVoice#248, vllm#16918, ray#54070).
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Fields, Pattern, to_float, wording
from rules.events import LogEventKind as K


def _health_check(match: re.Match[str]) -> Fields:
    seconds = to_float(match["seconds"])
    return {
        "message": match.group(0),
        "component": "Ray Serve" if match["seconds"] else "Kubernetes",
        "timeout_ms": int(seconds * 1000) if seconds is not None else None,
    }


def _access_line(status: int, kind: K) -> Pattern:
    """uvicorn's access log line (vLLM's API server) answering `status`: its path and method."""
    return wording(
        (f'" {status}',),
        kind,
        rf'"(?P<method>GET|POST|PUT|PATCH|DELETE) (?P<path>/[^\s?"]*)[^"\s]* HTTP/[\d.]+" {status}\b',
        lambda m: {"message": m["path"], "component": m["method"]},
    )


PATTERNS: tuple[Pattern, ...] = (
    wording(  # a client's or proxy's words for a gateway status: "Error: 502", "Error code: 504", "502 Bad Gateway"
        ("502", "504"),
        K.GATEWAY_ERROR,
        r"(?i)(?:\b(?:error|status|status code|code|returned|http/\d(?:\.\d)?)\W{0,3}(?P<status>502|504)\b"
        r"|\b(?P<status2>502|504)\s+(?:bad gateway|gateway time-?out))",
        lambda m: {"message": m.group(0), "status": int(m["status"] or m["status2"])},
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
        ("health check response", "Liveness probe failed", "Readiness probe failed"),
        K.HEALTH_CHECK_FAILED,
        r"Didn't receive health check response for replica .*? after (?P<seconds>[\d.]+)s.*"
        r"|(?:Liveness|Readiness) probe failed.*",
        _health_check,
    ),
)
