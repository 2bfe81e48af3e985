"""Endpoint probes: /health, /v1/models and /version are facts, never errors."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from advisor.collect.probe import base_url, probe_endpoint

ROUTES = {
    "/health": (200, b""),
    "/v1/models": (200, json.dumps({"object": "list", "data": [{"id": "m"}]}).encode()),
    "/version": (200, json.dumps({"version": "0.33.0"}).encode()),
}


class _Handler(http.server.BaseHTTPRequestHandler):
    routes = ROUTES

    def do_GET(self):  # noqa: N802
        status, body = self.routes.get(self.path, (404, b"{}"))
        self.send_response(status)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_healthy_vllm_endpoint_reports_health_models_and_version(server):
    facts = probe_endpoint(server + "/v1", timeout_s=5)
    assert (facts.health_status, facts.health_reachable, facts.models_ok, facts.version) == (200, True, True, "0.33.0")


def test_a_dead_engine_503_is_a_fact_not_an_error(server, monkeypatch):
    monkeypatch.setattr(_Handler, "routes", {**ROUTES, "/health": (503, b"")})
    assert probe_endpoint(server, timeout_s=5).health_status == 503


def test_an_unreachable_endpoint_is_recorded_as_unreachable():
    facts = probe_endpoint("http://127.0.0.1:9", timeout_s=1)
    assert facts.health_reachable is False and facts.version is None


@pytest.mark.parametrize("endpoint", ["127.0.0.1:8000", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/metrics/"])
def test_base_url_forms(endpoint):
    assert base_url(endpoint) == "http://127.0.0.1:8000"
