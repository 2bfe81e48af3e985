"""A dead engine loop: /health 503, in-flight streams get vLLM's error event, new requests 500.

The fault is the test-only hook `SERVOPS_TEST_FAULT_FILE`: once the file exists, the next
engine step raises inside the engine thread, which is the real failure path. It kills the
package's shared server for good, so it is marked to run after every other test.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from engine.api.errors import ENGINE_DEAD_MESSAGE
from tests.integration.server.conftest import KILLS_SHARED_SERVER
from tests.integration.server.sse import open_stream

pytestmark = [pytest.mark.integration, getattr(pytest.mark, KILLS_SHARED_SERVER)]


def test_dead_engine_loop_turns_health_503_and_requests_into_vllm_500s(server, fault_file):
    assert server.get("/health")[0] == 200
    stream = open_stream(
        server.port,
        "/v1/completions",
        {"model": server.model, "prompt": "doomed", "max_tokens": 200, "stream": True, "ignore_eos": True},
    )
    events = iter(stream)
    assert next(events) != "[DONE]"
    fault_file.touch()
    rest = list(events)

    assert rest[-1] == "[DONE]"
    errors = [json.loads(event)["error"] for event in rest[:-1] if "error" in json.loads(event)]
    assert errors == [{"message": ENGINE_DEAD_MESSAGE, "type": "InternalServerError", "param": None, "code": 500}]

    deadline = time.monotonic() + 10
    while server.get("/health")[0] != 503 and time.monotonic() < deadline:
        time.sleep(0.2)
    status, body, _ = server.get("/health")
    assert (status, body) == (503, b"")

    status, body = server.post_json(
        "/v1/chat/completions",
        {"model": server.model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
    )
    assert status == 500 and body["error"]["message"] == ENGINE_DEAD_MESSAGE

    log = server.log_text()
    assert re.search(r"\(EngineCore pid=\d+\) ERROR .* EngineCore encountered a fatal error\.", log)
    assert "AsyncLLM output_handler failed." in log
    assert "RuntimeError: injected engine fault" in log
    assert server.get("/metrics")[0] == 200  # still scrapeable, so triage can see what happened
