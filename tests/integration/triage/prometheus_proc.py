"""Start a real Prometheus server (Debian's `prometheus` binary) on 127.0.0.1 for a test.

It scrapes the given targets every second into a temporary TSDB, and is always stopped
(SIGTERM, then SIGKILL) when the block ends. Tests skip with a reason when the binary is
missing (`apt-get install prometheus`; scripts/install.sh does it as root).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

STARTUP_TIMEOUT_S = 90.0


def prometheus_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("the prometheus binary is not installed (apt-get install prometheus)")
    return binary


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_prometheus(
    targets: list[str], workdir: Path, job: str = "vllm", rule_files: list[Path] | None = None
) -> Iterator[str]:
    """Prometheus scraping `targets` (host:port) every 1 s as job `job`, evaluating `rule_files`;
    yields its base URL."""
    binary = prometheus_binary()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        + (f"rule_files: {json.dumps([str(path) for path in rule_files])}\n" if rule_files else "")
        + f"scrape_configs:\n  - job_name: {job}\n    scrape_timeout: 1s\n    static_configs:\n"
        f"      - targets: {json.dumps(targets)}\n"
    )
    port = _free_port()
    log_path = workdir / "prometheus.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process, log_path)
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def query(url: str, promql: str) -> list[dict]:
    address = f"{url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(address, timeout=10) as response:
        return json.loads(response.read())["data"]["result"]


def wait_for_samples(url: str, metric: str, series: int, samples: int, timeout_s: float = 60.0) -> None:
    """Until `series` series of `metric` each hold ≥ `samples` points in the last minute (bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = query(url, f"count_over_time({metric}[1m])")
        if len(rows) >= series and all(float(row["value"][1]) >= samples for row in rows):
            return
        time.sleep(0.5)
    raise AssertionError(f"Prometheus at {url} did not collect {samples} samples of {metric} in {timeout_s:.0f} s")


def _wait_ready(url: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"prometheus exited with {process.returncode}:\n{log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise AssertionError(f"prometheus not ready after {STARTUP_TIMEOUT_S:.0f} s:\n{log_path.read_text()[-2000:]}")


def alerts(url: str) -> list[dict]:
    """Prometheus's active alerts (pending and firing), from /api/v1/alerts."""
    with urllib.request.urlopen(f"{url}/api/v1/alerts", timeout=10) as response:
        return json.loads(response.read())["data"]["alerts"]
