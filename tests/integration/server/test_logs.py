"""vLLM's log lines: startup (API side), per-request lines and the periodic stats line."""

from __future__ import annotations

import re
import time

import pytest

pytestmark = pytest.mark.integration

STATS_LINE = re.compile(
    r"Engine 000: Avg prompt throughput: \d+\.\d tokens/s, Avg generation throughput: \d+\.\d tokens/s, "
    r"Running: \d+ reqs, Waiting: \d+ reqs(, Preemptions: \d+)?, CPU KV cache usage: \d+\.\d%"
    r"(, Prefix cache hit rate: \d+\.\d%)?$",
    re.MULTILINE,
)


def test_startup_lines_follow_vllm_wording(server):
    log = server.log_text()
    assert re.search(r"\(APIServer pid=\d+\) INFO .* vLLM server version 0\.33\.0\+servops\S*, serving model ", log)
    assert "non-default args: {" in log and "'max_model_len': 256" in log
    assert f"Starting vLLM server on http://127.0.0.1:{server.port}" in log
    assert "Available routes are:" in log
    assert "Route: /v1/chat/completions, Methods: POST" in log
    assert "INFO:     Application startup complete." in log


def test_each_request_logs_received_and_added_lines_and_an_access_line(server):
    status, body = server.post_json("/v1/completions", {"model": server.model, "prompt": "log me", "max_tokens": 2})
    assert status == 200
    request_id = body["id"]
    assert server.wait_for_log(f"Added request {request_id}.")
    # uvicorn writes the access line once the response is sent, which the client may read first: on a
    # loaded box (two test workers) the line landed after the log was read, so wait for it too.
    assert server.wait_for_log('"POST /v1/completions HTTP/1.1" 200 OK')
    log = server.log_text()
    assert f"Received request {request_id}: prompt: 'log me', params: SamplingParams(" in log
    assert re.search(r'INFO:     127\.0\.0\.1:\d+ - "POST /v1/completions HTTP/1\.1" 200 OK', log)


def test_stats_line_is_logged_every_interval_while_busy(server):
    # VLLM_LOG_STATS_INTERVAL=1 on this server; keep it busy for a few intervals.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        server.post_json(
            "/v1/completions", {"model": server.model, "prompt": "busy", "max_tokens": 16, "ignore_eos": True}
        )
    assert server.wait_for_log("Avg generation throughput", timeout_s=10)
    lines = STATS_LINE.findall(server.log_text())
    assert lines, "no stats line in vLLM 0.33 format"
    assert re.search(r"Avg generation throughput: (?!0\.0)\d+\.\d tokens/s", server.log_text())
