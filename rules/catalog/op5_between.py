"""OP-5.25 to OP-5.27: what stands between the client and vLLM — a gateway's 502, 504, 413 or 429, a proxy variable
written without its scheme, an orchestrator's health check restarting a server that is only busy.

Why a family of their own: each looks like vLLM failing and is settled outside it, and the text says so. vLLM's
OpenAI server answers no 502, no 504, no 413 and no 429 (its entrypoints of 0.32 use none of them), so one of them
came from a proxy or gateway (a 413: its body limit, nginx's client_max_body_size of 1 MB by default; a 429: a rate
limiter's); vLLM fetches
request media with an aiohttp session that reads the proxy variables (`trust_env=True`, vllm/connections.py), and
aiohttp refuses a proxy written as host:port; Ray Serve restarts
a replica whose health check does not answer in time, which a server with hundreds of prompts queued may not,
and Kubernetes kills one whose liveness probe is refused while it is still loading (vLLM listens only once
its engine is ready).
Envoy (Istio's sidecars and gateways, KServe's ingress) answers in words of its own, and its reset reason says what
happened: nothing listening, vLLM closing the connection (a restart, or an idle connection vLLM's 5 s keep-alive had
closed and Envoy reused: istio/istio#55138, envoyproxy/envoy#14981), its own circuit breaker, no ready endpoint, or
its route's timeout.
Sources: microsoft/VibeVoice#248, vllm#16918, ray-project/ray#54070.
"""

from __future__ import annotations

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

BUSY_WAITING = 1  # requests waiting in a stats line beside the failed health check: the engine was busy
# A container's exit codes when it was stopped rather than failing: done (0), SIGKILL (137: the kubelet after a failed
# liveness probe's grace period, or the OOM killer), SIGTERM (143: the kubelet's stop).
STOPPED_EXIT_CODES = (0, 137, 143)


# --- OP-5.25 a gateway answered ------------------------------------------------------------------------


def _check_gateway(facts: Facts) -> list[Finding]:
    errors = facts.events_of(LogEventKind.GATEWAY_ERROR)
    if not errors:
        return []
    local = facts.events_of(LogEventKind.LOCAL_ENDPOINT)
    if local:
        return [_local_proxy_finding(errors[0], local[0])]
    envoy = next((e for e in errors if e.component == "Envoy"), None)
    if envoy is not None:
        return [_envoy_finding(envoy)]
    nginx = next((e for e in errors if e.component == "nginx" and e.message in _NGINX), None)
    if nginx is not None:
        return [_nginx_finding(nginx)]
    # the most specific gateway a line names: ingress-nginx's access log says more than nginx's error line
    named = sorted((e for e in errors if e.component), key=lambda e: (e.component != "ingress-nginx", e.line_no or 0))
    return [_gateway_finding(errors[0], named[0] if named else None)]


def _status(error: LogEvent) -> int:
    return error.status or 502


# What each status says of the gateway's upstream (vLLM): the title's words, what it means, the first action.
_GATEWAY_STATUS: dict[int, tuple[str, str, str]] = {
    502: (
        "it got no valid answer (vLLM down, restarting or refusing)",
        "A 502 means the gateway's upstream closed or refused the connection: vLLM not started yet, restarting "
        "after a crash, or its port not the one the gateway targets.",
        "Read vLLM's own log at that time: a restart or an engine death is there, or the request never reached "
        "it (the gateway's upstream address and port).",
    ),
    413: (
        "the request's body is larger than the proxy accepts",
        "A 413 means a proxy in front refused the request's body as too large before vLLM saw it: nginx accepts 1 MB "
        "by default (client_max_body_size), and ingress-nginx the same (its proxy-body-size); a prompt with images "
        "inline as base64 data URLs, or a long context, passes that easily.",
        "Raise the body limit of the proxy in front of vLLM: nginx's client_max_body_size, or the Ingress annotation "
        'nginx.ingress.kubernetes.io/proxy-body-size (e.g. "50m"); or send images by URL rather than inline, so the '
        "request stays small.",
    ),
    429: (
        "a rate limit in front of it refused the request",
        "A 429 means a rate limiter between the client and vLLM refused the request before vLLM saw it: an API "
        "gateway's or an ingress's limit (Kong, APISIX, nginx's limit_req, Envoy's rate limit), or a proxy's per-key "
        "budget (LiteLLM's). vLLM itself queues requests rather than refusing them for load.",
        "Find the limiter: its response headers (Retry-After, X-RateLimit-*) and the gateways between the client and "
        "vLLM; raise its limit to what the replicas serve, or have the client back off and retry (the OpenAI SDK "
        "retries a 429 twice by default).",
    ),
    504: (
        "vLLM answered late",
        "A 504 means vLLM did not answer within the gateway's timeout: a long generation, or a queue.",
        "Raise the gateway's read timeout above the longest generation (stream the response to keep the "
        "connection busy), or lower the queue (fewer concurrent requests per replica, more replicas).",
    ),
}


