"""Reading the four server signals from Prometheus text, old and new vLLM spellings."""

import http.server
import threading
import time

import pytest

from loadtest.server_signals import MetricsSampler, Sample, parse_prometheus_text, summarise

TEXT = """# HELP vllm:num_requests_running Number of requests
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
vllm:num_requests_waiting{model_name="m",engine="0"} 4.0
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:gpu_cache_usage_perc{engine="1",model_name="m"} 0.7
vllm:num_preemptions_total{engine="0",model_name="m"} 10.0
vllm:num_preemptions_created{engine="0",model_name="m"} 1.7e9
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="m"} 3.0
"""


def test_series_are_collected_per_name_and_others_ignored():
    values = parse_prometheus_text(TEXT)
    assert values["vllm:num_requests_running"] == [3.0, 2.0]
    assert values["vllm:gpu_cache_usage_perc"] == [0.5, 0.7]
    assert "vllm:time_to_first_token_seconds_bucket" not in values


def test_summary_sums_engines_averages_kv_and_rates_preemptions():
    first = parse_prometheus_text(TEXT)
    later = parse_prometheus_text(TEXT.replace("} 10.0", "} 16.0"))
    samples = [Sample(ts=100.0, values=first), Sample(ts=103.0, values=later), Sample(ts=200.0, values=first)]
    signals = summarise(samples, 99.0, 110.0)
    assert signals.samples == 2 and signals.kv_metric == "vllm:gpu_cache_usage_perc"
    assert signals.kv_cache_usage_mean == pytest.approx(0.6)
    assert signals.running_max == 5.0 and signals.waiting_mean == 4.0
    assert signals.preemptions_per_s == pytest.approx(2.0)


def test_no_samples_in_the_window_means_no_server_signals():
    assert summarise([Sample(ts=1.0, values={})], 5.0, 6.0) is None


def test_calibration_counters_are_deltas_over_the_window_from_real_vllm_text():
    """Two /metrics scrapes real vLLM 0.32 (CPU) exposed around a saturated step (the recorded corpus)."""
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu"
    before = parse_prometheus_text((corpus / "saturated_before.prom").read_text())
    after = parse_prometheus_text((corpus / "saturated_after.prom").read_text())
    signals = summarise([Sample(ts=100.0, values=before), Sample(ts=110.0, values=after)], 100.0, 111.0)
    steps = after["vllm:iteration_tokens_total_count"][0] - before["vllm:iteration_tokens_total_count"][0]
    tokens = after["vllm:iteration_tokens_total_sum"][0] - before["vllm:iteration_tokens_total_sum"][0]
    assert steps > 0
    assert signals.engine_steps_per_s == pytest.approx(steps / 10.0)
    assert signals.tokens_per_step_mean == pytest.approx(tokens / steps)
    done = after["vllm:request_prefill_time_seconds_count"][0] - before["vllm:request_prefill_time_seconds_count"][0]
    spent = after["vllm:request_prefill_time_seconds_sum"][0] - before["vllm:request_prefill_time_seconds_sum"][0]
    assert signals.prefill_time_mean_s == pytest.approx(spent / done)
    gen = after["vllm:generation_tokens_total"][0] - before["vllm:generation_tokens_total"][0]
    assert signals.generation_tokens_per_s == pytest.approx(gen / 10.0)


def test_calibration_counters_need_two_samples():
    one = summarise([Sample(ts=1.0, values=parse_prometheus_text(TEXT))], 0.0, 2.0)
    assert one.engine_steps_per_s is None and one.prefill_time_mean_s is None and one.tokens_per_step_mean is None


def _base(name: str) -> str:
    for suffix in ("_total", "_sum", "_count"):
        name = name.removesuffix(suffix)
    return name


def test_every_spelling_rules_knows_of_a_sampled_metric_is_sampled_too():
    """loadtest may not import rules, so the ramp names the series it samples itself; when
    rules/metrics.py learns another spelling of one of them (a vLLM rename), a ramp against a server
    with that spelling would record no signal for it until loadtest/server_signals.py learns it too."""
    from loadtest.server_signals import WANTED
    from rules.metrics import METRIC_ALIASES

    sampled = {_base(name) for name in WANTED}
    for canonical, spellings in METRIC_ALIASES.items():
        bases = {_base(name) for name in spellings}
        if bases & sampled:
            assert bases <= sampled, (
                f"rules/metrics.py spells {canonical} also as {sorted(bases - sampled)}; "
                "loadtest/server_signals.py samples it but not under that name: add it there (WANTED and the reader)"
            )


def test_a_metrics_endpoint_that_answers_late_still_gives_a_sample():
    """A saturated server answers /metrics late (2.5 s here); the sampler's default waits for it rather than dropping
    the saturated step's signals."""

    class Late(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            time.sleep(2.5)
            body = TEXT.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Late)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert MetricsSampler(f"http://127.0.0.1:{server.server_address[1]}/metrics").probe()
    finally:
        server.shutdown()
        server.server_close()
