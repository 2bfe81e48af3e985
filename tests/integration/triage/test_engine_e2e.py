"""End to end with the bundled engine as a real process, exactly as an operator meets vLLM.

(a) A launch that cannot fit one max-length request fails at startup; triage reads its log
    and the launch command, proposes a --max-model-len, and the engine started with the
    proposed command comes up healthy and serves at that length.
(b) A live server with a tiny KV pool (8 blocks × 16 tokens) under concurrent long
    generations preempts; triage from its /metrics (two scrapes) ranks the preemption/KV
    finding first — and so does triage through a real Prometheus scraping the same engine.

Each engine start costs tens of seconds on a shared 2-core box, hence `slow`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.collect.server_args import parse_command
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest
from tests.helpers.server_process import (
    REPO_ROOT,
    ServerHandle,
    free_port,
    running_server,
    tiny_model_dir,  # noqa: F401 (session fixture)
)
from tests.integration.triage.prometheus_proc import prometheus_binary, running_prometheus, wait_for_samples

pytestmark = [pytest.mark.slow, pytest.mark.integration]

LONG_CONTEXT = 1_048_576  # the model allows it; 0.15 GiB of device memory cannot hold one such request
DEVICE_GIB = "0.15"


@pytest.fixture(scope="module")
def long_context_model(tmp_path_factory) -> Path:
    from tests.helpers.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-long"), max_position_embeddings=LONG_CONTEXT)


def test_failed_launch_is_triaged_and_the_proposed_max_model_len_starts(long_context_model, tmp_path):
    launch = (
        f"python -m engine serve {long_context_model} --max-model-len {LONG_CONTEXT} --device-memory-gib {DEVICE_GIB}"
    )
    log_path = tmp_path / "failed.log"
    with open(log_path, "wb") as log:
        failed = subprocess.run(
            [
                sys.executable,
                "-m",
                "engine",
                "serve",
                str(long_context_model),
                "--max-model-len",
                str(LONG_CONTEXT),
                "--device-memory-gib",
                DEVICE_GIB,
                "--host",
                "127.0.0.1",
                "--port",
                str(free_port()),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
            timeout=300,
        )
    assert failed.returncode != 0, log_path.read_text()[-2000:]

    json_path = tmp_path / "triage.json"
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "advisor",
            "triage",
            "--logs",
            str(log_path),
            "--server-args",
            launch,
            "--json",
            str(json_path),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert cli.returncode == 0, cli.stderr
    document = json.loads(json_path.read_text())
    top = document["findings"][0]
    assert top["rule"] == "OP-1.1", cli.stdout
    (change,) = [c for c in top["changes"] if c["flag"] == "--max-model-len"]
    proposed_len = int(change["proposed"])
    assert 0 < proposed_len < LONG_CONTEXT
    assert change["predicted_effect"]["figures"]["starts_after"] == 1.0

    proposed = parse_command(document["proposed_command"])
    assert proposed.flags["--max-model-len"] == str(proposed_len)
    flags = [word for flag, value in proposed.flags.items() for word in ([flag] if value is None else [flag, value])]
    with running_server(proposed.model, *flags, log_dir=tmp_path) as server:
        status, body, _ = server.get("/v1/models")
        assert status == 200 and json.loads(body)["data"][0]["max_model_len"] == proposed_len
        assert f"Maximum concurrency for {proposed_len:,} tokens per request" in server.log_text()


CLIENT_REQUESTS = 400  # per client: enough to keep the pool preempting through all three tests
CLIENT_SECONDS = 300.0  # and the time bound on the same loop


def _generate(server: ServerHandle, stop: threading.Event, errors: list[str]) -> None:
    """Long greedy generations back to back until told to stop, bounded in count and time.

    The module's three tests share this load; a fast box got through 30 requests a client
    before the third test looked, and found an idle pool with nothing to rank.
    """
    deadline = time.monotonic() + CLIENT_SECONDS
    payload = json.dumps(
        {
            "model": server.model,
            "prompt": "tell me a long story " * 2,
            "max_tokens": 96,
            "temperature": 0,
            "ignore_eos": True,
        }
    ).encode()
    for _ in range(CLIENT_REQUESTS):
        if stop.is_set() or time.monotonic() > deadline:
            return
        request = urllib.request.Request(
            server.base_url + "/v1/completions", data=payload, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                response.read()
        except OSError as exc:  # recorded; the assertions below say whether it mattered
            errors.append(str(exc))
            return


@pytest.fixture(scope="module")
def loaded_server(tiny_model_dir, tmp_path_factory) -> Iterator[ServerHandle]:  # noqa: F811
    """The tiny model with an 8-block KV pool and 8 clients generating 96 tokens each."""
    flags = (
        "--num-gpu-blocks-override",
        "8",
        "--max-model-len",
        "128",
        "--max-num-seqs",
        "8",
        "--enable-prefix-caching",
    )
    with running_server(tiny_model_dir, *flags, log_dir=tmp_path_factory.mktemp("loaded")) as server:
        stop, errors = threading.Event(), []
        clients = [threading.Thread(target=_generate, args=(server, stop, errors), daemon=True) for _ in range(8)]
        for client in clients:
            client.start()
        try:
            _wait_for_preemptions(server)
            yield server
        finally:
            stop.set()
            for client in clients:
                client.join(timeout=150)


def _wait_for_preemptions(server: ServerHandle, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for line in server.metrics_text().splitlines():
            if line.startswith("vllm:num_preemptions_total") and float(line.rsplit(" ", 1)[1]) > 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"no preemption within {timeout_s:.0f} s; log tail:\n{server.log_text()[-2000:]}")


def test_live_server_under_load_ranks_the_preemption_finding_first(loaded_server):
    result = run_triage(TriageRequest(endpoint=loaded_server.base_url, metrics_interval_s=3.0))
    assert result.facts.window is not None and result.facts.endpoint.health_status == 200
    assert result.top is not None and result.top.rule == "OP-5.3", [(f.rule, f.title) for f in result.findings]
    assert result.facts.config.num_gpu_blocks == 8  # from vllm:cache_config_info


def test_prometheus_scraping_the_engine_gives_the_same_top_finding(loaded_server, tmp_path):
    prometheus_binary()
    target = loaded_server.base_url.removeprefix("http://")
    with running_prometheus([target], tmp_path / "prometheus") as url:
        wait_for_samples(url, "vllm:num_preemptions_total", series=1, samples=6, timeout_s=90)
        result = run_triage(TriageRequest(prometheus=url, selector='{job="vllm"}', window_s=5))
    assert [stats.instance for stats in result.facts.window.per_instance] == [target]
    assert result.top is not None and result.top.rule == "OP-5.3", [(f.rule, f.title) for f in result.findings]


def test_scheduled_triage_of_the_live_server_keeps_a_history(loaded_server, tmp_path, capsys):
    from advisor.cli.main import main

    code = main(
        [
            "triage",
            "--endpoint",
            loaded_server.base_url,
            "--metrics-interval",
            "1",
            "--every",
            "2s",
            "--out",
            str(tmp_path),
            "--count",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    history = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert len(history) == 2 and all(entry["error"] is None for entry in history)
    assert history[0]["findings"][0]["rule"] == "OP-5.3"
    assert history[1]["diff"]["previous_run_at"] == history[0]["created_at"]
    assert "run 2 at" in out and ("no change since" in out or "since " in out)