def _local_proxy_finding(error: LogEvent, local: LogEvent) -> Finding:
    status = _status(error)
    return RULE_GATEWAY.finding(
        Severity.HIGH,
        f"HTTP {status} for a server on this host: a proxy answered, not vLLM (http_proxy / https_proxy in the "
        "client's environment)",
        summary=f"vLLM's server never answers {status}; a request to {local.message} that gets one went through "
        "an HTTP proxy, which most clients (requests, httpx, the openai SDK, curl) take from http_proxy / "
        "https_proxy, and the proxy cannot reach the client's own localhost.",
        evidence=[
            c.log_evidence(error, name="gateway status", value=status),
            c.log_evidence(local, name="local server the client called"),
        ],
        actions=[
            "Unset http_proxy and https_proxy (and HTTP_PROXY, HTTPS_PROXY) in the client's environment, or add "
            "the server's host to no_proxy / NO_PROXY (localhost,127.0.0.1).",
        ],
        confidence=0.85,
    )


# Where each gateway whose log format triage knows sets its timeout towards vLLM (all default to 60 s).
_GATEWAY_TIMEOUTS: dict[str, str] = {
    "ingress-nginx": "Raise ingress-nginx's timeouts on the Ingress in front of vLLM: the annotations "
    'nginx.ingress.kubernetes.io/proxy-read-timeout and proxy-send-timeout (seconds, e.g. "300"; default 60) above '
    "the longest request (a long generation on a slow device takes minutes), or stream the response to keep the "
    "connection busy.",
    "nginx": "Raise nginx's proxy_read_timeout (and proxy_send_timeout; default 60s) in the location that proxies to "
    "vLLM above the longest request (a long generation on a slow device takes minutes), or stream the response to "
    "keep the connection busy.",
}
_CHAINED_GATEWAYS = (
    "Raise the timeout of every gateway between the client and vLLM, not only the first: an API gateway behind the "
    "ingress (APISIX, Kong) times its upstream out at 60 s by default too."
)


def _gateway_finding(error: LogEvent, named: LogEvent | None = None) -> Finding:
    status = _status(error)
    verdict, meaning, first_action = _GATEWAY_STATUS[status]
    gateway = named.component if named is not None and status == 504 else None
    actions = [first_action]
    if gateway in _GATEWAY_TIMEOUTS:
        waited = f" after {named.timeout_ms / 1000:.0f} s" if named.timeout_ms else ""
        verdict = f"vLLM did not answer within {gateway}'s timeout{waited}"
        actions = [
            _GATEWAY_TIMEOUTS[gateway],
            _CHAINED_GATEWAYS,
            "Or lower the queue (fewer concurrent requests per replica, more replicas) so requests finish sooner.",
        ]
    return RULE_GATEWAY.finding(
        Severity.HIGH,
        f"HTTP {status} from {gateway or 'a gateway'} in front of vLLM, not from vLLM: {verdict}",
        summary=f"vLLM's server never answers {status}; the proxy, ingress or load balancer between the client and "
        f"it did. {meaning}",
        evidence=[
            c.log_evidence(error, name="gateway status", value=status),
            *([c.log_evidence(named, name="gateway", value=gateway)] if gateway and named is not error else []),
        ],
        actions=[
            *actions,
            "If the client only meant to reach a server on its own host, a proxy variable (http_proxy, https_proxy) "
            "sent it to a proxy: unset it or add the host to no_proxy.",
        ],
        confidence=0.75 if gateway else 0.6,
    )


