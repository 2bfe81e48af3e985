"""OP-5.25 to OP-5.27: gateways, proxies and health checks between the client and vLLM."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_between
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_502_for_localhost_is_the_clients_proxy_variables():
    # microsoft/VibeVoice#248: the client's output
    facts = _facts(["Sending request to http://localhost:8000/v1/chat/completions", "❌ Error: 502"])
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.25" and top.title.startswith("HTTP 502 for a server on this host: a proxy answered")
    assert "Unset http_proxy and https_proxy" in top.actions[0]


def test_a_gateway_status_elsewhere_names_the_gateway_and_what_each_status_means():
    [bad] = op5_between.RULE_GATEWAY.evaluate(_facts(["<html><title>502 Bad Gateway</title></html>"]))
    assert "it got no valid answer" in bad.title and bad.confidence == 0.6
    [late] = op5_between.RULE_GATEWAY.evaluate(_facts(["openai.InternalServerError: Error code: 504"]))
    assert "vLLM answered late" in late.title and "read timeout" in late.actions[0]
    for text in ("Running: 502 reqs, Waiting: 0 reqs", "prompt of 1504 tokens"):
        assert op5_between.RULE_GATEWAY.evaluate(_facts([text])) == []


def test_a_413_is_a_proxys_body_limit_vllm_answers_none():
    for line in (
        "openai.APIStatusError: Error code: 413 - {'detail': 'Request Entity Too Large'}",
        "<html><head><title>413 Request Entity Too Large</title></head><body><center>nginx</center></body></html>",
    ):
        [finding] = op5_between.RULE_GATEWAY.evaluate(_facts([line]))
        assert finding.title == (
            "HTTP 413 from a gateway in front of vLLM, not from vLLM: the request's body is larger than the proxy "
            "accepts"
        )
        assert "client_max_body_size" in finding.actions[0] and "proxy-body-size" in finding.actions[0]
    assert op5_between.RULE_GATEWAY.evaluate(_facts(["prompt of 4130 tokens, 413 images"])) == []


def test_ingress_nginxs_own_log_names_it_its_timeout_and_the_annotations_to_raise():
    # opea-project/Enterprise-Inference#95: nginx's error line, then ingress-nginx's access line (60.001 s)
    lines = [
        "2026/05/18 22:29:08 [error] 119156#119156: *4289737 upstream timed out (110: Operation timed out) while "
        'reading response header from upstream, client: 172.17.23.1, request: "POST /m/v1/completions HTTP/2.0"',
        '172.17.23.1 - - [18/May/2026:22:29:08 +0000] "POST /m/v1/completions HTTP/2.0" 504 160 "-" "curl/7.81.0" '
        "1236 60.001 [auth-apisix-auth-apisix-gateway-80] [] 10.233.104.80:9080 0 60.000 504 b474a6af",
    ]
    [finding] = op5_between.RULE_GATEWAY.evaluate(_facts(lines))
    assert finding.title == (
        "HTTP 504 from ingress-nginx in front of vLLM, not from vLLM: vLLM did not answer within ingress-nginx's "
        "timeout after 60 s"
    )
    assert "nginx.ingress.kubernetes.io/proxy-read-timeout" in finding.actions[0]
    assert "APISIX" in finding.actions[1] and finding.confidence == 0.75
    [nginx] = op5_between.RULE_GATEWAY.evaluate(_facts(lines[:1]))
    assert nginx.title.startswith("HTTP 504 from nginx") and "proxy_read_timeout" in nginx.actions[0]


def test_nginxs_error_log_for_its_502s_says_what_happened_between_it_and_vllm():
    # nginx's error log lines, as nginx (ngx_http_upstream.c, ngx_event_connect.c) and ingress-nginx write them
    prefix = "2026/12/01 10:00:00 [error] 29#29: *1235 "
    where = ', client: 10.0.0.1, server: _, request: "POST /v1/chat/completions HTTP/1.1", upstream: "http://'
    cases = {
        "connect() failed (111: Connection refused) while connecting to upstream": (
            "nothing listened at vLLM's address",
            "--port",
        ),
        "connect() to 10.0.0.5:8000 failed (111: Connection refused) while connecting to upstream": (
            "nothing listened at vLLM's address",
            "--port",
        ),
        "upstream prematurely closed connection while reading response header from upstream": (
            "vLLM closed the connection before answering",
            "keepalive_timeout below vLLM's (4s",
        ),
        "recv() failed (104: Connection reset by peer) while reading response header from upstream": (
            "vLLM closed the connection before answering",
            "VLLM_HTTP_TIMEOUT_KEEP_ALIVE",
        ),
        "no live upstreams while connecting to upstream": (
            "every vLLM server of its upstream group was marked",
            "max_fails",
        ),
    }
    for words, (verdict, action) in cases.items():
        for upstream in ("10.0.0.5:8000/v1/chat/completions", "127.0.0.1:8000/v1/chat/completions"):
            [finding] = op5_between.RULE_GATEWAY.evaluate(_facts([prefix + words + where + upstream + '"']))
            assert finding.title.startswith(f"HTTP 502 from nginx in front of vLLM, not from vLLM: {verdict}"), words
            assert action in " ".join(finding.actions), words


def test_envoys_own_bodies_say_what_happened_between_it_and_vllm():
    reset = "upstream connect error or disconnect/reset before headers. "
    cases = {
        reset + "reset reason: connection termination": (503, "vLLM closed the connection before answering", 1),
        reset + "retried and the latest reset reason: remote connection failure, transport failure reason: "
        "delayed connect error: 111": (503, "it could not connect to vLLM", 1),
        reset + "reset reason: overflow": (503, "its own circuit breaker refused the request", 0),
        "no healthy upstream": (503, "no vLLM pod was ready to take it", 0),
        "upstream request timeout": (504, "its route's timeout ended the request", 0),
    }
    for body, (status, verdict, action) in cases.items():
        [finding] = op5_between.RULE_GATEWAY.evaluate(_facts([body]))
        assert finding.title.startswith(f"HTTP {status} from Envoy in front of vLLM, not from vLLM: {verdict}"), body
        assert finding.actions[action]
    [closed] = op5_between.RULE_GATEWAY.evaluate(_facts([reset + "reset reason: connection termination"]))
    assert "idleTimeout below 5s (4s)" in closed.actions[1] and "VLLM_HTTP_TIMEOUT_KEEP_ALIVE" in closed.summary


def test_a_proxy_address_without_its_scheme_is_named_with_the_variable_to_write():
    # vllm#16918: every image request failed while the server fetched the image
    line = "ERROR 04-21 18:26:31 [serving_chat.py:200] aiohttp.client_exceptions.InvalidURL: 172.25.239.45:33080"
    facts = _facts([line])
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.26" and "written as 172.25.239.45:33080, without http://" in top.title
    assert top.actions[0].startswith("Write the server's proxy variable as a URL: http_proxy=http://172.25.239.45")
    assert op5_between.RULE_PROXY_URL.evaluate(_facts(["InvalidURL: http://images.example/a.png"])) == []


RAY_CHECK = (
    "1758 -- Didn't receive health check response for replica Replica(id='rut1591v', deployment='vLLM:Qwen', "
    "app='RayServeApp') after 10.0s, marking it unhealthy."
)


def test_a_health_check_beside_a_queue_is_a_busy_replica_restarted():
    # ray-project/ray#54070: 951 pending beside Ray Serve's 10 s check
    stats = (
        "INFO 06-25 04:39:52 [metrics.py:486] Avg prompt throughput: 27408.8 tokens/s, Avg generation throughput: "
        "4.9 tokens/s, Running: 49 reqs, Swapped: 0 reqs, Pending: 951 reqs, GPU KV cache usage: 16.8%, CPU KV cache "
        "usage: 0.0%."
    )
    top = evaluate(_facts([RAY_CHECK, stats])).findings[0]
    assert top.rule == "OP-5.27" and top.title == (
        "Ray Serve's health check timed out after 10 s while vLLM was busy (951 requests waiting): a busy replica "
        "restarted, not a dead one"
    )
    assert top.actions[0].startswith("Raise the Ray Serve deployment's health check timeout")


def test_a_failed_probe_alone_cannot_tell_busy_from_stuck():
    [probe] = op5_between.RULE_HEALTH_CHECK.evaluate(
        _facts(['Warning  Unhealthy  Liveness probe failed: Get "http://10.0.0.5:8000/health": context deadline'])
    )
    assert probe.title == "Kubernetes' health check timed out" and probe.confidence == 0.5
    assert probe.actions[0].startswith("Raise the probe's timeoutSeconds")


def test_a_probe_refused_is_a_server_not_listening_yet_and_a_startup_probe_is_the_fix():
    """vLLM binds its port first and listens once the engine is ready: a liveness probe during the weights' load is
    refused, and the kubelet restarts the server mid-start (kubectl get events, as an on-call engineer pastes it)."""
    [probe] = op5_between.RULE_HEALTH_CHECK.evaluate(
        _facts(
            [
                "2m  Warning  Unhealthy  pod/vllm-7c9d8-x2k4q  Liveness probe failed: Get "
                '"http://10.244.1.17:8000/health": dial tcp 10.244.1.17:8000: connect: connection refused',
                "2m  Normal   Killing    pod/vllm-7c9d8-x2k4q  Container vllm failed liveness probe, will be restarted",
            ]
        )
    )
    assert probe.title.startswith("Kubernetes' liveness probe found nothing listening on the server's port")
    assert probe.severity.name == "HIGH" and "restarted before it ever listens" in probe.summary
    assert probe.actions[0].startswith("Give the start its time: a startupProbe on GET /health")
    [ready] = op5_between.RULE_HEALTH_CHECK.evaluate(
        _facts(
            ['Readiness probe failed: Get "http://10.0.0.5:8000/health": dial tcp 10.0.0.5:8000: connection refused']
        )
    )
    assert ready.severity.name == "LOW" and "only keeps the pod out of its Service" in ready.summary


def test_the_kubelets_kill_alone_says_the_probe_gave_up_and_where_its_reason_is():
    """The Killing event says a probe gave up, not what it met; it never stands in front of the Unhealthy event
    that says so, whichever comes first in the paste."""
    kill = "2m  Normal   Killing    pod/vllm-7c9d8-x2k4q  Container vllm failed liveness probe, will be restarted"
    [probe] = op5_between.RULE_HEALTH_CHECK.evaluate(_facts([kill]))
    assert probe.title.startswith("Kubernetes' liveness probe gave up on the server and the kubelet killed its")
    assert "timed out" not in probe.title and probe.actions[0].startswith("`kubectl describe pod <pod> | servops")
    [behind] = op5_between.RULE_HEALTH_CHECK.evaluate(
        _facts([kill, "Liveness probe failed: HTTP probe failed with statuscode: 503"])
    )
    assert behind.title.startswith("Kubernetes' liveness probe got HTTP 503")


def test_an_error_status_from_the_health_route_is_the_engine_not_the_probe():
    [probe] = op5_between.RULE_HEALTH_CHECK.evaluate(
        _facts(["Startup probe failed: HTTP probe failed with statuscode: 503"])
    )
    assert probe.title == (
        "Kubernetes' startup probe got HTTP 503 from the health route: vLLM says its engine is not healthy"
    )
    assert "EngineDeadError" in probe.summary and "kubectl logs <pod> --previous" in probe.actions[0]


def test_kubectl_describe_gives_the_probes_budget_before_the_kill():
    """`kubectl describe pod` prints the probe's settings under the container and the refusals under Events."""
    facts = _facts(
        [
            "    Liveness:       http-get http://:8000/health delay=60s timeout=1s period=10s #success=1 #failure=3",
            "Events:",
            '  Warning  Unhealthy  2m (x12 over 12m)  kubelet  Liveness probe failed: Get "http://10.244.3.9:8000/'
            'health": dial tcp 10.244.3.9:8000: connect: connection refused',
        ]
    )
    [probe] = op5_between.RULE_HEALTH_CHECK.evaluate(facts)
    assert "Its liveness probe gives the server about 80 s (delay 60 s, then 3 failures 10 s apart)" in probe.summary
    assert [e.value for e in probe.evidence if e.name == "liveness probe"] == [80.0]
    with_startup = _facts(
        [
            "    Startup:        http-get http://:8000/health delay=0s timeout=1s period=10s #success=1 #failure=60",
            "Liveness probe failed: dial tcp 10.0.0.1:8000: connect: connection refused",
        ]
    )
    [started] = op5_between.RULE_HEALTH_CHECK.evaluate(with_startup)
    assert "Its startup probe gives the server about 590 s" in started.summary


