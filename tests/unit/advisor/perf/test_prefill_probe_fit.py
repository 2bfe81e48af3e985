"""The prefill probe's lone requests as calibration rows (advisor.perf.calibrate.probe_rows).

The ramp here is a replay under a known cost at one stream whose prompts all have the same
length: its TTFT rows fit any split of a step's fixed part and its per-token part that adds up at
that length, and the ridge picks one. The probe's lone prompts of three lengths, timed under the
same cost, pin the split, so a prompt twice the longest probed is predicted right too.
"""

import numpy as np
import pytest

from advisor.perf.calibrate import calibrate, probe_rows
from advisor.perf.cost import StepCost, StepShape
from advisor.perf.forecast import predict_ramp
from advisor.perf.limits import SchedulerLimits
from advisor.perf.measured import measured_ramp
from advisor.perf.whatif import synthetic_ramp
from advisor.perf.workload import workload_from_ramp
from loadtest.results import PrefillProbe, ProbeTiming

TRUE_COST = StepCost(base_s=0.030, prefill_token_s=0.0008, decode_seq_s=0.003, context_token_s=1e-6, overhead_s=0.004)
CONFIG = {
    "endpoint": "http://127.0.0.1:1",
    "model": "m",
    "mode": "concurrency",
    "levels": [1],
    "step_s": 20.0,
    "warmup_s": 4.0,
    "request_timeout_s": 120.0,
    "knee_factor": 2.0,
    "workload": {
        "kind": "random",
        "input_len": {"distribution": "fixed", "mean": 60},
        "output_len": {"distribution": "uniform", "mean": 30, "spread": 10},
        "seed": 5,
    },
}
LIMITS = SchedulerLimits(
    max_num_seqs=16, max_num_batched_tokens=2048, max_model_len=2048, block_size=16, num_blocks=4096
)


def _ramp(probe: PrefillProbe | None) -> dict:
    """A ramp document replayed under TRUE_COST (as test_calibrate_and_predict makes them), with `probe`."""
    document = {"kind": "ramp", "config": CONFIG, "knee": None, "safe_operating_point": None}
    unmeasured = [
        {**step, "valid": True, "invalid_reason": None} for step in synthetic_ramp(CONFIG["levels"], 1, 1)["steps"]
    ]
    shell = measured_ramp({**document, "steps": unmeasured})
    truth = predict_ramp(shell, LIMITS, TRUE_COST, workload_from_ramp(CONFIG, []), with_bands=False)
    steps = [s.model_dump(mode="json") for s in truth.steps]
    return {**document, "steps": steps, "prefill_probe": probe.model_dump() if probe else None}


def _lone_ttft(tokens: int, cost: StepCost) -> float:
    """One uncached prompt alone (within the token budget): one step. A probe request (completions,
    one token, no chat template) carries none of the chat path's per-request overhead."""
    return cost.step_time(StepShape(prefill_tokens=tokens, prefill_seqs=1, context_tokens=tokens))


def _probe(cost: StepCost) -> PrefillProbe:
    lengths = (64, 256, 512)
    return PrefillProbe(timings=[ProbeTiming(words=n, prompt_tokens=n, ttft_s=_lone_ttft(n, cost)) for n in lengths])


def test_a_lone_prompt_past_the_token_budget_is_its_chunked_steps_without_the_chat_overhead() -> None:
    limits = LIMITS.model_copy(update={"max_num_batched_tokens": 128})
    probe = PrefillProbe(timings=[ProbeTiming(words=290, prompt_tokens=300, ttft_s=0.5)])
    ramp = measured_ramp(_ramp(probe))
    [(features, measured)] = probe_rows(ramp, limits, TRUE_COST)
    # chunks of 128, 128 and 44 tokens: three steps, each one prompt chunk, no decode; the context
    # read is each chunk's end (128 + 256 + 300); the chat path's per-request overhead is not in it
    assert TRUE_COST.columns() == ["base_s", "prefill_token_s", "prefill_seq_s", "decode_seq_s", "context_token_s"]
    assert features.tolist() == [3.0, 300.0, 3.0, 0.0, 684.0, 0.0] and measured == 0.5


def test_the_probe_pins_the_per_token_cost_that_like_sized_prompts_leave_free() -> None:
    workload = workload_from_ramp(CONFIG, [])
    with_probe = calibrate(measured_ramp(_ramp(_probe(TRUE_COST))), LIMITS, workload)
    without = calibrate(measured_ramp(_ramp(None)), LIMITS, workload)
    assert "prefill probe of 3 prompt length(s)" in (with_probe.cost.source or "")
    assert "prefill probe" not in (without.cost.source or "")
    for tokens in (64, 256, 512):
        assert _lone_ttft(tokens, with_probe.cost) == pytest.approx(_lone_ttft(tokens, TRUE_COST), rel=0.02), tokens
    # 1,024 tokens, twice the longest probed prompt: 0.8 % off with the probe, 3.2 % without (the ridge keeps
    # the chat overhead small and lends a little of it to the step's fixed part)
    truth = _lone_ttft(1024, TRUE_COST)
    error_with = abs(_lone_ttft(1024, with_probe.cost) / truth - 1)
    error_without = abs(_lone_ttft(1024, without.cost) / truth - 1)
    assert error_with < 0.01 and error_with < error_without / 3, (error_with, error_without)


def test_without_a_probe_nothing_is_added() -> None:
    ramp = measured_ramp(_ramp(None))
    assert ramp.prefill_probe is None and probe_rows(ramp, LIMITS, TRUE_COST) == []
    assert np.isfinite(calibrate(ramp, LIMITS, workload_from_ramp(CONFIG, [])).cost.base_s)