_VLLM_LOG = (
    "Read vLLM's log and its pod's state at that time (`kubectl get pods`: restarts, Ready; `kubectl logs "
    "--previous`): a crash, a restart or a start still loading the model is there."
)
# What Envoy's words say happened between it and vLLM: (the title's words, what it means, actions).
_ENVOY: dict[str, tuple[str, str, list[str]]] = {
    "refused": (
        "it could not connect to vLLM (connection failure)",
        "Nothing accepted the connection at vLLM's pod and port: vLLM was not running (starting, or restarting after "
        "a crash), or the Service sends traffic to a port vLLM does not listen on.",
        [
            _VLLM_LOG,
            f"Check the Service's targetPort (and the route's port) against vLLM's --port "
            f"({vllm_defaults.API_SERVER_PORT} by default); a readiness probe on /health keeps traffic from a pod "
            "that does not answer yet.",
        ],
    ),
    "closed": (
        "vLLM closed the connection before answering (connection termination)",
        "Either vLLM's process went away during the request (a crash or a restart: its log says), or, now and then "
        "on a healthy server, Envoy reused an idle connection vLLM had just closed: vLLM closes idle keep-alive "
        f"connections after {vllm_defaults.HTTP_KEEP_ALIVE_S} s (VLLM_HTTP_TIMEOUT_KEEP_ALIVE, uvicorn's "
        "timeout_keep_alive), while Envoy keeps them open far longer (Istio's default idle timeout is an hour).",
        [
            _VLLM_LOG,
            "If vLLM did not restart: make the proxy drop idle connections before vLLM does, an Istio "
            "DestinationRule with trafficPolicy.connectionPool.http.idleTimeout below "
            f"{vllm_defaults.HTTP_KEEP_ALIVE_S}s ({vllm_defaults.HTTP_KEEP_ALIVE_S - 1}s), or raise vLLM's keep-alive "
            "above the proxy's idle timeout (VLLM_HTTP_TIMEOUT_KEEP_ALIVE, seconds, in the server's environment).",
        ],
    ),
    "overflow": (
        "its own circuit breaker refused the request (overflow), not vLLM",
        "Envoy refused the request itself: the connection or pending-request limit of its connection pool was "
        "reached (an Istio DestinationRule's trafficPolicy.connectionPool). vLLM never saw it.",
        [
            "Raise the pool's limits (connectionPool.http.http1MaxPendingRequests, http2MaxRequests, "
            "tcp.maxConnections) to the concurrency vLLM serves, or add replicas behind the route.",
        ],
    ),
    "unreached": (
        "it got no answer from vLLM (the text holds no reset reason)",
        "Envoy found no vLLM pod to take the request or lost the connection before vLLM answered: no pod ready "
        "(still loading its model, restarting), nothing listening on the port the route sends to, or vLLM's process "
        "going away mid-request. Envoy's reset reason, after these words in its full response, says which "
        "(vllm-project/aibrix#1103: no backend pod ready).",
        [
            _VLLM_LOG,
            "See the Service's endpoints and the pods: `kubectl get endpointslices -l "
            "kubernetes.io/service-name=<service>`, `kubectl get pods` (Ready, restarts); check the route's port "
            f"against vLLM's --port ({vllm_defaults.API_SERVER_PORT} by default).",
        ],
    ),
    "no_endpoints": (
        "no vLLM pod was ready to take it (no healthy upstream)",
        "Envoy had no ready endpoint for the route: every vLLM pod was NotReady (still loading its model, failing "
        "its readiness probe) or none was running.",
        [
            "See the Service's endpoints and the pods: `kubectl get endpointslices -l "
            "kubernetes.io/service-name=<service>`, `kubectl get pods` (Ready, restarts); a model takes minutes to "
            "load before /health answers.",
            "During a rollout, keep old pods serving until new ones are Ready (the Deployment's maxUnavailable 0), "
            "and run more than one replica.",
        ],
    ),
    "ext_proc_timeout": (
        "its external processor (the gateway's pod-picking plugin) did not answer in time; vLLM never saw the request",
        "Gateways that choose a vLLM pod per request (AIBrix's gateway plugin, the Gateway API Inference Extension's "
        "endpoint picker under llm-d or kgateway) do it in Envoy's external processing filter; when the processor "
        "does not answer a message within the filter's message timeout, Envoy fails the request itself.",
        [
            "Look at the processor's pods (AIBrix's gateway-plugins, the endpoint picker): restarts, CPU throttling, "
            "and its own log at that time; it reads the vLLM pods' metrics to choose, so a slow metrics scrape under "
            "load delays every request.",
            "Give the processor more CPU or replicas, or raise the filter's message timeout (the ext_proc filter's "
            "message_timeout, in the gateway's Envoy extension policy).",
        ],
    ),
    "ext_proc": (
        "its external processor (the gateway's pod-picking plugin) failed the request; vLLM never saw it",
        "Envoy's external processing filter, through which the gateway chooses a vLLM pod, reported an error of its "
        "own and Envoy answered without forwarding the request.",
        ["Read the processor's log (AIBrix's gateway-plugins, the endpoint picker) at that time."],
    ),
    "route_timeout": (
        "its route's timeout ended the request before vLLM answered (upstream request timeout)",
        "The request outlasted the timeout on the route: Istio's VirtualService `timeout` (off unless set in current "
        "Istio), Envoy's route timeout (15 s where a plain Envoy configuration sets none), or the platform's "
        "(Knative's revision timeoutSeconds under KServe).",
        [
            "Raise the route's timeout above the longest generation (the VirtualService's http[].timeout, the "
            "HTTPRoute's timeouts.request, the InferenceService's or Knative revision's timeout), or stream the "
            "response so the first bytes arrive early.",
            "Or lower the queue (fewer concurrent requests per replica, more replicas) so requests finish sooner.",
        ],
    ),
}


