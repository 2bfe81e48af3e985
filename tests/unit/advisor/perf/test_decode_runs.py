"""Decode runs (`_StepReplayer._decode_run`) take exactly the steps `_engine_step` would take.

Each replay here runs twice: as the performance model runs it, and with every step built through the
scheduler (`_decode_run` switched off). Everything the replay returns must be equal, float for float:
the steps (times, shapes, KV blocks in use), each request's first scheduling, token times,
preemptions and rejection, the replay's preemptions and whether it was truncated. The cases cover
what stops a run: block boundaries with and without prefix caching, preemption in a small pool,
prompts chunked by a small token budget, a queue held at `--max-num-seqs`, closed-loop streams
whose finished requests send the next, Poisson arrivals, decode curves and context reads in the
cost, the drain deadline and the neighbours' load around a middle step.
"""

from __future__ import annotations

import dataclasses

import pytest

from advisor.perf import replay as replay_module
from advisor.perf.cost import StepCost
from advisor.perf.limits import SchedulerLimits
from advisor.perf.replay import StepReplay, replay_step
from advisor.perf.workload import ReplayWorkload
from loadtest.plan import RampPlan
from loadtest.workload import LengthSpec, WorkloadSpec

LINEAR = StepCost(base_s=0.012, prefill_token_s=0.0004, prefill_seq_s=0.001, decode_seq_s=0.003, context_token_s=2e-6)
CURVE = StepCost(
    base_s=0.0,
    decode_seq_s=0.0,
    prefill_token_s=0.0003,
    context_token_s=1e-6,
    decode_knots=[1.0, 4.0, 16.0],
    decode_curve_s=[0.02, 0.03, 0.07],
    overhead_s=0.004,
)


def _limits(**overrides: object) -> SchedulerLimits:
    values: dict = {
        "max_num_seqs": 16,
        "max_num_batched_tokens": 512,
        "max_model_len": 1024,
        "block_size": 16,
        "num_blocks": None,
        "enable_prefix_caching": True,
    }
    return SchedulerLimits(**{**values, **overrides})


def _plan(mode: str, levels: list[float], step_s: float = 6.0, **overrides: object) -> RampPlan:
    values: dict = {"request_timeout_s": 60.0, "cooldown_s": 5.0}
    return RampPlan(endpoint="http://x", model="m", mode=mode, levels=levels, step_s=step_s, **{**values, **overrides})


def _workload(prompt: int, output: int, spread: float = 0.0, **spec: object) -> ReplayWorkload:
    """Lengths uniform within ±`spread` of their mean (a fraction of it), fixed at 0."""
    lengths = {
        key: LengthSpec(distribution="uniform" if spread else "fixed", mean=mean, spread=int(mean * spread))
        for key, mean in (("input_len", prompt), ("output_len", output))
    }
    return ReplayWorkload(spec=WorkloadSpec(**lengths, seed=5, **spec))


CASES = {
    "closed-loop streams, caching on": (_plan("concurrency", [1, 4, 16]), 1, _limits(), LINEAR, _workload(96, 64, 0.5)),
    "caching off": (
        _plan("concurrency", [2, 8]),
        1,
        _limits(enable_prefix_caching=False),
        LINEAR,
        _workload(40, 100, 0.3),
    ),
    "a small pool that preempts": (
        _plan("concurrency", [4, 12]),
        1,
        _limits(num_blocks=40, max_model_len=400),
        LINEAR,
        _workload(64, 120, 0.2),
    ),
    "prompts chunked by a small budget": (
        _plan("concurrency", [8]),
        0,
        _limits(max_num_batched_tokens=24),
        LINEAR,
        _workload(100, 40, 0.4),
    ),
    "a queue held at max-num-seqs": (
        _plan("concurrency", [4, 16]),
        1,
        _limits(max_num_seqs=3),
        CURVE,
        _workload(30, 50, 0.5),
    ),
    "budget equal to the running decodes": (
        _plan("concurrency", [6]),
        0,
        _limits(max_num_batched_tokens=6, max_num_seqs=6),
        LINEAR,
        _workload(20, 30),
    ),
    "poisson arrivals, shared prefixes": (
        _plan("rate", [2.0, 6.0, 10.0], arrival="poisson"),
        1,
        _limits(),
        CURVE,
        _workload(24, 48, 0.5, kind="shared-prefix", prefix_len=64, groups=2, share=0.8),
    ),
    "a drain deadline cuts the step": (
        _plan("concurrency", [8, 8], step_s=2.0, request_timeout_s=3.0, cooldown_s=0.5),
        0,
        _limits(),
        LINEAR,
        _workload(50, 400),
    ),
}


def _replayed(case: tuple) -> tuple[StepReplay, tuple]:
    """The replay and what it leaves in the scheduler: preemptions and the prefix-cache counters."""
    replayer = replay_module._StepReplayer(*case, None)
    replay = replayer.run()
    kv = replayer.kv
    return replay, (replayer.scheduler.num_preemptions_total, kv.prefix_cache_queries, kv.prefix_cache_hits)


@pytest.mark.parametrize("name", list(CASES))
def test_a_replay_with_decode_runs_equals_the_one_built_step_by_step(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    with monkeypatch.context() as patch:
        patch.setattr(replay_module._StepReplayer, "_decode_run", lambda self: False)
        expected, expected_state = _replayed(case)
    taken, state = _replayed(case)
    assert len(expected.steps) > 50 and sum(len(r.token_times) for r in expected.requests) > 20, "a case too small"
    assert [dataclasses.astuple(s) for s in taken.steps] == [dataclasses.astuple(s) for s in expected.steps]
    assert [dataclasses.astuple(r) for r in taken.requests] == [dataclasses.astuple(r) for r in expected.requests]
    assert (taken.preemptions, taken.truncated) == (expected.preemptions, expected.truncated)
    assert state == expected_state


def test_the_cases_reach_what_stops_a_decode_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases above are only evidence if they reach the conditions: preemption, truncation, chunks,
    a waiting queue, and runs of several decode steps taken without the scheduler."""
    replays = {name: replay_step(*case) for name, case in CASES.items()}
    assert replays["a small pool that preempts"].preemptions > 0
    assert replays["a drain deadline cuts the step"].truncated
    assert any(s.shape.prefill_seqs and s.shape.decode_seqs for s in replays["prompts chunked by a small budget"].steps)
    runs: list[tuple[int, bool]] = []  # (steps taken, whether the queue's head was refused in them)
    original = replay_module._StepReplayer._decode_run

    def counted(self: replay_module._StepReplayer) -> bool:
        before, waiting = len(self.engine_steps), bool(self.scheduler.waiting)
        took = original(self)
        if took:
            runs.append((len(self.engine_steps) - before, waiting))
        return took

    monkeypatch.setattr(replay_module._StepReplayer, "_decode_run", counted)
    replay_step(*CASES["closed-loop streams, caching on"])
    assert runs and max(steps for steps, _ in runs) > 1, runs
    runs.clear()
    replay_step(*CASES["a small pool that preempts"])
    assert any(steps > 1 and refused for steps, refused in runs), runs
