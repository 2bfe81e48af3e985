"""A client that drops mid-stream: the request is aborted and every KV block comes back."""

from __future__ import annotations

import pytest

from tests.integration.server.prom import value, wait_until
from tests.integration.server.sse import open_stream

pytestmark = pytest.mark.integration


def test_client_disconnect_mid_stream_aborts_and_returns_every_block(server):
    aborts_before = value(server.metrics_text(), "vllm:request_success_total", finished_reason="abort")
    stream = open_stream(
        server.port,
        "/v1/completions",
        {
            "model": server.model,
            "prompt": "d" * 40,
            "max_tokens": 200,
            "stream": True,
            "temperature": 0,
            "ignore_eos": True,
        },
    )
    events = iter(stream)
    received = [next(events) for _ in range(3)]
    assert all(event != "[DONE]" for event in received)
    during = server.metrics_text()
    assert value(during, "vllm:kv_cache_usage_perc") > 0  # the request holds blocks right now
    stream.close()

    after = wait_until(
        server,
        lambda text: (
            value(text, "vllm:request_success_total", finished_reason="abort") == aborts_before + 1
            and value(text, "vllm:kv_cache_usage_perc") == 0.0
        ),
    )
    assert value(after, "vllm:request_success_total", finished_reason="abort") == aborts_before + 1
    assert value(after, "vllm:kv_cache_usage_perc") == 0.0
    assert value(after, "vllm:num_requests_running") == 0
    assert value(after, "vllm:request_success_total", finished_reason="length") == value(
        during, "vllm:request_success_total", finished_reason="length"
    )
    assert server.wait_for_log("Aborted request cmpl-")