def _envoy_finding(error: LogEvent) -> Finding:
    verdict, meaning, actions = _ENVOY.get(
        error.message or "",
        (f"it got no answer from vLLM (reset reason: {error.message})", "Envoy's upstream failed.", [_VLLM_LOG]),
    )
    status = _status(error)
    return RULE_GATEWAY.finding(
        Severity.HIGH,
        f"HTTP {status} from Envoy in front of vLLM, not from vLLM: {verdict}",
        summary="Envoy (Istio's sidecars and gateways, Envoy Gateway, KServe's ingress) said this itself, in its "
        "response body or its access log's response flag; "
        f"vLLM never words an error so. {meaning}",
        evidence=[c.log_evidence(error, name="Envoy's words", value=error.message)],
        actions=actions,
        confidence=0.75,
    )


# What nginx's error log says of its upstream (vLLM) when it answered 502: (the title's words, what it means, actions).
_NGINX: dict[str, tuple[str, str, list[str]]] = {
    "refused": (
        "nothing listened at vLLM's address (connect() failed: Connection refused)",
        "nginx reached the host but no process accepted the connection on the port its proxy_pass names: vLLM was "
        "not running (still loading its model, which it does before it listens; restarting after a crash), or "
        "listens on another port or address.",
        [
            "Read vLLM's log at that time (`journalctl -u <unit>`, `docker logs <container>`, `kubectl logs --previous "
            "<pod>`): a crash, a restart or a start still loading the model is there.",
            "Check the port in proxy_pass (or the upstream block) against vLLM's --port "
            f"({vllm_defaults.API_SERVER_PORT} by default), and the address against its --host: a server bound to "
            "127.0.0.1 refuses connections from another host or container.",
        ],
    ),
    "closed": (
        "vLLM closed the connection before answering (upstream prematurely closed, or reset by peer)",
        "vLLM's process went away during the request (a crash or a restart: its log says), or, now and then on a "
        "healthy server, nginx reused an idle upstream connection vLLM had just closed: with `keepalive` in the "
        "upstream block nginx keeps connections to vLLM open for 60 s (keepalive_timeout), while vLLM closes idle "
        f"ones after {vllm_defaults.HTTP_KEEP_ALIVE_S} s (VLLM_HTTP_TIMEOUT_KEEP_ALIVE, uvicorn's timeout_keep_alive).",
        [
            "Read vLLM's log at that time: a crash or a restart is there.",
            "If vLLM did not restart and the upstream block has `keepalive`: set the upstream's keepalive_timeout "
            f"below vLLM's ({vllm_defaults.HTTP_KEEP_ALIVE_S - 1}s; nginx 1.15.3 or later), or raise vLLM's keep-alive "
            "above nginx's (VLLM_HTTP_TIMEOUT_KEEP_ALIVE, seconds, in the server's environment).",
        ],
    ),
    "no_endpoints": (
        "every vLLM server of its upstream group was marked failed (no live upstreams)",
        "nginx sent the request nowhere: each server of the upstream block had failed max_fails times (1 by "
        "default) within fail_timeout (10 s), so nginx stopped trying them for that long. The first errors before "
        "this line say why they failed (refused, timed out, closed).",
        [
            "Read nginx's error log before this line: the first failures (connect() refused, upstream timed out) name "
            "what happened to the servers, and vLLM's own log at that time says why.",
            "A timeout counts as a failure too: a long generation that outlasts proxy_read_timeout marks a healthy "
            "server failed; raise proxy_read_timeout above the longest request, or max_fails, so one slow request "
            "does not take a server out.",
        ],
    ),
}


def _nginx_finding(error: LogEvent) -> Finding:
    verdict, meaning, actions = _NGINX[error.message or ""]
    return RULE_GATEWAY.finding(
        Severity.HIGH,
        f"HTTP 502 from nginx in front of vLLM, not from vLLM: {verdict}",
        summary=f"nginx (or ingress-nginx) answered the client 502 Bad Gateway and logged why in its error log; vLLM "
        f"never answers 502. {meaning}",
        evidence=[c.log_evidence(error, name="nginx's words", value=error.message)],
        actions=actions,
        confidence=0.75,
    )


