"""--max-num-queued-reqs answers 503 like vLLM 0.32+; SIGTERM drains in-flight requests and exits 0.

One server with one sequence slot, one queue slot and --enable-force-include-usage serves this
module. The SIGTERM test
stops it, so it is the last test here.
"""

from __future__ import annotations

import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api.errors import BUSY_MESSAGE
from tests.helpers.server_process import TINY_SERVER_FLAGS, ServerHandle, running_server
from tests.integration.server.prom import value, wait_until
from tests.integration.server.sse import open_stream

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def limited(tiny_model_dir: Path) -> Iterator[ServerHandle]:
    flags = (
        "--max-num-seqs",
        "1",
        "--max-num-queued-reqs",
        "1",
        "--shutdown-timeout",
        "60",
        "--enable-force-include-usage",
    )
    with running_server(tiny_model_dir, *TINY_SERVER_FLAGS, *flags) as handle:
        yield handle


def _long_stream(server: ServerHandle, max_tokens: int = 200):
    return open_stream(
        server.port,
        "/v1/completions",
        {
            "model": server.model,
            "prompt": "long",
            "max_tokens": max_tokens,
            "stream": True,
            "ignore_eos": True,
            "stream_options": {"include_usage": True},
        },
    )


def test_full_queue_answers_503_engine_busy_and_counts_the_rejection(limited):
    # near the tiny model's 512-token limit: the slot must stay held while the queue fills and
    # the third request is refused (200 tokens once finished first on a loaded 2-core box);
    # closing the stream aborts it, so the length costs nothing
    running = _long_stream(limited, max_tokens=480)
    events = iter(running)
    assert next(events) != "[DONE]"  # holds the only sequence slot
    queued_result: dict = {}

    def send_queued() -> None:
        queued_result["status"], queued_result["body"] = limited.post_json(
            "/v1/completions", {"model": limited.model, "prompt": "queued", "max_tokens": 2}
        )

    queued = threading.Thread(target=send_queued)
    queued.start()
    wait_until(limited, lambda text: value(text, "vllm:num_requests_waiting") == 1)

    status, body = limited.post_json("/v1/completions", {"model": limited.model, "prompt": "third", "max_tokens": 2})
    assert status == 503
    assert body["error"] == {"message": BUSY_MESSAGE, "type": "Service Unavailable", "param": None, "code": 503}
    assert value(limited.metrics_text(), "vllm:admission_rejections_total", reason="max_num_queued_reqs") == 1

    running.close()  # frees the slot: the queued request runs
    queued.join(120)
    assert queued_result.get("status") == 200


def test_force_include_usage_sends_the_usage_chunk_unasked(limited):
    stream = open_stream(
        limited.port,
        "/v1/chat/completions",
        {
            "model": limited.model,
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 3,
            "stream": True,
            "ignore_eos": True,
        },
    )
    chunks = stream.chunks()
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3


def test_sigterm_stops_listening_lets_in_flight_stream_finish_and_exits_0(limited):
    stream = _long_stream(limited, max_tokens=120)
    events = iter(stream)
    assert next(events) != "[DONE]"
    limited.process.send_signal(signal.SIGTERM)

    refused = False
    deadline = time.monotonic() + 20
    while not refused and time.monotonic() < deadline:
        try:
            urllib.request.urlopen(limited.base_url + "/health", timeout=2).close()
            time.sleep(0.1)
        except (urllib.error.URLError, ConnectionError):
            refused = True
    assert refused, "still accepting connections after SIGTERM"

    rest = list(events)
    assert rest[-1] == "[DONE]"
    usage = [chunk for chunk in stream.chunks() if chunk.get("usage")]
    assert usage and usage[-1]["usage"]["completion_tokens"] == 120
    assert limited.process.wait(60) == 0
    log = limited.log_text()
    assert "Application shutdown complete." in log and "Traceback" not in log
