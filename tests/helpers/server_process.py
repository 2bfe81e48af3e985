"""Start `python -m engine serve` as a real process on 127.0.0.1 for a test, and always stop it.

Why a real process: the triage, ramp and demo tests must see the engine exactly as they
would see vLLM: over HTTP and through its log file, nothing imported. Use it like this:

    from tests.helpers.server_process import running_server, tiny_model_dir  # noqa: F401 (fixture)

    def test_something(tiny_model_dir):
        with running_server(tiny_model_dir, "--max-num-seqs", "4") as server:
            httpx_or_urllib.get(server.base_url + "/v1/models")   # http://127.0.0.1:<port>
            assert "Starting vLLM server on" in server.log_text()

`running_server(model, *flags, env=None, startup_timeout_s=240, stop_timeout_s=60)` picks a
free port, starts the server with its stdout+stderr in a log file (`server.log_path`), polls
GET /health until 200 (bounded; raises `ServerStartError` with the log's tail if the process
exits or the time runs out), yields a `ServerHandle`, and on exit sends SIGTERM, waits
`stop_timeout_s`, then SIGKILLs. `model=None` serves the embedded SmolLM2-135M-Instruct.

Fixtures (import them into your test module or conftest):
- `tiny_model_dir` (session): a tiny random Llama from `tests.helpers.tiny_model`, built once.
- `tiny_server` (module): a server on that model with a small KV budget, shared by a module.

`ServerHandle` has `base_url` (no trailing slash), `openai_base_url` (`…/v1`), `port`,
`model` (the served model name), `log_path`, `process`, and helpers `get(path)`,
`metrics_text()`, `log_text()`, `wait_for_log(text, timeout_s)`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# A small KV pool: enough for the tests, cheap to allocate on a shared 2-core CI box.
TINY_SERVER_FLAGS: tuple[str, ...] = ("--device-memory-gib", "0.25")
HEALTH_POLL_S = 0.25


class ServerStartError(RuntimeError):
    """The server did not become healthy; the message ends with the log's tail."""


@dataclass
class ServerHandle:
    base_url: str
    port: int
    model: str
    log_path: Path
    process: subprocess.Popen

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def get(self, path: str, timeout_s: float = 30.0) -> tuple[int, bytes, Mapping[str, str]]:
        """(status, body, headers) of GET path; HTTP errors are returned, not raised."""
        try:
            with urllib.request.urlopen(self.base_url + path, timeout=timeout_s) as response:
                return response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), dict(exc.headers)

    def post_json(self, path: str, payload: dict, timeout_s: float = 120.0) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.base_url + path, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def metrics_text(self) -> str:
        status, body, _ = self.get("/metrics")
        assert status == 200, f"/metrics answered {status}"
        return body.decode()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, text: str, timeout_s: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.log_text():
                return True
            time.sleep(0.2)
        return False


def free_port() -> int:
    """A port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(
    model: str | Path | None,
    *flags: str,
    env: Mapping[str, str] | None = None,
    startup_timeout_s: float = 240.0,
    stop_timeout_s: float = 60.0,
    log_dir: str | Path | None = None,
) -> Iterator[ServerHandle]:
    """A healthy server on a free loopback port for the duration of the block (see module doc)."""
    port = free_port()
    log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="servops-server-"))
    log_path = log_dir / f"engine-{port}.log"
    command = [sys.executable, "-m", "engine", "serve"]
    if model is not None:
        command.append(str(model))
    command += ["--host", "127.0.0.1", "--port", str(port), *flags]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=full_env, cwd=REPO_ROOT)
    handle = ServerHandle(base_url=f"http://127.0.0.1:{port}", port=port, model="", log_path=log_path, process=process)
    try:
        _wait_healthy(handle, startup_timeout_s)
        handle.model = _served_model(handle)
        yield handle
    finally:
        stop_server(process, stop_timeout_s)


def stop_server(process: subprocess.Popen, timeout_s: float = 60.0) -> int:
    """SIGTERM, wait up to timeout_s, then SIGKILL; returns the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
    return process.returncode


def _wait_healthy(handle: ServerHandle, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if handle.process.poll() is not None:
            raise ServerStartError(
                f"server exited with code {handle.process.returncode} before it was healthy; "
                f"log tail:\n{_tail(handle.log_path)}"
            )
        try:
            with urllib.request.urlopen(handle.base_url + "/health", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(HEALTH_POLL_S)
    raise ServerStartError(f"server not healthy after {timeout_s:.0f} s; log tail:\n{_tail(handle.log_path)}")


def _served_model(handle: ServerHandle) -> str:
    status, body, _ = handle.get("/v1/models")
    if status != 200:
        return ""
    return json.loads(body)["data"][0]["id"]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama (byte tokenizer, chat template) built once per session."""
    from tests.helpers.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def tiny_server(tiny_model_dir: Path) -> Iterator[ServerHandle]:
    """A server on the tiny model, shared by the tests of one module."""
    with running_server(tiny_model_dir, *TINY_SERVER_FLAGS) as server:
        yield server