RULE_GATEWAY = Rule(
    code="OP-5.25",
    title="a gateway's 502, 504, 413 or 429, not vLLM's",
    category=Category.RELIABILITY,
    check=_check_gateway,
    needs=("events",),
    page=RulePage(
        checks="A client's or proxy's words for HTTP 502 or 504 (`Error: 502`, `Error code: 504`, `502 Bad "
        "Gateway`), 413 (`413 Request Entity Too Large`: a proxy's body limit) and 429 (`429 Too Many Requests`: a "
        "rate limiter's; not the Hub's or a registry's); with a localhost URL in the same "
        "text, the client's proxy variables. Envoy's own bodies (Istio, "
        "Envoy Gateway, KServe's ingress), and its access log's response flags for one of vLLM's routes (UF, UC, UR, "
        "UH, UO, UT): `upstream connect error or disconnect/reset before headers. reset reason: "
        "…` (503: refused, closed, overflow), `no healthy upstream` (503), `upstream request timeout` (504). nginx's "
        "error log for its 502s: `connect() failed (111: Connection refused) while connecting to upstream`, `upstream "
        "prematurely closed connection` or `recv() failed (104: Connection reset by peer)` `while reading response "
        "header from upstream`, `no live upstreams`. Envoy's `ext_proc_error_…` response details (its external "
        "processing filter, where AIBrix's gateway plugin or an inference gateway's endpoint picker chooses the pod).",
        why="vLLM's OpenAI server answers 400, 404, 500 or 503 but never 502, 504, 413 or 429: those come from "
        "whatever sits in between.",
        example="`Sending request to http://localhost:8000/v1/chat/completions` then `Error: 502`; removing "
        "http_proxy and https_proxy fixed it (microsoft/VibeVoice#248).",
        fix="Local server: unset the proxy variables or set no_proxy. Otherwise: vLLM's log at that time, the "
        "gateway's upstream and timeouts; where the text is ingress-nginx's access log or nginx's `upstream timed "
        "out` line, the timeout setting by name (proxy-read-timeout annotation, proxy_read_timeout; 60 s by "
        "default), and every gateway behind it.",
        limits="A 502 or 504 quoted in prose reads the same as one printed; the gateway's own log says which "
        "upstream failed.",
        references=[
            "https://github.com/microsoft/VibeVoice/issues/248",
            "https://github.com/istio/istio/issues/55138",
            "https://istio.io/latest/docs/reference/config/networking/destination-rule/",
        ],
    ),
)


# --- OP-5.26 a proxy variable without its scheme ----------------------------------------------------------


def _check_proxy_url(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.PROXY_URL_INVALID)
    if not events:
        return []
    address = events[0].message
    return [
        RULE_PROXY_URL.finding(
            Severity.HIGH,
            f"the proxy variable is written as {address}, without http://: the server's media fetch cannot use it",
            summary="vLLM downloads a request's image, audio or video URLs itself, with an aiohttp session that takes "
            "its proxy from the environment (http_proxy / https_proxy, trust_env in vllm/connections.py). aiohttp "
            f"needs the proxy as a URL; {address} has no scheme, so every request with a media URL fails while "
            "requests without one are answered.",
            evidence=[c.log_evidence(events[0], name="proxy address aiohttp refused")],
            actions=[
                f"Write the server's proxy variable as a URL: http_proxy=http://{address} (and https_proxy the same), "
                "then restart vLLM.",
                "Or, if the media hosts need no proxy, add them to no_proxy / NO_PROXY; or unset the proxy for vLLM.",
            ],
            confidence=0.8,
        )
    ]


RULE_PROXY_URL = Rule(
    code="OP-5.26",
    title="a proxy variable written without its scheme breaks the media fetch",
    category=Category.RELIABILITY,
    check=_check_proxy_url,
    needs=("events",),
    page=RulePage(
        checks="aiohttp's `InvalidURL: <host>:<port>` with no scheme in the address.",
        why="vLLM fetches request media through the environment's proxy; aiohttp refuses a proxy that is not a URL.",
        example="`aiohttp.client_exceptions.InvalidURL: 172.25.239.45:33080` for every image request; the reporter "
        "had set up a proxy (vllm#16918).",
        fix="http_proxy=http://host:port; or no_proxy for the media hosts.",
        limits="An image URL itself written without a scheme reads the same; the address looking like a proxy's "
        "(an IP and a port) is what points at the variable.",
        references=["https://github.com/vllm-project/vllm/issues/16918"],
    ),
)


# --- OP-5.27 a health check restarted a busy server, or one still starting ---------------------------------


