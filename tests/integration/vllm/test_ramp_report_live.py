"""`servops ramp` against a live vLLM (server signals in every step) and `servops report` of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import vllm_situations as vs
from tests.integration.vllm.test_triage_live import live_triage, servops

# Top step 8, not 16: on a 2-core AVX2-only CPU (float32 vLLM) 16 streams of 64+32 tokens finished
# 0-1 requests in a 12 s step (the rest still in flight at the cool-down's end), while 8 streams
# finished 11. On the slower CI machine (the suite ran 1.5x longer there) 8 streams of 32 output
# tokens then finished none in 12 s, so requests are 64+16 tokens in 16 s steps: half the decode
# steps per request and a third more time. The test is about the server signals in every step, so
# every step must complete work.
STEPS = ("1", "4", "8")
STEP_S = "16"
OUTPUT_LEN = "16"


@pytest.fixture(scope="module")
def ramp_document(vllm_serving: vs.VllmServer, vllm_work: Path) -> dict:
    out = vllm_work / "ramp.json"
    done = servops(
        "ramp",
        "--endpoint",
        vllm_serving.base_url,
        "--concurrency",
        ",".join(STEPS),
        "--step-seconds",
        STEP_S,
        "--warmup-seconds",
        "2",
        "--cooldown-seconds",
        "5",
        "--input-len",
        "64",
        "--output-len",
        OUTPUT_LEN,
        "--seed",
        "3",
        "--json",
        str(out),
        timeout_s=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(out.read_text())


def test_ramp_against_vllm_records_server_signals_in_every_step(ramp_document: dict) -> None:
    steps = ramp_document["steps"]
    assert [str(int(step["offered"])) for step in steps] == list(STEPS)
    for step in steps:
        server = step["server"]
        assert server and server["samples"] >= 2, step
        assert server["kv_metric"] == "vllm:kv_cache_usage_perc"
        assert server["running_max"] >= 1 and server["kv_cache_usage_max"] > 0, server
        assert step["ok_requests"] > 0 and step["output_tokens_per_s"] > 0, {
            key: step.get(key) for key in ("offered", "requests", "ok_requests", "errors", "output_tokens_per_s")
        }


def test_ramp_against_vllm_sees_more_streams_running_as_load_rises(ramp_document: dict) -> None:
    running = [step["server"]["running_max"] for step in ramp_document["steps"]]
    assert running[-1] > running[0], running


def test_report_renders_vllm_triage_and_ramp_in_one_offline_page(
    vllm_serving: vs.VllmServer, vllm_work: Path, ramp_document: dict
) -> None:
    triage = live_triage(vllm_serving, vllm_work / "report-triage.json", None)
    html_path = vllm_work / "report.html"
    done = servops("report", str(vllm_work / "report-triage.json"), str(vllm_work / "ramp.json"), "-o", str(html_path))
    assert done.returncode == 0, done.stderr[-2000:]
    html = html_path.read_text()
    assert vs.SERVED_NAME in html and "<svg" in html
    assert 'src="http' not in html, "the report loads something from the network"
    for finding in triage["json"]["findings"]:
        assert finding["rule"] in html