def test_a_probe_refused_after_the_server_exited_on_its_own_points_at_the_failed_start():
    """`kubectl describe pod`: `Exit Code: 1` is vLLM giving up, not the kubelet's kill (137) or stop (143)."""
    lines = [
        "    Last State:     Terminated",
        "      Reason:       Error",
        "      Exit Code:    1",
        'Liveness probe failed: Get "http://10.0.0.5:8000/health": dial tcp 10.0.0.5:8000: connect: connection refused',
    ]
    [probe] = op5_between.RULE_HEALTH_CHECK.evaluate(_facts(lines))
    assert probe.title.startswith("Kubernetes' liveness probe was refused because the server had exited (exit code 1)")
    assert "kubectl logs <pod> --previous" in probe.actions[0]
    killed = [line.replace("Exit Code:    1", "Exit Code:    137") for line in lines]
    [mid_start] = op5_between.RULE_HEALTH_CHECK.evaluate(_facts(killed))
    assert "found nothing listening" in mid_start.title


def test_envoys_access_log_flags_for_vllms_routes_read_as_its_bodies_do():
    line = (
        '[2026-12-01T10:00:00.000Z] "POST /v1/chat/completions HTTP/1.1" {} {} {} - "-" 512 95 3 - "-" "OpenAI/Python"'
    )
    cases = {
        ("503", "UC", "upstream_reset_before_response_started{connection_termination}"): "vLLM closed the connection",
        ("503", "UF", "upstream_reset_before_response_started{connection_failure}"): "it could not connect to vLLM",
        ("503", "UH", "no_healthy_upstream"): "no vLLM pod was ready to take it",
        ("504", "UT", "response_timeout"): "its route's timeout ended the request",
        ("503", "UO", "overflow"): "its own circuit breaker refused the request",
    }
    for (status, flag, details), verdict in cases.items():
        [finding] = op5_between.RULE_GATEWAY.evaluate(_facts([line.format(status, flag, details)]))
        assert finding.title.startswith(f"HTTP {status} from Envoy in front of vLLM, not from vLLM: {verdict}"), flag
    # Envoy's plain format (no details), and a route that is not vLLM's
    plain = '[2026-12-01T10:00:00.000Z] "POST /v1/completions HTTP/1.1" 503 UF 512 91 2 - "-" "curl/8.5" "abc"'
    [finding] = op5_between.RULE_GATEWAY.evaluate(_facts([plain]))
    assert "it could not connect to vLLM" in finding.title
    other = '[2026-12-01T10:00:00.000Z] "GET /grafana/api HTTP/1.1" 503 UF 0 91 2 - "-" "Mozilla"'
    assert op5_between.RULE_GATEWAY.evaluate(_facts([other])) == []