def _check_health_check(facts: Facts) -> list[Finding]:
    failed = facts.events_of(LogEventKind.HEALTH_CHECK_FAILED)
    if not failed:
        return []
    # the probe's own failure says what it met; the kubelet's Killing event only that it gave up
    check = next((e for e in failed if e.probe_result != "restarted"), failed[0])
    if check.probe_result == "restarted":
        return [_restarted_finding(check)]
    if check.probe_result == "start_deadline":
        return [_start_deadline_finding(check)]
    if check.probe_result == "unhealthy":
        return [_compose_unhealthy_finding(check)]
    if check.probe_result == "refused":
        exits = [e for e in facts.events_of(LogEventKind.CONTAINER_EXIT_CODE) if e.exit_code is not None]
        if exits and exits[-1].exit_code not in STOPPED_EXIT_CODES:
            return [_exited_finding(check, exits[-1])]
        settings = {e.probe: e for e in facts.events_of(LogEventKind.PROBE_SETTINGS)}
        return [_not_listening_finding(check, settings.get("startup") or settings.get(check.probe))]
    if check.probe_result == "status" and (check.status or 0) >= 500:
        return [_unhealthy_answer_finding(check)]
    busy = [e for e in c.stats_lines(facts) if (e.waiting or 0) >= BUSY_WAITING]
    return [_health_check_finding(check, busy[-1] if busy else None)]


def _probe_name(check: LogEvent) -> str:
    return f"Kubernetes' {check.probe} probe" if check.probe else "Kubernetes' probe"


def _restarts(check: LogEvent) -> bool:
    """A failed liveness or startup probe makes the kubelet kill the container; a readiness probe only takes the
    pod out of its Service."""
    return check.probe != "readiness"


def _kill_after_s(settings: LogEvent) -> float | None:
    """When a probe that keeps failing gives up on a starting server: its first try after the initial delay, then
    failureThreshold tries a period apart."""
    if settings.probe_delay_s is None or settings.probe_period_s is None or settings.probe_failures is None:
        return None
    return settings.probe_delay_s + settings.probe_period_s * max(settings.probe_failures - 1, 0)


def _budget_words(settings: LogEvent, after_s: float) -> str:
    return (
        f" Its {settings.probe} probe gives the server about {after_s:g} s (delay {settings.probe_delay_s:g} s, then "
        f"{settings.probe_failures} failures {settings.probe_period_s:g} s apart) before the kubelet kills it."
    )


def _not_listening_finding(check: LogEvent, settings: LogEvent | None) -> Finding:
    restarts = _restarts(check)
    consequence = (
        "the kubelet kills a container whose liveness or startup probe keeps failing, so a server still loading "
        "its weights is restarted before it ever listens, and starts again from nothing (CrashLoopBackOff)"
        if restarts
        else "a readiness probe only keeps the pod out of its Service until the server listens"
    )
    after_s = _kill_after_s(settings) if settings is not None and restarts else None
    evidence = [c.log_evidence(check, name="probe refused")]
    if settings is not None and after_s is not None:
        evidence.append(c.log_evidence(settings, name=f"{settings.probe} probe", value=after_s, unit="s"))
    stopped = ", ".join(str(code) for code in STOPPED_EXIT_CODES)
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH if restarts else Severity.LOW,
        f"{_probe_name(check)} found nothing listening on the server's port (connection refused): vLLM was still "
        "starting, or had exited",
        summary="vLLM binds its port as it starts but listens only once the engine is ready: after the weights "
        "are loaded, the memory profiled, torch.compile and CUDA-graph capture done (minutes for a large model). "
        f"Until then every probe is refused; {consequence}. A server that crashed is refused the same way."
        + (_budget_words(settings, after_s) if settings is not None and after_s is not None else ""),
        evidence=evidence,
        actions=[
            "Give the start its time: a startupProbe on GET /health (periodSeconds 10, failureThreshold times "
            "periodSeconds above the longest start: the server's log shows how long loading and warm-up took; 60 "
            "covers ten minutes); liveness and readiness probes run only after it succeeds. Or raise the liveness "
            "probe's initialDelaySeconds above the start.",
            "If the container exited rather than being killed (Back-off restarting failed container, an exit code "
            f"other than {stopped}), read the start that failed: `kubectl logs <pod> --previous`, and triage it.",
        ],
        confidence=0.7,
    )


