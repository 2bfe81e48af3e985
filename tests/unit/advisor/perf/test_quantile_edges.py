"""Predicted percentiles read half a rank either side, checked against real vLLM's measured ramps.

The measured side: real vLLM 0.32 started with the recorded preempting server's flags at
`--max-num-seqs` 128 (its own), 4 (the value the model chose before it read the edges) and 3 (the
rule's), each ramped over the load its saved 8 s window describes
(tests/fixtures/vllm_cpu/preempting_ramped_seqs*.json, recorded by
`benchmarks/model_choice_check.py --case vllm-preempting --rivals 3`). The predicted side: the
`servops predict` commands triage prints for the window, as a user would run them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import advisor.perf.forecast as forecast
from advisor.perf import memo
from advisor.triage.forecast import with_change
from loadtest.stats import percentiles
from tests.unit.advisor.perf.conftest import WindowTriage
from tests.unit.advisor.perf.recorded_queue import FIXTURES, Rivals, predict

RECORDED = FIXTURES / "vllm_cpu"
CAPS = (128, 4, 3)


def _measured(cap: int) -> dict:
    return json.loads((RECORDED / f"preempting_ramped_seqs{cap}.json").read_text())


@pytest.fixture(scope="module")
def predict_command(preempting_triage: WindowTriage) -> str:
    """The printed predict command for one --max-num-seqs value on the saved preempting window."""
    rejected = preempting_triage.document["rejected_changes"]
    return next(r["command"] for r in rejected if r["change"]["flag"] == "--max-num-seqs")


@pytest.fixture(scope="module")
def rivals(predict_command: str) -> Rivals:
    """The printed command's calibration, shared by every cap (tests/unit/advisor/perf/recorded_queue.py)."""
    return Rivals(predict_command)


def _predicted(rivals: Rivals, cap: int) -> dict:
    return rivals.predict("--max-num-seqs", cap)


def test_a_shifted_read_lands_on_either_side_of_a_one_percent_cliff() -> None:
    gaps = [0.04] * 990 + [0.26] * 10  # 1 % of the gaps carry a prefill
    low, high = percentiles(gaps, -0.5), percentiles(gaps, 0.5)
    assert low.p99 == 0.04 and high.p99 == 0.26
    assert low.p50 == high.p50 == percentiles(gaps).p50 == 0.04  # the body does not move
    assert percentiles(gaps, 2.0).p99 == 0.26  # past the last rank: the largest value
    assert percentiles([], 0.5).p99 is None


def test_every_caps_measured_safe_point_lies_within_its_predicted_readings(
    predict_command: str, rivals: Rivals, tmp_path: Path
):
    """No SLO: the safe point is the highest step below the knee. Every cap's measured safe point lies
    within its three readings, and since each step is replayed in the load of the steps around it
    (advisor/perf/replay.py) the nominal reading is the measured one for all three caps: for 4 the
    replay from an empty server said 4 where real vLLM measured 2. The printed command, run as a user
    would, gives what the shared calibration gives."""
    printed = predict(with_change(predict_command, "--max-num-seqs 4"), tmp_path / "seqs-4.json")
    assert printed["steps"] == _predicted(rivals, 4)["steps"]
    for cap in CAPS:
        predicted = _predicted(rivals, cap)
        readings = [predicted["safe_operating_point"]] + [e["safe_operating_point"] for e in predicted["edges"]]
        offered = [(r or {}).get("offered") for r in readings]
        measured = _measured(cap)["safe_operating_point"]["offered"]
        assert min(offered) <= measured <= max(offered), (cap, offered, measured)
        assert predicted["safe_operating_point"]["offered"] == measured, cap


def test_the_itl_p99_band_spans_the_cliff_and_holds_the_measured_stall(
    rivals: Rivals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cap 4 at 16 streams: real vLLM measured a p99 gap that carried a prefill (231 ms). Replayed from
    an empty server the nominal p99 was a plain decode step (41 ms); in the load of the steps around
    it, the replay's own p99 is such a step too (within 25 %). The band, read half a rank either side,
    spans the plain step and the measured one; over the three caps it holds more of the measured ITL
    p99s than the cost's error alone did."""
    four = _predicted(rivals, 4)
    at16 = next(k for k, s in enumerate(four["steps"]) if s["offered"] == 16)
    measured = next(s for s in _measured(4)["steps"] if s["offered"] == 16)["itl_s"]["p99"]
    band = four["bands"][at16]["itl_p99"]
    assert four["steps"][at16]["itl_s"]["p99"] == pytest.approx(measured, rel=0.25)
    assert band["low"] < 0.1 < measured <= band["high"]

    def inside() -> int:
        count = 0
        for cap in CAPS:
            predicted = _predicted(rivals, cap)
            by_load = {s["offered"]: s for s in _measured(cap)["steps"] if s["valid"] and s["ok_requests"]}
            for k, step in enumerate(predicted["steps"]):
                real = by_load.get(step["offered"])
                if real is not None:
                    band = predicted["bands"][k]["itl_p99"]
                    count += band["low"] <= real["itl_s"]["p99"] <= band["high"]
        return count

    with_edges = inside()
    monkeypatch.setattr(forecast, "QUANTILE_MARGIN_POINTS", 0.0)
    memo.forget_all()  # the kept predictions were made with the margin
    assert with_edges > inside()
