"""The Prometheus collector's input checks and failure messages (no Prometheus needed)."""

from __future__ import annotations

import http.server
import socket
import threading

import pytest

from advisor.collect.prometheus import PrometheusError, collect, selector_matchers


@pytest.mark.parametrize(
    ("selector", "matchers"),
    [
        ("", ""),
        ('{job="vllm"}', 'job="vllm"'),
        ('{job="vllm", instance=~"10\\\\.0\\\\..*"}', 'job="vllm", instance=~"10\\\\.0\\\\..*"'),
        ("{}", ""),
    ],
)
def test_selectors_become_matchers(selector, matchers):
    assert selector_matchers(selector) == matchers


@pytest.mark.parametrize("selector", ["job=vllm", '{job="vllm"', "{job=vllm}", 'up{job="vllm"}'])
def test_a_selector_that_is_not_a_label_matcher_is_rejected(selector):
    with pytest.raises(PrometheusError, match="--selector"):
        selector_matchers(selector)


def test_prometheus_that_never_answers_times_out_with_one_line():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        with pytest.raises(PrometheusError, match="within 0.5 s") as caught:
            collect(f"http://127.0.0.1:{port}", timeout_s=0.5)
    assert "\n" not in str(caught.value)


class _NotPrometheus(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>Grafana login</html>")

    def log_message(self, *args):
        pass


def test_a_url_that_is_not_prometheus_says_so():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotPrometheus)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with pytest.raises(PrometheusError, match="not Prometheus API JSON"):
            collect(f"http://127.0.0.1:{httpd.server_address[1]}", timeout_s=5)
    finally:
        httpd.shutdown()
        httpd.server_close()