def _exited_finding(check: LogEvent, exited: LogEvent) -> Finding:
    exit_code = exited.exit_code
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH,
        f"{_probe_name(check)} was refused because the server had exited (exit code {exit_code}): its start failed, "
        "and the probe only noticed",
        summary=f"The container's last run ended with exit code {exit_code}, not a kill by the kubelet (137) or its "
        "stop (143): vLLM itself gave up, before it listened on its port, so every probe was refused. A longer "
        "probe changes nothing; the start's own error, in the previous container's log, is the cause.",
        evidence=[
            c.log_evidence(check, name="probe refused"),
            c.log_evidence(exited, name="the container's last exit code", value=exit_code),
        ],
        actions=[
            "Read the start that failed: `kubectl logs <pod> --previous` (its last lines hold vLLM's error, a "
            "traceback or `EngineCore failed to start`), and triage that text.",
        ],
        confidence=0.75,
    )


def _restarted_finding(check: LogEvent) -> Finding:
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH,
        f"{_probe_name(check)} gave up on the server and the kubelet killed its container: what the probe met is in "
        "its own failure event",
        summary=f"The kubelet kills a container whose {check.probe} probe fails failureThreshold times in a row, and "
        "starts it again: vLLM did not crash, and it loads its weights from the start again. Why the probe failed is "
        "in the 'Unhealthy' event before this one (`Liveness probe failed: …`): refused while vLLM is still loading, "
        "a timeout while it is busy, an error status once its engine has died. Each has another fix.",
        evidence=[c.log_evidence(check, name="container killed", value=check.probe)],
        actions=[
            "`kubectl describe pod <pod> | servops triage --logs -`: its Unhealthy events say what the probe met, and "
            "the probe's settings (delay, timeout, period, failures) how long it waited.",
            "If the kills come while the server starts, give the start its time: a startupProbe on GET /health "
            "(failureThreshold × periodSeconds above the longest start), which holds the liveness probe back until it "
            "succeeds.",
        ],
        confidence=0.6,
    )


def _unhealthy_answer_finding(check: LogEvent) -> Finding:
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH,
        f"{_probe_name(check)} got HTTP {check.status} from the health route: vLLM says its engine is not healthy",
        summary="vLLM's /health answers 200 while the engine answers its check and an error status when it does "
        "not (0.32: 503 when the engine has died, EngineDeadError). The server process is up, the engine behind "
        f"it is not: {'a restart follows, and ' if _restarts(check) else ''}the engine's own fatal error, logged "
        "before this, is the cause.",
        evidence=[c.log_evidence(check, name="health route answered", value=check.status)],
        actions=[
            "Read the engine's last error in the server's log (`kubectl logs <pod> --previous` after a restart): "
            "`EngineCore encountered a fatal error`, a worker's traceback, a CUDA error; triage that text.",
        ],
        confidence=0.6,
    )


def _start_deadline_finding(check: LogEvent) -> Finding:
    """A platform's limit on the whole start (Modal's runner) ended a server that was still loading."""
    limit = f"{check.timeout_ms / 1000:g} s" if check.timeout_ms else "its limit"
    who = check.component or "the platform"
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH,
        f"{who} stopped the server after {limit} of starting: vLLM's start took longer than the platform allows",
        summary="vLLM is ready only after the weights are downloaded and loaded, the memory profiled, torch.compile "
        f"run and the CUDA graphs captured: minutes for a large model, more on a first start with empty caches. "
        f"{who} ends a container whose start exceeds its limit, so the server is killed while loading and every retry "
        "starts from nothing.",
        evidence=[c.log_evidence(check, name="start limit", value=limit)],
        actions=[
            f"Raise {who}'s start limit above the longest start the server's log shows (on Modal, the function's "
            "startup timeout, as Modal's maintainer advised in modal-labs/modal-examples#1154).",
            "Shorten the start: keep the weights and vLLM's caches (torch.compile's, in ~/.cache/vllm) on a volume "
            "that outlives the container, so later starts neither download nor compile; --enforce-eager skips "
            "compilation and graph capture at some cost in decode speed.",
        ],
        confidence=0.8,
    )


def _compose_unhealthy_finding(check: LogEvent) -> Finding:
    """Docker Compose gave up on a service's healthcheck and starts nothing that depends on it: a vLLM container is
    unhealthy until its model has loaded, so a healthcheck sized for a small service fails a slow start, and a start
    that failed looks the same from here."""
    container = check.message or "the container"
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH,
        f"Docker Compose marked {container} unhealthy and started nothing that depends on it",
        summary="Compose runs the service's healthcheck (usually a request to vLLM's /health) and waits for it to "
        "pass; when it fails past start_period and its retries, the services that depend on it with `condition: "
        "service_healthy` are not started. vLLM answers /health only once the model has loaded and the engine has "
        "started, minutes for a large model and longer on a first download, so a healthcheck sized for a small "
        "service fails a slow start; a start that failed outright looks the same here.",
        evidence=[c.log_evidence(check, name="unhealthy container", value=container)],
        actions=[
            f"Read the container's own log: `docker logs {container}` (or `docker compose logs <service>`): a "
            "traceback there is the cause; the last lines still loading weights mean the healthcheck was too short.",
            "Give the healthcheck the start's length: `start_period` above the longest load the log shows (with "
            "`interval` and `retries` to match), and check it probes the port and path vLLM serves (`curl -f "
            "http://localhost:8000/health` inside the container).",
        ],
        confidence=0.6,
    )


