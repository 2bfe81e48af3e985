"""HL-8 on a real vLLM: requests answered from NaN logits, counted by vLLM and read by triage.

The embedded SmolLM2 is copied with its final norm's weight set to NaN, so every request's logits are NaN. vLLM 0.32
on CPU still answers each one with HTTP 200 (an empty text, here); with VLLM_COMPUTE_NANS_IN_LOGITS=1 it counts them
in `vllm:corrupted_requests_total`. Triage of the two scrapes and the log must say so (HL-8).

What this showed of vLLM that the unit tests could not: the stats line's `Corrupted: N reqs` counts a request only
in an interval the engine logs at info level, and vLLM logs an interval that ends idle at debug level, so requests
that finish between two lines on a quiet server read 0 in every line while the counter holds them. The counter is
the figure to trust; the test asserts on it and does not require the line.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from advisor.servers.vllm import reference_command
from tests.helpers import vllm_situations as vs
from tests.integration.vllm.test_triage_live import findings, servops

REQUESTS = 3
COUNTER = "vllm:corrupted_requests_total"
COUNT_WAIT_S = 30.0  # the counter is updated when a finished request's stats reach the API server


@dataclass
class Answered:
    """What the broken model's server did: its replies, the two scrapes around them, and its log."""

    statuses: list[int]
    before: str
    after: str
    interval_s: float
    log_text: str


def _broken_copy(folder: Path) -> Path:
    """The embedded model with NaN in its final norm's weight (every logit is NaN)."""
    import torch  # noqa: PLC0415 (the tier's own dependency, imported only when it runs)
    from safetensors.torch import load_file, save_file  # noqa: PLC0415

    from engine.model.default_model import ensure_default_model  # noqa: PLC0415 (torch, on demand)

    copy = folder / "smol-nan"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ensure_default_model(), copy)
    weights = copy / "model.safetensors"
    tensors = load_file(weights)
    tensors["model.norm.weight"] = torch.full_like(tensors["model.norm.weight"], float("nan"))
    save_file(tensors, weights, metadata={"format": "pt"})
    return copy


def _complete(base_url: str, prompt: str) -> int:
    body = json.dumps({"model": vs.SERVED_NAME, "prompt": prompt, "max_tokens": 4, "temperature": 0}).encode()
    request = urllib.request.Request(
        base_url + "/v1/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status


def _counted(metrics: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith(COUNTER + "{"))


@pytest.fixture(scope="module")
def answered(vllm_work: Path) -> Answered:
    model = _broken_copy(vllm_work)
    command = reference_command(["--enforce-eager"], model=str(model), served_model_name=vs.SERVED_NAME)
    command = command.model_copy(update={"env": {**command.env, "VLLM_COMPUTE_NANS_IN_LOGITS": "1"}})
    with vs.vllm_server(vllm_work, label="nan-logits", command=command) as server:
        before, started = server.metrics_text(), time.monotonic()
        statuses = [_complete(server.base_url, f"Request {i} of a broken model:") for i in range(REQUESTS)]
        deadline = time.monotonic() + COUNT_WAIT_S
        after = server.metrics_text()
        while _counted(after) < REQUESTS and time.monotonic() < deadline:
            time.sleep(0.5)
            after = server.metrics_text()
        return Answered(statuses, before, after, time.monotonic() - started, server.log_text())


def test_vllm_answers_nan_logits_with_success_and_counts_them(answered: Answered) -> None:
    assert answered.statuses == [200] * REQUESTS
    assert _counted(answered.before) == 0 and _counted(answered.after) == REQUESTS, answered.after[-3000:]


def test_triage_of_the_scrapes_and_the_log_names_the_corrupted_requests(answered: Answered, vllm_work: Path) -> None:
    folder = vllm_work / "nan-triage"
    folder.mkdir(exist_ok=True)
    (folder / "before.prom").write_text(answered.before)
    (folder / "after.prom").write_text(answered.after)
    (folder / "server.log").write_text(answered.log_text)
    out = folder / "triage.json"
    done = servops(
        "triage",
        *("--metrics", str(folder / "before.prom"), "--metrics", str(folder / "after.prom")),
        *("--metrics-interval", f"{answered.interval_s:.1f}", "--logs", str(folder / "server.log")),
        *("--json", str(out)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [hl8] = [f for f in findings(json.loads(out.read_text())) if f["rule"] == "HL-8"]
    assert hl8["title"].startswith(f"{REQUESTS} request(s) finished with NaN in their logits"), done.stdout
    assert hl8["evidence"][0]["name"] == f"increase({COUNTER})" and hl8["severity"] == "high"
