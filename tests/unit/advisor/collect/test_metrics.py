"""The /metrics collector: every vLLM spelling parses to the same facts; bad input is one line."""

from __future__ import annotations

import http.server
import socket
import threading
from pathlib import Path

import pytest

from advisor.collect.metrics import (
    MetricsError,
    load_file,
    metrics_url,
    parse_exposition,
    scrape,
    scrape_pair,
    window_between,
)

FIXTURES = Path(__file__).parents[3] / "fixtures" / "collect"
VERSIONS = ["metrics_v0_8_0.txt", "metrics_v0_10_2.txt", "metrics_v0_33_0.txt"]


@pytest.mark.parametrize("fixture", VERSIONS)
def test_every_version_spelling_gives_the_same_snapshot_values(fixture):
    snapshot = load_file(FIXTURES / fixture)
    assert snapshot.value("vllm:kv_cache_usage_perc") == pytest.approx(0.97)
    assert snapshot.value("vllm:prefix_cache_queries_total") == 10000
    assert snapshot.value("vllm:prefix_cache_hits_total") == 2500
    assert snapshot.value("vllm:num_preemptions_total") == 42
    assert snapshot.value("vllm:num_requests_running") == 8
    assert snapshot.value("vllm:num_requests_waiting") == 3
    assert snapshot.by_label("vllm:request_success_total", "finished_reason") == {
        "stop": 90.0,
        "length": 8.0,
        "abort": 2.0,
    }
    itl = snapshot.histogram("vllm:inter_token_latency_seconds")
    assert [series.count for series in itl] == [1000.0]
    assert snapshot.samples("vllm:cache_config_info")[0].labels["num_gpu_blocks"] == "10169"


def test_both_spellings_side_by_side_are_not_counted_twice():
    snapshot = load_file(FIXTURES / "metrics_v0_10_2.txt")
    assert snapshot.value("vllm:kv_cache_usage_perc") == pytest.approx(0.97)
    assert len(snapshot.histogram("vllm:inter_token_latency_seconds")) == 1


def test_created_timestamps_are_not_taken_for_measurements():
    snapshot = load_file(FIXTURES / "metrics_v0_33_0.txt")
    every_name = [*snapshot.gauges, *snapshot.counters, *snapshot.histograms]
    assert not [name for name in every_name if name.endswith("_created")]


def test_untyped_text_is_sorted_by_suffix():
    text = (
        'vllm:num_preemptions_total{engine="0"} 5\n'
        'vllm:num_requests_running{engine="0"} 2\n'
        'vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0"} 3\n'
        'vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf"} 4\n'
        'vllm:e2e_request_latency_seconds_count{engine="0"} 4\n'
        'vllm:e2e_request_latency_seconds_sum{engine="0"} 6.5\n'
    )
    snapshot = parse_exposition(text, "untyped")
    assert "vllm:num_preemptions_total" in snapshot.counters
    assert "vllm:num_requests_running" in snapshot.gauges
    (series,) = snapshot.histogram("vllm:e2e_request_latency_seconds")
    assert series.count == 4 and series.sum == 6.5
    assert series.buckets[0] == (1.0, 3.0)


def test_engines_of_one_server_are_summed_and_kv_usage_averaged():
    text = (
        "# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{engine="0"} 2\nvllm:num_requests_running{engine="1"} 5\n'
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        'vllm:kv_cache_usage_perc{engine="0"} 0.5\nvllm:kv_cache_usage_perc{engine="1"} 0.9\n'
    )
    snapshot = parse_exposition(text, "dp2")
    assert snapshot.value("vllm:num_requests_running") == 7
    assert snapshot.value("vllm:kv_cache_usage_perc") == pytest.approx(0.7)


def test_two_snapshots_give_rates_and_percentiles_over_the_window_only():
    before = load_file(FIXTURES / "metrics_before.txt")
    after = load_file(FIXTURES / "metrics_after.txt")
    window = window_between(before, after, interval_s=10.0)
    assert window.total.rate("vllm:num_preemptions_total") == pytest.approx(2.0)
    assert window.total.ratio("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total") == pytest.approx(0.1)
    # the 10 new TTFT observations were all 3.0 s: the window's p50 lies in (2.5, 5], not the
    # cumulative p50 of ~0.2 s
    assert 2.5 < window.total.quantile("vllm:time_to_first_token_seconds", "p50") <= 5.0


def test_window_between_files_without_interval_is_a_user_error(tmp_path):
    text = (FIXTURES / "metrics_v0_33_0.txt").read_text()
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(text)
    second.write_text(text)
    snapshot = load_file(first)
    with pytest.raises(MetricsError, match="--metrics-interval"):
        window_between(snapshot, snapshot.model_copy(), interval_s=None)


def test_malformed_line_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text('# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0" 3\n')
    with pytest.raises(MetricsError) as caught:
        load_file(bad)
    message = str(caught.value)
    assert str(bad) in message and "line 2" in message and "\n" not in message


@pytest.mark.parametrize("text", ["", "   \n", "<html><body>Login</body></html>\n"])
def test_empty_or_non_metrics_text_is_rejected(text):
    with pytest.raises(MetricsError):
        parse_exposition(text, "input")


def test_metrics_without_vllm_series_is_rejected():
    with pytest.raises(MetricsError, match="no vllm:\\* metrics"):
        parse_exposition("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n", "node")


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(MetricsError, match="cannot read"):
        load_file(tmp_path / "nope.txt")


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/metrics"),
        ("127.0.0.1:8000/", "http://127.0.0.1:8000/metrics"),
        ("http://h:1/v1", "http://h:1/metrics"),
        ("http://h:1/metrics", "http://h:1/metrics"),
    ],
)
def test_endpoint_forms_map_to_the_metrics_url(endpoint, url):
    assert metrics_url(endpoint) == url


class _MetricsHandler(http.server.BaseHTTPRequestHandler):
    body = (FIXTURES / "metrics_v0_33_0.txt").read_bytes()

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path != "/metrics":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def metrics_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _MetricsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_scrape_reads_a_live_endpoint(metrics_server):
    snapshot = scrape(metrics_server)
    assert snapshot.source.endswith("/metrics")
    assert snapshot.value("vllm:num_requests_running") == 8
    assert snapshot.taken_at_s is not None


def test_scrape_pair_measures_a_window(metrics_server):
    before, after = scrape_pair(metrics_server, interval_s=0.2)
    window = window_between(before, after, 0.2)
    assert window.total.rate("vllm:num_preemptions_total") == 0.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_endpoint_is_one_line_naming_the_url():
    port = _free_port()
    with pytest.raises(MetricsError) as caught:
        scrape(f"http://127.0.0.1:{port}", timeout_s=2)
    assert f"127.0.0.1:{port}" in str(caught.value) and "cannot reach" in str(caught.value)


def test_silent_endpoint_times_out_with_one_line():
    with socket.socket() as listener:  # accepts connections (backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        with pytest.raises(MetricsError, match="within 0.5 s"):
            scrape(f"http://127.0.0.1:{port}", timeout_s=0.5)


def test_http_error_status_is_named(metrics_server):
    with pytest.raises(MetricsError, match="HTTP 404"):
        scrape(metrics_server + "/nothing-here/metrics")