def _health_check_finding(check: LogEvent, busy: LogEvent | None) -> Finding:
    who = check.component or "the orchestrator"
    after = f" after {check.timeout_ms / 1000:g} s" if check.timeout_ms else ""
    evidence = [c.log_evidence(check, name="health check")]
    if busy is not None:
        evidence.append(c.log_evidence(busy, name="requests waiting", value=busy.waiting))
    ray = who == "Ray Serve"
    timeout = (
        "Raise the Ray Serve deployment's health check timeout (health_check_timeout_s in its deployment config)"
        if ray
        else "Raise the probe's timeoutSeconds and failureThreshold (a startupProbe for the start)"
    )
    return RULE_HEALTH_CHECK.finding(
        Severity.HIGH if busy is not None else Severity.MEDIUM,
        f"{who}{_possessive(who)} health check timed out{after}{_busy_words(busy)}",
        summary=f"{who} marks a server unhealthy when its health check does not answer in time, and restarts it, "
        "losing every request in flight. "
        + (
            "The stats lines show the engine working through a queue, so the check was slow because the server "
            "was busy, not because it had died."
            if busy
            else "Whether the engine was busy or stuck is not in the text: its stats lines at that time say which."
        ),
        evidence=evidence,
        actions=[
            f"{timeout} above the longest the server takes to answer under a full queue.",
            "Bound the queue so the check is never stuck behind it: fewer concurrent requests per replica (the "
            "router's or deployment's max ongoing requests), more replicas.",
        ],
        confidence=0.75 if busy is not None else 0.5,
    )


def _possessive(name: str) -> str:
    return "'" if name.endswith("s") else "'s"


def _busy_words(busy: LogEvent | None) -> str:
    if busy is None:
        return ""
    return f" while vLLM was busy ({busy.waiting} requests waiting): a busy replica restarted, not a dead one"


RULE_HEALTH_CHECK = Rule(
    code="OP-5.27",
    title="an orchestrator's health check restarted the server",
    category=Category.RELIABILITY,
    check=_check_health_check,
    needs=("events",),
    page=RulePage(
        checks="Ray Serve's `Didn't receive health check response for replica … after Ns, marking it unhealthy`, or "
        "Kubernetes' `Liveness probe failed` / `Readiness probe failed` / `Startup probe failed`, by what the probe "
        "met: connection refused (nothing listening: still starting, or exited; `kubectl describe`'s `Exit Code` "
        "other than 0, 137 or 143 says the server gave up itself), an error status from /health "
        "(the engine is not healthy), or a timeout; busy when a stats line shows requests waiting (at least "
        f"{BUSY_WAITING}); Modal's `Runner has been initializing for too long: N seconds`, a limit on the whole start. "
        "The kubelet's Killing event (`Container … failed liveness probe, will be restarted`) "
        "alone says only that a probe gave up; the probe's own failure event, when pasted too, says what it met.",
        why="A health check that waits behind a full engine fails although the server is healthy; the restart "
        "loses everything in flight and the queue comes back. vLLM listens on its port only once the engine is "
        "ready (it binds the port first: vllm/entrypoints/launchers/launcher.py, 0.32), so a liveness probe "
        "without a startupProbe kills a large model mid-start; its /health answers 503 when the engine has died "
        "(vllm/entrypoints/serve/instrumentator/health.py, 0.32).",
        example="Ray Serve's 10 s check failing with 951 requests pending and 27,409 prompt tokens/s; the "
        "replica restarted every half hour until the timeout was raised to 600 s (ray-project/ray#54070).",
        fix="A longer health check timeout than the queue's worst; a bounded queue per replica; a startupProbe "
        "that covers the start; for an error status, the engine's own fatal error.",
        limits="Without stats lines the finding cannot tell busy from stuck.",
        references=["https://github.com/ray-project/ray/issues/54070"],
    ),
)

RULES: list[Rule] = [RULE_GATEWAY, RULE_PROXY_URL, RULE_HEALTH_CHECK]
