"""The exported pack in a real Prometheus scraping the bundled engine: silent while the server is
idle, and `VllmRequestsQueueing` (OP-5.2) firing under the load its rule was written for, seen
through Prometheus's own /api/v1/alerts.

The load: a server admitting one request at a time (`--max-num-seqs 1`) and four clients streaming
long completions, so requests wait to start. The pack is the one `servops alerts export` writes,
its expressions untouched; only its `for:` durations are shortened to 5 s and its groups evaluated
every second, so the test does not wait five minutes for a situation that holds from the first
second.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from advisor.cli.main import main
from tests.helpers.alert_replays import fast_pack
from tests.helpers.server_process import TINY_SERVER_FLAGS, running_server, tiny_model_dir  # noqa: F401
from tests.integration.triage.prometheus_proc import alerts, prometheus_binary, running_prometheus, wait_for_samples

pytestmark = pytest.mark.integration

STREAMS = 4
LOAD_MAX_S = 120.0  # the load never outlives this, whatever the assertions do
FIRING_WITHIN_S = 60.0


def _stream_until(base_url: str, model: str, stop: threading.Event) -> None:
    """Back-to-back long completions until `stop`, bounded by LOAD_MAX_S."""
    deadline = time.monotonic() + LOAD_MAX_S
    body = json.dumps({"model": model, "prompt": "a b c d", "max_tokens": 120, "ignore_eos": True}).encode()
    while not stop.is_set() and time.monotonic() < deadline:
        request = urllib.request.Request(
            f"{base_url}/v1/completions", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
        except OSError:
            time.sleep(0.2)


def _state(url: str, name: str) -> dict | None:
    return next((a for a in alerts(url) if a["labels"]["alertname"] == name), None)


def test_the_queueing_alert_fires_under_load_and_not_before(tiny_model_dir: Path, tmp_path: Path):  # noqa: F811
    prometheus_binary()  # skips, saying why, without Prometheus
    pack = tmp_path / "pack.yml"
    assert main(["alerts", "export", "-o", str(pack)]) == 0
    fast_pack(pack)
    with running_server(tiny_model_dir, *TINY_SERVER_FLAGS, "--max-num-seqs", "1", log_dir=tmp_path) as server:
        target = f"127.0.0.1:{server.port}"
        with running_prometheus([target], tmp_path / "prometheus", rule_files=[pack]) as url:
            wait_for_samples(url, "vllm:num_requests_waiting", series=1, samples=5)
            time.sleep(6)  # longer than `for:` on an idle server
            assert _state(url, "VllmRequestsQueueing") is None, alerts(url)
            stop = threading.Event()
            clients = [
                threading.Thread(target=_stream_until, args=(server.base_url, server.model, stop), daemon=True)
                for _ in range(STREAMS)
            ]
            for client in clients:
                client.start()
            try:
                deadline, firing = time.monotonic() + FIRING_WITHIN_S, None
                while time.monotonic() < deadline and firing is None:
                    state = _state(url, "VllmRequestsQueueing")
                    firing = state if state and state["state"] == "firing" else None
                    time.sleep(1)
            finally:
                stop.set()
                for client in clients:
                    client.join(70)
    assert firing is not None, "VllmRequestsQueueing did not fire within 60 s of four streams at --max-num-seqs 1"
    assert firing["labels"]["rule"] == "OP-5.2" and firing["labels"]["severity"] == "warning"
    assert firing["labels"]["instance"] == target and float(firing["value"]) >= 1
    assert firing["annotations"]["runbook_url"].endswith("#op-52-requests-queue-saturation")
    assert "request(s) waiting to start" in firing["annotations"]["description"]
