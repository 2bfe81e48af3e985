"""One load step replayed and read as the ramp reads a measured step.

Why a module below both the calibration and the forecast: calibrating checks the fitted cost by
replaying each measured step (its in-sample error), and forecasting replays every step under the
changed limits; both read a replay through `loadtest.stats.step_stats` exactly as the ramp read the
server, so a predicted step and a measured one are the same computation over the same window.
"""

from __future__ import annotations

from advisor.perf.cost import StepCost
from advisor.perf.limits import SchedulerLimits
from advisor.perf.measured import MeasuredRamp
from advisor.perf.replay import StepReplay, replay_step
from advisor.perf.workload import ReplayWorkload
from loadtest.results import ServerSignals, StepResult
from loadtest.stats import step_stats


def predicted_step(
    ramp: MeasuredRamp, step: int, limits: SchedulerLimits, cost: StepCost, workload: ReplayWorkload
) -> StepResult:
    return predicted_readings(ramp, step, limits, cost, workload, (0.0,))[0]


def predicted_readings(
    ramp: MeasuredRamp,
    step: int,
    limits: SchedulerLimits,
    cost: StepCost,
    workload: ReplayWorkload,
    shifts: tuple[float, ...],
) -> list[StepResult]:
    """One replay of the step, its statistics read at each percentile shift (0.0: the nominal ranks)."""
    replay = replay_step(ramp.plan, step, limits, cost, workload)
    records = replay.records(step, ramp.plan.step_start(step), cost.gap_spread)
    results = [step_stats(ramp.plan, step, records, ramp.slos, quantile_shift=shift) for shift in shifts]
    for result in results:
        result.server = server_signals(replay, ramp, step, limits)
    return results


def server_signals(replay: StepReplay, ramp: MeasuredRamp, step: int, limits: SchedulerLimits) -> ServerSignals:
    """What /metrics would have shown: time-weighted running/waiting, KV usage, preemptions."""
    start, end = ramp.plan.window(step)
    window = replay.steps_in_window(ramp.plan, step)
    busy = sum(s.end - s.start for s in window)
    width = end - start
    seqs = [(s.end - s.start, s.shape.decode_seqs + (1 if s.shape.prefill_tokens else 0)) for s in window]
    running = sum(d * n for d, n in seqs) / busy if busy else 0.0
    tokens = sum(s.shape.prefill_tokens + s.shape.decode_seqs for s in window)
    kv = None
    if limits.num_blocks:
        used = sum((s.end - s.start) * s.used_blocks for s in window)
        kv = min(1.0, used / busy / limits.num_blocks) if busy else 0.0
    return ServerSignals(
        samples=0,
        running_mean=round(running * busy / width, 3) if width else None,
        running_max=float(max((n for _, n in seqs), default=0)),
        kv_cache_usage_mean=round(kv, 4) if kv is not None else None,
        preemptions_per_s=replay.preemptions / max(width, 1e-9),
        engine_steps_per_s=len(window) / width if width else None,
        tokens_per_step_mean=tokens / len(window) if window else None,
    )
