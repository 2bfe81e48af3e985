"""`servops demo` and `servops tune` end to end on a tiny random model, as real processes.

The demo test is the fast variant of `make demo` (tiny model, two 4-second steps per ramp):
it proves the whole chain — engine launched with --max-num-seqs 1, ramp, triage under load,
top change applied, second ramp, demo.json and report.html — and that every engine it
started is stopped afterwards.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.planted_secrets import SECRETS
from tests.helpers.server_process import tiny_model_dir  # noqa: F401  (session fixture)

pytestmark = pytest.mark.integration

# 48 output tokens keep each request long enough that the queue behind --max-num-seqs 1 is
# visible at any scrape instant (with 12, the tiny model answered between scrapes).
QUICK_RAMP = [
    "--concurrency",
    "1,4",
    "--step-seconds",
    "6",
    "--warmup-seconds",
    "1",
    "--cooldown-seconds",
    "3",
    "--input-len",
    "16",
    "--output-len",
    "48",
    "--startup-timeout",
    "240",
    "--max-concurrency",
    "8",
]
TINY_ENGINE = "--disable-log-requests --max-model-len 256 --device-memory-gib 0.25"
# The demo's engines are keyed, as a production server is: the demo must ramp and triage them with
# the key, and let it out nowhere (the planted-secret check for `demo`, sharing this one run).
DEMO_KEY = SECRETS["key_prefixed"]


def _servops(*args: str, timeout_s: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True, text=True, timeout=timeout_s)


def _port_closed(endpoint: str) -> bool:
    try:
        urllib.request.urlopen(f"{endpoint}/health", timeout=2)
    except (urllib.error.URLError, OSError):
        return True
    return False


@pytest.fixture(scope="module")
def demo_run(tiny_model_dir, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:  # noqa: F811
    out = tmp_path_factory.mktemp("demo")
    proc = _servops(
        "demo",
        "--out",
        str(out),
        "--model",
        str(tiny_model_dir),
        "--engine-flags",
        f"{TINY_ENGINE} --api-key {DEMO_KEY}",
        *QUICK_RAMP,
        timeout_s=600,
    )
    return proc, out


def test_demo_writes_json_with_both_ramps_the_triage_and_the_applied_change(demo_run):
    proc, out = demo_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    demo = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    assert demo["kind"] == "demo" and demo["servops_version"] and demo["created_at"]
    assert "--max-num-seqs 1" in demo["before"]["command"]
    assert demo["triage"]["kind"] == "triage" and demo["triage"]["findings"]
    change = demo["applied_change"]
    assert change["flag"] == "--max-num-seqs" and change["current"] == "1" and int(change["proposed"]) > 1
    assert f"--max-num-seqs {change['proposed']}" in demo["after"]["command"]
    for side in ("before", "after"):
        ramp = demo[side]["ramp"]
        # 1 and 4 streams; a ramp without a knee goes on at 8 (--max-concurrency 8)
        assert ramp["kind"] == "ramp" and [s["offered"] for s in ramp["steps"]][:2] == [1.0, 4.0]
        assert ramp["knee"] is not None or [s["offered"] for s in ramp["steps"]] == [1.0, 4.0, 8.0]
    assert demo["predicted"]["steps"] and demo["predicted_decision"].startswith("predicted to help")
    assert demo["prediction_error"]["steps"]
    assert any(c["name"].startswith("TTFT p99") for c in demo["comparison"])


def test_demo_triage_saw_the_queue_behind_the_batch_cap(demo_run):
    _, out = demo_run
    demo = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    top = demo["triage"]["findings"][0]
    assert "waiting" in top["title"] and "--max-num-seqs 1" in top["title"]


def test_demo_report_is_one_self_contained_html_with_before_and_after(demo_run):
    _, out = demo_run
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("<html") == 1 and "<script" not in page
    assert not re.search(r"(src|href)=\"https?://", page)
    assert "<h3>Before</h3>" in page and "<h3>After</h3>" in page
    assert '<div class="added">+ --max-num-seqs' in page


def test_demo_shows_progress_and_stops_every_engine_it_started(demo_run):
    proc, out = demo_run
    for marker in (
        "demo 1/3",
        "[before] engine ready",
        "[before] step 2/2",
        "triage:",
        "demo 2/3",
        "[after] engine ready",
        "demo 3/3",
    ):
        assert marker in proc.stderr
    demo = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    for side in ("before", "after"):
        assert _port_closed(demo[side]["ramp"]["config"]["endpoint"])


def test_demo_lets_its_engines_api_key_out_nowhere(demo_run):
    proc, out = demo_run
    written = {str(path): path.read_text(errors="replace") for path in out.rglob("*") if path.is_file()}
    places = {"stdout": proc.stdout, "stderr": proc.stderr, **written}
    assert [where for where, text in places.items() if DEMO_KEY in text] == []
    assert "--api-key" in json.loads((out / "demo.json").read_text(encoding="utf-8"))["before"]["command"]


def test_demo_bad_concurrency_is_one_line_exit_2(tmp_path):
    proc = _servops("demo", "--out", str(tmp_path), "--concurrency", "4", timeout_s=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--concurrency '4'" in proc.stderr


def test_tune_bad_rounds_is_one_line_exit_2(tmp_path):
    proc = _servops("tune", "--out", str(tmp_path), "--rounds", "0", timeout_s=120)
    assert proc.returncode == 2 and "--rounds: '0' must be at least 1" in proc.stderr and "Traceback" not in proc.stderr


def test_tune_refuses_a_server_command_that_is_not_installed(tmp_path):
    proc = _servops("tune", "--out", str(tmp_path), "--server-command", "no-such-vllm serve m", timeout_s=120)
    assert proc.returncode == 2 and "'no-such-vllm' is not on PATH" in proc.stderr


@pytest.mark.slow
def test_tune_records_every_round_with_its_decision(tiny_model_dir, tmp_path):  # noqa: F811
    proc = _servops(
        "tune",
        "--out",
        str(tmp_path),
        "--model",
        str(tiny_model_dir),
        "--rounds",
        "2",
        "--flags",
        f"{TINY_ENGINE} --max-num-seqs 1",
        *QUICK_RAMP,
        timeout_s=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    tune = json.loads((tmp_path / "tune.json").read_text(encoding="utf-8"))
    assert tune["kind"] == "tune" and tune["baseline"]["ramp"]["steps"]
    assert 1 <= len(tune["rounds"]) <= 2
    for rnd in tune["rounds"]:
        assert isinstance(rnd["kept"], bool) and rnd["decision"].startswith(("kept", "rolled back"))
        assert rnd["ramp"]["kind"] == "ramp"
    kept = [r for r in tune["rounds"] if r["kept"]]
    assert tune["final_command"] == (kept[-1]["command"] if kept else tune["baseline"]["command"])
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    for rnd in tune["rounds"]:
        assert f'id="round-{rnd["round"]}"' in page