def test_a_429_is_a_rate_limiter_in_front_not_the_hubs_or_a_registrys():
    for line in (
        "HTTP/1.1 429 Too Many Requests",
        "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit exceeded', 'type': 'rate_limit'}}",
        "openai.RateLimitError: Error code: 429 - {'object': 'error', 'message': 'Too many requests', 'type': "
        "'RateLimitError'}",
    ):
        [finding] = op5_between.RULE_GATEWAY.evaluate(_facts([line]))
        assert finding.title == (
            "HTTP 429 from a gateway in front of vLLM, not from vLLM: a rate limit in front of it refused the request"
        ), line
        assert "Retry-After" in finding.actions[0]
    for elsewhere in (
        "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: https://huggingface.co/api/models/x",
        "failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/vllm/"
        "vllm-openai/manifests/sha256:ab: 429 Too Many Requests - Server message: toomanyrequests",
    ):
        assert op5_between.RULE_GATEWAY.evaluate(_facts([elsewhere])) == [], elsewhere


def test_modals_start_limit_is_a_server_killed_while_loading_with_the_limit_to_raise():
    # modal-labs/modal-examples#1154: the vLLM example killed during torch.compile; Modal advised a longer timeout
    [finding] = op5_between.RULE_HEALTH_CHECK.evaluate(
        _facts(["Runner failed with exception: Runner has been initializing for too long: 300 seconds"])
    )
    assert finding.title.startswith("Modal stopped the server after 300 s of starting")
    assert "startup timeout" in finding.actions[0] and "volume" in finding.actions[1]


