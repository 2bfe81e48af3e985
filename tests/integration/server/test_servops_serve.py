"""`servops serve` runs `python -m engine serve` as a child and forwards SIGTERM to it.

Slow: one more server start (tens of seconds on a busy 2-core box).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psutil
import pytest

from tests.helpers.server_process import REPO_ROOT, TINY_SERVER_FLAGS, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_servops_serve_serves_the_engine_and_sigterm_stops_both_processes(tiny_model_dir, tmp_path):
    port = free_port()
    log_path = tmp_path / "servops-serve.log"
    with open(log_path, "wb") as log_file:
        servops = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "advisor",
                "serve",
                str(tiny_model_dir),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--served-model-name",
                "tiny",
                *TINY_SERVER_FLAGS,
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        models = None
        deadline = time.monotonic() + 240
        while models is None and time.monotonic() < deadline and servops.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as response:
                    models = json.loads(response.read())
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        assert models is not None, log_path.read_text()
        assert models["data"][0]["id"] == "tiny"
        (engine,) = psutil.Process(servops.pid).children()
        assert engine.cmdline()[1:4] == ["-m", "engine", "serve"]

        servops.send_signal(signal.SIGTERM)
        assert servops.wait(60) == 0
        assert not engine.is_running() or engine.status() == psutil.STATUS_ZOMBIE
        assert "Application shutdown complete." in log_path.read_text()
    finally:
        if servops.poll() is None:
            children = psutil.Process(servops.pid).children(recursive=True)
            servops.kill()
            servops.wait(30)
            for child in children:
                child.kill()
