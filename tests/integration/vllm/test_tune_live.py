"""One `servops tune` round on a real vLLM: ramp, triage under load, apply the top flag change,
restart vLLM with it, ramp again, keep or roll back."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers import vllm_situations as vs
from tests.integration.vllm.test_triage_live import servops

# Two 8 s steps per ramp, never extended (--max-concurrency 4: the round's ramp stops at the tested 4
# streams): each vLLM start takes ~50 s on a CI core, and the ramps only have to carry a triage under
# load and a measurement to set the prediction beside; 12-token requests finish in a step at 1 stream.
LIVE_TUNE_RAMP = ("--step-seconds", "8", "--warmup-seconds", "2", "--cooldown-seconds", "3", "--max-concurrency", "4")


def test_one_tune_round_restarts_vllm_with_the_applied_flag(vllm_work: Path) -> None:
    start = vs.vllm_command("--max-num-seqs", "1", "--enforce-eager")
    out = vllm_work / "tune"
    done = servops(
        "tune",
        "--server-command",
        start.render(),
        "--rounds",
        "1",
        "--concurrency",
        "1,4",
        *LIVE_TUNE_RAMP,
        "--out",
        str(out),
        timeout_s=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads((out / "tune.json").read_text())
    assert len(document["rounds"]) == 1, document["stopped_reason"]
    round_one = document["rounds"][0]
    change = round_one["change"]["changes"][0]
    assert change.get("safety", "safe") == "safe", change
    flag, proposed = change["flag"], str(change["proposed"])
    assert f"{flag} {proposed}" in round_one["command"]
    # vLLM logs its non-default arguments as a Python dict: 'max_num_seqs': 2
    key = flag.removeprefix("--").replace("-", "_")
    restarted_log = Path(round_one["log_path"]).read_text()
    assert re.search(rf"'{key}': '?{re.escape(proposed)}\b", restarted_log), f"vLLM did not get {flag} {proposed}"
    # the change was chosen by the performance model, and its prediction sits beside the measurement
    assert round_one["predicted"]["steps"] and round_one["predicted_decision"]
    assert round_one["prediction_error"]["steps"], round_one["prediction_error"]
    assert (out / "report.html").is_file()
