"""The measured ramp the model learns from and predicts for: its plan, steps, SLOs.

Why rebuild the plan: the prediction must use the ramp's own timeline (step length, warm-up,
arrival schedule, request timeout) and its own SLOs and knee factor, so that a predicted
step and a measured step are computed by the same code over the same window.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ValidationError

from advisor.errors import UserError
from loadtest.knee import DEFAULT_FACTOR
from loadtest.plan import RampPlan
from loadtest.results import PrefillProbe, StepResult
from loadtest.slo import SLO, parse_slos
from loadtest.workload import WorkloadSpec


class MeasuredRamp(BaseModel):
    plan: RampPlan
    steps: list[StepResult]
    slos: list[SLO]
    knee_factor: float = DEFAULT_FACTOR
    config: dict[str, Any]
    prefill_probe: PrefillProbe | None = None  # lone prefills timed after the ramp (`servops ramp --prefill-probe`)
    knee: dict[str, Any] | None = None  # as the ramp reported it (the whole server's), shown beside a prediction
    safe_operating_point: dict[str, Any] | None = None  # likewise

    @property
    def usable_steps(self) -> list[StepResult]:
        """Valid steps with successful requests: the ones a knee or a fit may use."""
        return [s for s in self.steps if s.valid and s.ok_requests > 0]


def measured_ramp(document: dict[str, Any], source: str = "the ramp") -> MeasuredRamp:
    """A ramp result (`servops ramp --json`) as the model reads it; UserError naming `source` otherwise."""
    if not isinstance(document, dict) or document.get("kind") != "ramp":
        kind = document.get("kind") if isinstance(document, dict) else type(document).__name__
        raise UserError(f"{source}: kind {kind!r} is not a ramp result; give the JSON `servops ramp --json` wrote")
    config = document.get("config") or {}
    try:
        steps = [StepResult.model_validate(s) for s in document.get("steps") or []]
        levels = [float(x) for x in config["levels"]]
        step_s = float(config["step_s"])
        plan = RampPlan(
            endpoint=str(config.get("endpoint") or "http://127.0.0.1"),
            model=str(config.get("model") or "m"),
            mode=config["mode"],
            levels=levels,
            step_s=step_s,
            warmup_s=min(float(config.get("warmup_s") or 0.0), step_s * 0.9),
            cooldown_s=float(config.get("cooldown_s") or 0.0),
            arrival=config.get("arrival", "constant"),
            workload=WorkloadSpec.model_validate(config.get("workload") or {}),
            request_timeout_s=float(config.get("request_timeout_s") or 60.0),
            start_ts=0.0,
        )
        probe = PrefillProbe.model_validate(document["prefill_probe"]) if document.get("prefill_probe") else None
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        raise UserError(
            f"{source}: not a complete ramp result ({str(exc).splitlines()[0]}); "
            f"give the JSON `servops ramp --json` wrote"
        ) from None
    if not steps:
        raise UserError(f"{source}: the ramp has no steps; run a ramp with at least one load level")
    return MeasuredRamp(
        plan=plan,
        steps=steps,
        slos=parse_slos(config.get("slo")),
        knee_factor=float(config.get("knee_factor") or DEFAULT_FACTOR),
        config=config,
        prefill_probe=probe,
        knee=document.get("knee") if isinstance(document.get("knee"), dict) else None,
        safe_operating_point=(
            document.get("safe_operating_point") if isinstance(document.get("safe_operating_point"), dict) else None
        ),
    )


# What a step measures for the whole server: shared out over the replicas that carried it.
ENGINE_TOTALS = ("achieved_rate", "output_tokens_per_s", "streamed_tokens_per_s", "goodput_rps")
ENGINE_COUNTS = ("requests", "ok_requests", "output_tokens")
SERVER_TOTALS = (
    "running_mean",
    "running_max",
    "waiting_mean",
    "waiting_max",
    "preemptions_per_s",
    "engine_steps_per_s",
    "prompt_tokens_per_s",
    "generation_tokens_per_s",
)


def one_replica(ramp: MeasuredRamp, replicas: int) -> MeasuredRamp:
    """The ramp of a server of `replicas` data-parallel engines as one engine's share, which is what the
    model fits and replays.

    Why: vLLM's front end spreads requests over its --data-parallel-size engines and its gauges sum
    them, so a ramp of the whole server carries N engines' tokens per second and running requests,
    while each engine stepped only its share. A concurrency step of C streams puts ceil(C / N) on the
    busiest engine, and its throughput is shared by the min(C, N) engines that had work (exact when N
    divides C or C <= N; otherwise the busiest engine's load is stated, and the mean throughput). A
    rate step gives each engine 1/N of the rate. Latencies and fractions (KV usage) are per request or
    per engine already and stay."""
    if replicas <= 1:
        return ramp
    concurrency = ramp.plan.mode == "concurrency"

    def busy(level: float) -> float:
        return min(level, replicas) if concurrency else replicas

    def share(level: float) -> float:
        return float(math.ceil(level / replicas)) if concurrency else level / replicas

    steps = []
    for step in ramp.steps:
        divisor = busy(step.offered)
        update: dict[str, Any] = {"offered": share(step.offered)}
        update |= {k: getattr(step, k) / divisor for k in ENGINE_TOTALS if getattr(step, k) is not None}
        update |= {k: math.ceil(getattr(step, k) / divisor) for k in ENGINE_COUNTS}  # the busiest engine's
        if step.server is not None:
            totals = {k: getattr(step.server, k) for k in SERVER_TOTALS}
            update["server"] = step.server.model_copy(
                update={k: v / divisor for k, v in totals.items() if v is not None}
            )
        steps.append(step.model_copy(update=update))
    plan = ramp.plan.model_copy(update={"levels": [share(level) for level in ramp.plan.levels]})
    config = {**ramp.config, "levels": plan.levels}
    return ramp.model_copy(update={"plan": plan, "steps": steps, "config": config})