def test_compose_refusing_a_service_for_an_unhealthy_vllm_container_sends_to_its_log_and_start_period():
    # zeenolife/ai-baby-monitor#4, verbatim
    line = '"dependency failed to start: container ai-baby-monitor-vllm-1 is unhealthy"'
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.27" and "ai-baby-monitor-vllm-1 unhealthy" in top.title
    assert "docker logs ai-baby-monitor-vllm-1" in top.actions[0] and "start_period" in top.actions[1]


def test_aiohttps_chunked_body_cut_off_is_the_answer_cut_mid_stream():
    # vllm#6885, verbatim: benchmark_serving.py while the server failed the request
    top = evaluate(_facts(["aiohttp.http_exceptions.TransferEncodingError: 400, message:"])).findings[0]
    assert top.rule == "OP-5.37" and "aiohttp" in top.title


def test_envoys_words_without_their_reset_reason_are_still_envoys_503():
    # vllm-project/aibrix#1103, verbatim: an AIBrix maintainer's benchmark runs; Envoy answers so when no vLLM pod is
    # ready to take the request
    top = top_finding("upstream connect error or disconnect/reset before headers")
    assert top.rule == "OP-5.25" and top.title.startswith("HTTP 503 from Envoy in front of vLLM, not from vLLM")
    assert "no reset reason" in top.title and "endpointslices" in top.actions[1]
