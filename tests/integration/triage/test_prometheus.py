"""Triage of a fleet through a real Prometheus server and prometheus-api-client.

Two replicas on 127.0.0.1 expose vLLM 0.33 metrics whose counters grow with time: one is
preempting (KV usage 0.98, 3 preemptions/s, 5 waiting), the other healthy. Prometheus
scrapes both every second; triage must see two instances, compute the preempting
replica's rate with PromQL, and rank the preemption finding first.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from advisor.collect.prometheus import PrometheusError, collect
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest
from advisor.triage.text import render_text
from tests.integration.triage.prometheus_proc import prometheus_binary, running_prometheus, wait_for_samples

pytestmark = pytest.mark.integration


class Replica:
    """A /metrics endpoint whose counters follow `rate × elapsed seconds` (vLLM names, 0.33)."""

    def __init__(self, kv_usage: float, preemptions_per_s: float, waiting: int) -> None:
        self.kv_usage, self.preemptions_per_s, self.waiting = kv_usage, preemptions_per_s, waiting
        self.started = time.monotonic()

    def exposition(self) -> bytes:
        elapsed = time.monotonic() - self.started
        registry = CollectorRegistry()
        labels = {"engine": "0", "model_name": "tiny"}
        Gauge("vllm:num_requests_running", "running", list(labels), registry=registry).labels(**labels).set(8)
        Gauge("vllm:num_requests_waiting", "waiting", list(labels), registry=registry).labels(**labels).set(
            self.waiting
        )
        Gauge("vllm:kv_cache_usage_perc", "kv", list(labels), registry=registry).labels(**labels).set(self.kv_usage)
        Counter("vllm:num_preemptions", "preemptions", list(labels), registry=registry).labels(**labels).inc(
            self.preemptions_per_s * elapsed
        )
        Counter("vllm:generation_tokens", "gen", list(labels), registry=registry).labels(**labels).inc(100 * elapsed)
        ttft = Histogram(
            "vllm:time_to_first_token_seconds",
            "ttft",
            list(labels),
            registry=registry,
            buckets=(0.1, 0.5, 1.0, 2.5, 5.0),
        ).labels(**labels)
        for _ in range(int(4 * elapsed)):
            ttft.observe(0.3)
        return generate_latest(registry)


def serve(replica: Replica) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = replica.exposition()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Iterator[tuple[str, str, str]]:
    """(prometheus URL, preempting replica target, healthy replica target)."""
    prometheus_binary()
    servers = []
    try:
        hot_server, hot = serve(Replica(kv_usage=0.98, preemptions_per_s=3.0, waiting=5))
        servers.append(hot_server)
        calm_server, calm = serve(Replica(kv_usage=0.30, preemptions_per_s=0.0, waiting=0))
        servers.append(calm_server)
        with running_prometheus([hot, calm], tmp_path_factory.mktemp("prometheus")) as url:
            wait_for_samples(url, "vllm:num_preemptions_total", series=2, samples=8)  # the 5 s window is covered
            yield url, hot, calm
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_collector_sees_each_replica_and_its_rate(fleet):
    url, hot, calm = fleet
    snapshot, window = collect(url, '{job="vllm"}', window_s=5)
    by_instance = {stats.instance: stats for stats in window.per_instance}
    assert set(by_instance) == {hot, calm}
    assert by_instance[hot].rate("vllm:num_preemptions_total") == pytest.approx(3.0, rel=0.25)
    assert by_instance[calm].rate("vllm:num_preemptions_total") == pytest.approx(0.0, abs=1e-9)
    assert by_instance[hot].gauge("vllm:kv_cache_usage_perc") == pytest.approx(0.98)
    assert 0.1 < window.total.quantile("vllm:time_to_first_token_seconds", "p50") <= 0.5
    assert snapshot.value("vllm:num_requests_waiting") == 5


def test_triage_through_prometheus_ranks_the_preemption_finding_first(fleet):
    url, hot, _ = fleet
    result = run_triage(TriageRequest(prometheus=url, selector='{job="vllm"}', window_s=5))
    assert result.sources[0].kind == "prometheus" and "2 instance(s)" in result.sources[0].note
    assert result.top.rule == "OP-5.3", [(f.rule, f.title) for f in result.findings]
    table = render_text(result).split("Replicas (5 s window):", 1)[1]
    hot_row = next(line for line in table.splitlines() if line.strip().startswith(hot))
    assert hot_row.split()[3] == "0.98"  # the KV-usage column of the preempting replica


def test_selector_matching_nothing_is_one_clear_error(fleet):
    url, _, _ = fleet
    with pytest.raises(PrometheusError, match="no vllm:\\* series match"):
        collect(url, '{job="not-there"}', window_s=5)
