"""A tuning round's change is chosen by predicted gain; ramps go on until a knee shows."""

from pathlib import Path

from advisor.collect.server_args import parse_command
from advisor.perf.criterion import TuneCriterion
from advisor.tune import measure as measure_module
from advisor.tune.measure import Measurement, RampSettings
from advisor.tune.round import choose_change
from loadtest.knee import find_knee, safe_operating_point
from loadtest.results import RampResult, StepResult
from tests.unit.advisor.perf.test_calibrate_and_predict import TRUE_COST, _measured, _placeholder


def _kept(triage: dict, tmp_path: Path) -> Measurement:
    return Measurement(
        label="baseline",
        command="vllm serve m --max-num-seqs 2",
        ramp=_measured(2),
        triage=triage,
        log_path=str(tmp_path / "no-such.log"),
        startup_s=1.0,
        ramp_s=1.0,
    )


def test_the_round_takes_the_best_predicted_value_not_the_rules_doubling(tmp_path):
    triage = {
        "findings": [
            {
                "rule": "OP-5.2",
                "title": "queue",
                "changes": [{"flag": "--max-num-seqs", "current": "2", "proposed": "4", "reason": "double it"}],
            }
        ]
    }
    chosen, candidates, why = choose_change(
        _kept(triage, tmp_path),
        parse_command("vllm serve m --max-num-seqs 2"),
        TuneCriterion(),
        set(),
        False,
        lambda line: None,
    )
    assert chosen is not None and why == ""
    change = chosen["changes"][0]
    assert change["flag"] == "--max-num-seqs" and int(change["proposed"]) > 4
    assert chosen["predicted"]["steps"] and chosen["predicted_decision"].startswith("predicted to help")
    assert any(c["helps"] for c in candidates)


def test_tuning_stops_when_no_candidate_is_predicted_to_help(tmp_path):
    """A cap (32) the 16 streams never reach and a token budget no step fills: neither triage's smaller
    budget nor any value the model searches helps. Prompts here are cheap (50 µs a token): with a dearer
    prompt, a newcomer's prefill sharing a step with running decodes is the p99 gap from two streams on,
    and a smaller budget rightly helps there."""
    triage = {
        "findings": [
            {
                "rule": "OP-5.1",
                "title": "ttft",
                "changes": [
                    {"flag": "--max-num-batched-tokens", "current": "2048", "proposed": "64", "reason": "smaller steps"}
                ],
            }
        ]
    }
    cheap_prompts = TRUE_COST.model_copy(update={"prefill_token_s": 0.00005})
    kept = _kept(triage, tmp_path).model_copy(update={"ramp": _measured(32, cheap_prompts)})
    chosen, candidates, why = choose_change(
        kept, parse_command("vllm serve m --max-num-seqs 32"), TuneCriterion(), set(), False, lambda line: None
    )
    assert chosen is None
    assert why.startswith("no change is predicted to help") and "--max-num-batched-tokens" in why
    assert candidates and not any(c["helps"] for c in candidates)


def _step(k: int, offered: float, ttft_p99: float, slo_met: bool | None = None) -> StepResult:
    data = _placeholder(0)
    data.update(
        step=k,
        offered=offered,
        ok_requests=10,
        requests=10,
        slo_met=slo_met,
        ttft_s={"p50": ttft_p99 / 2, "p90": None, "p95": None, "p99": ttft_p99, "count": 10},
        itl_s={"p50": 0.05, "p90": None, "p95": None, "p99": 0.06, "count": 100},
    )
    return StepResult.model_validate(data)


def test_a_ramp_without_a_knee_goes_on_at_twice_and_four_times_its_top_level(monkeypatch):
    ttft = {1.0: 0.2, 2.0: 0.22, 4.0: 0.25, 8.0: 1.5}
    calls = []

    def fake_run_ramp(config, progress):
        calls.append(config.levels)
        steps = [_step(k, level, ttft[level]) for k, level in enumerate(config.levels)]
        return RampResult(
            config=config.model_dump(), steps=steps, knee=None, safe_operating_point=None, metric_definitions={}
        )

    monkeypatch.setattr(measure_module, "run_ramp", fake_run_ramp)
    first = fake_run_ramp(measure_module._ramp_config("http://x", RampSettings(concurrency=[1, 2])), None)
    extended = measure_module._extend_to_knee(
        first, "http://x", RampSettings(concurrency=[1, 2], slo=None), "t", lambda line: None
    )
    assert calls[1:] == [[4.0, 8.0]]
    assert [s.offered for s in extended.steps] == [1.0, 2.0, 4.0, 8.0]
    assert [s.step for s in extended.steps] == [0, 1, 2, 3]
    assert extended.knee.offered == 8.0 and extended.safe_operating_point.offered == 4.0


def test_a_ramp_meeting_every_slo_at_its_top_step_goes_on_even_past_a_knee(monkeypatch):
    """make demo's SmolLM2 round: TTFT p99 met 3 s at every step, so the safe point was the top step
    (4) before and after a change that cut TTFT p99 fivefold; the gain could not show."""
    ttft = {1.0: 0.2, 2.0: 0.3, 4.0: 2.0, 8.0: 2.8, 16.0: 6.0}
    calls = []

    def fake_run_ramp(config, progress):
        calls.append(config.levels)
        steps = [_step(k, level, ttft[level], slo_met=ttft[level] <= 3.0) for k, level in enumerate(config.levels)]
        return RampResult(
            config=config.model_dump(), steps=steps, knee=None, safe_operating_point=None, metric_definitions={}
        )

    monkeypatch.setattr(measure_module, "run_ramp", fake_run_ramp)
    settings = RampSettings(concurrency=[1, 2, 4], slo="ttft_p99=3s")
    first = fake_run_ramp(measure_module._ramp_config("http://x", settings), None)
    knee = find_knee(first.steps)
    first = first.model_copy(
        update={"knee": knee, "safe_operating_point": safe_operating_point(first.steps, knee, True)}
    )
    assert knee is not None and first.safe_operating_point.offered == 4.0  # a knee, yet every SLO met
    extended = measure_module._extend_to_knee(first, "http://x", settings, "t", lambda line: None)
    assert calls[1:] == [[8.0, 16.0]]
    assert extended.safe_operating_point.offered == 8.0


def test_the_model_searches_the_batch_size_even_when_the_loaded_triage_missed_the_queue(tmp_path):
    """CI's live vLLM round: the triage scrapes fell outside the loaded step and proposed only an unsafe
    --max-model-len, while the ramp itself measured the queue behind --max-num-seqs 2."""
    triage = {
        "findings": [
            {
                "rule": "AP-2",
                "title": "max-model-len",
                "changes": [
                    {"flag": "--max-model-len", "current": "8192", "proposed": "128", "reason": "x", "safety": "unsafe"}
                ],
            }
        ]
    }
    chosen, _, _ = choose_change(
        _kept(triage, tmp_path),
        parse_command("vllm serve m --max-num-seqs 2"),
        TuneCriterion(),
        set(),
        False,
        lambda line: None,
    )
    assert chosen is not None and chosen["rule"] == "model"
    change = chosen["changes"][0]
    assert change["flag"] == "--max-num-seqs" and int(change["proposed"]) > 2
    assert "triage proposed no change" in change["reason"]
