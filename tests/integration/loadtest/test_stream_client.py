"""The raw streaming client against a real SSE server with known timing (fake_openai_server).

Proves there is no buffering: with 60 ms between tokens every event must be seen on its
own, ~60 ms after the previous one (a buffering client would see several at once, gap ~0).
"""

import socket
import statistics
import time

import pytest

from loadtest.http_stream import Endpoint
from loadtest.records import measure_request
from tests.helpers.fake_openai_server import FakeServer

pytestmark = pytest.mark.integration

BODY = {
    "model": "fake-model",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}


@pytest.fixture(scope="module")
def server():
    with FakeServer("--ttft", "0.01", "--gap", "0.005", "--tokens", "6") as running:
        _measure(running.url)  # the first request pays the server's one-time setup; keep it out of the timings
        yield running


def _measure(url: str, timeout_s: float = 10.0, path: str = "/v1/chat/completions", body=BODY):
    return measure_request(
        Endpoint.parse(url), path, body, step=0, index=0, intended_send_ts=time.time(), timeout_s=timeout_s
    )


def test_every_event_is_timestamped_on_arrival_not_buffered(server):
    record = _measure(server.url + "/ttft=0.2,gap=0.06,tokens=8")
    assert record.ok, record.error_message
    assert record.content_chunks == 8 and len(record.gaps_s) == 7
    assert min(record.gaps_s) > 0.03, f"events arrived together: {record.gaps_s}"
    assert statistics.median(record.gaps_s) == pytest.approx(0.06, abs=max(0.002, 0.05 * 0.06))
    assert record.ttft_s == pytest.approx(0.2, abs=0.2 * 0.05 + 0.01)
    assert record.e2e_s >= record.ttft_s + sum(record.gaps_s) - 1e-9


def test_completions_stream_and_usage_tokens_are_read(server):
    body = {**BODY, "prompt": "hi"}
    record = _measure(server.url + "/tokens=5", path="/v1/completions", body=body)
    assert record.ok and record.output_tokens == 5 and record.token_source == "usage"


def test_without_usage_the_streamed_text_is_kept_for_counting(server):
    body = {k: v for k, v in BODY.items() if k != "stream_options"}
    record = _measure(server.url + "/tokens=4", body=body)
    assert record.ok and record.output_tokens is None and record.tokens == 4
    assert record.output_text == " tok0 tok1 tok2 tok3"


@pytest.mark.parametrize(
    ("mode", "error_type"),
    [
        ("non_streaming", "not_streaming"),
        ("malformed", "malformed_sse"),
        ("error_500", "http_500"),
        ("drop_mid_stream", "incomplete_stream"),
        ("error_event", "stream_error"),
    ],
)
def test_misbehaving_servers_give_a_named_error_not_a_hang(server, mode, error_type):
    started = time.monotonic()
    record = _measure(f"{server.url}/mode={mode}", timeout_s=10)
    elapsed_s = time.monotonic() - started
    assert record.error_type == error_type, record.error_message
    assert record.error_message
    assert elapsed_s < 5


def test_refused_connection_is_an_error_record():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    record = _measure(f"http://127.0.0.1:{port}")
    assert record.error_type == "connect_refused"


def test_slow_server_times_out_within_the_request_timeout(server):
    started = time.monotonic()
    record = _measure(server.url + "/ttft=5,tokens=2", timeout_s=0.5)
    elapsed_s = time.monotonic() - started
    assert record.error_type == "timeout"
    assert elapsed_s < 3


def test_api_key_is_sent_as_a_bearer_token_and_a_missing_one_is_a_clear_error():
    from loadtest.errors import LoadTestError
    from loadtest.runner import RampConfig, preflight

    with FakeServer("--api-key", "s3cret", "--ttft", "0.01", "--gap", "0.005", "--tokens", "3") as keyed:
        config = RampConfig(endpoint=keyed.url, mode="rate", levels=[1], step_s=1, warmup_s=0)
        with pytest.raises(LoadTestError, match="--api-key"):
            preflight(config)
        assert preflight(config.model_copy(update={"api_key": "s3cret"})) == "fake-model"
        assert "api_key" not in config.model_copy(update={"api_key": "s3cret"}).model_dump()
        refused = _measure(keyed.url)
        accepted = measure_request(
            Endpoint.parse(keyed.url),
            "/v1/chat/completions",
            BODY,
            step=0,
            index=0,
            intended_send_ts=time.time(),
            timeout_s=10,
            headers={"Authorization": "Bearer s3cret"},
        )
    assert refused.error_type == "http_401"
    assert accepted.ok and accepted.output_tokens == 3
