"""`servops ramp` says when it measured nothing: every request failed, no master, not HTTP.

A fake OpenAI server on 127.0.0.1 that answers every generation with HTTP 500 stands for a
server that rejects everything (vLLM's 404 for an unknown model behaves the same here); a raw
TCP listener that answers with a non-HTTP banner stands for the wrong port.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.helpers.fake_openai_server import FakeServer
from tests.helpers.server_process import free_port

pytestmark = pytest.mark.integration


def test_ramp_where_every_request_failed_exits_2_and_keeps_the_result(servops, tmp_path):
    result_path = tmp_path / "ramp.json"
    with FakeServer("--mode", "error_500") as server:
        outcome = servops(
            "ramp",
            "--endpoint",
            server.url,
            "--model",
            "fake-model",
            "--concurrency",
            "1",
            "--step-seconds",
            "2",
            "--warmup-seconds",
            "0",
            "--cooldown-seconds",
            "1",
            "--json",
            str(result_path),
        )
    line = outcome.assert_one_line_error("ramp", "every one of the", "failed", "--model", str(result_path))
    assert "HTTP 500" in line or "500" in line
    assert json.loads(result_path.read_text())["kind"] == "ramp"  # the measurement is kept


def test_worker_without_master_gives_up_with_one_line(servops):
    port = free_port()
    outcome = servops("ramp", "--worker", "--master-port", str(port), "--master-timeout", "1")
    outcome.assert_one_line_error("ramp", "--worker", f"127.0.0.1:{port}", "--master-host")


@pytest.fixture
def not_http() -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def answer() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.mark.parametrize(
    "argv",
    [
        ("ramp", "--endpoint", "{url}", "--concurrency", "1"),
        ("triage", "--endpoint", "{url}", "--timeout", "2"),
    ],
)
def test_an_endpoint_that_is_not_http_is_named_as_such(servops, not_http, argv):
    argv = tuple(arg.format(url=not_http) for arg in argv)
    servops(*argv).assert_one_line_error(argv[0], "--endpoint", "did not answer HTTP")
