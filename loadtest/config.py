"""What a ramp is asked to do: the one place every ramp default and bound is stated.

Why one model: `servops ramp`'s flags, the runner and the plan the load processes follow used
to restate the defaults, and they disagreed (a 10 s cool-down in two places, 5 s in the third).
Now each default and each bound is a field here, with the text `--help` shows:

- `servops ramp` (advisor/cli/commands/ramp.py) takes its argparse defaults and help texts from
  these fields and hands the flags to `RampConfig`, whose constraints refuse a bad value (the
  CLI turns the ValidationError into one line naming the flag);
- `RampPlan` (plan.py) inherits the schedule part (`RampSchedule`), so the plan's defaults are
  these very fields;
- the statistics (`stats.step_stats`), the knee (`knee.DEFAULT_FACTOR`) and the Locust process
  (`locust_main`) read theirs with `ramp_default`;
- docs/loadtest.md's table of options is generated from them (and a test checks it).

Nothing is clamped: a value outside its bound is an error, never quietly replaced.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from loadtest.workload import WorkloadSpec

__all__ = [
    "ARRIVALS",
    "DEFAULT_WARMUP_SHARE",
    "MODES",
    "WORKER_CONNECT_TIMEOUT_S",
    "RampConfig",
    "RampSchedule",
    "ramp_default",
]

Mode = Literal["rate", "concurrency"]
Arrival = Literal["constant", "poisson"]
MODES: tuple[str, ...] = get_args(Mode)
ARRIVALS: tuple[str, ...] = get_args(Arrival)

# Without a warm-up given, this share of each step is left out of its statistics.
DEFAULT_WARMUP_SHARE = 0.2
# How long a master (--master, or --workers N on this machine) waits for its workers to connect;
# the controller adds it to the Locust process's deadline.
WORKER_CONNECT_TIMEOUT_S = 60.0


class RampSchedule(BaseModel):
    """The timeline and the load: what the request (`RampConfig`) and the plan (`RampPlan`) share."""

    model_config = ConfigDict(allow_inf_nan=False)

    mode: Mode = Field(description="rate: open loop over request rates; concurrency: closed loop over streams")
    levels: list[float] = Field(
        min_length=1, description="offered load per step: requests/s (rate) or concurrent streams (concurrency)"
    )
    step_s: float = Field(default=30.0, gt=0, description="duration of each step, s")
    warmup_s: float | None = Field(
        default=None,
        ge=0,
        validate_default=True,
        description=f"start of each step left out of its statistics (by intended send time), s; "
        f"default: {DEFAULT_WARMUP_SHARE:.0%} of a step",
    )
    cooldown_s: float = Field(
        default=10.0,
        ge=0,
        description="after the last step, time for in-flight requests to finish, s; those still running are then "
        "recorded as cancelled. 10 s: the last step's final requests need their TTFT plus a gap per "
        "output token, and 10 s lets a 64-token answer finish at up to ~150 ms per token (5 s "
        "cancelled such requests on a busy server and counted them as errors of the last step, "
        "usually the most loaded one)",
    )
    arrival: Arrival = Field(
        default="constant", description="open-loop arrivals on the absolute schedule: constant gaps or seeded Poisson"
    )
    workload: WorkloadSpec = Field(default_factory=WorkloadSpec, description="what each request asks for")
    request_timeout_s: float = Field(default=60.0, gt=0, description="per-request time limit, s")

    @field_validator("levels")
    @classmethod
    def _levels_are_loads(cls, levels: list[float], info: ValidationInfo) -> list[float]:
        if any(level <= 0 for level in levels):
            raise ValueError("every level must be a positive number, e.g. 1,2,4,8")
        if info.data.get("mode") == "concurrency" and any(level != int(level) for level in levels):
            raise ValueError("concurrency levels must be whole numbers of streams, e.g. 1,2,4,8")
        return levels

    @field_validator("warmup_s")
    @classmethod
    def _warmup_inside_a_step(cls, warmup_s: float | None, info: ValidationInfo) -> float | None:
        step_s = info.data.get("step_s")
        if step_s is None:  # step_s itself was refused; that error is the one to report
            return warmup_s
        if warmup_s is None:
            return DEFAULT_WARMUP_SHARE * step_s
        if warmup_s >= step_s:
            raise ValueError(f"must be shorter than step_s {step_s:g}; lower it or lengthen the steps")
        return warmup_s


class RampConfig(RampSchedule):
    """What `servops ramp` was asked to do; echoed as `config` in the result.

    The two worker-mode fields (`master_host`, `master_timeout_s`) belong to `servops ramp
    --worker`, which runs no ramp of its own; they live here so that their defaults, too, are
    stated once, and are left out of the echo.
    """

    endpoint: str = Field(description="base URL of the server, e.g. http://127.0.0.1:8000")
    model: str | None = Field(
        default=None, description="model name to request; default: the first id GET /v1/models lists"
    )
    slo: str | None = Field(default=None, description="service-level objectives, e.g. ttft_p99=2s,itl_p99=100ms")
    workers: int = Field(default=0, ge=0, description="local Locust worker processes; 0: the load runs in one process")
    master: bool = Field(default=False, description="be a Locust master and wait for the expected workers")
    expect_workers: int = Field(default=1, ge=1, description="master: workers to wait for")
    master_bind_host: str = Field(default="*", description="master: interface to bind (* = all)")
    master_port: int = Field(
        default=5557, ge=1, le=65535, description="master: port to bind; worker: port to connect to"
    )
    max_ttft_s: float = Field(
        default=30.0, gt=0, description="stop early when a step's median TTFT exceeds this many seconds"
    )
    tokenizer: str | None = Field(
        default=None,
        description="local Hugging Face tokenizer directory to count tokens when the server sends no usage",
    )
    knee_factor: float = Field(
        default=2.0, gt=1, description="knee: p99 growth over the lowest-load step that counts as a knee"
    )
    max_client_cpu_percent: float = Field(
        default=90.0,
        gt=0,
        le=100,
        description="a step is invalid when a load process used more CPU than this % of a core",
    )
    max_send_lateness_s: float = Field(
        default=0.025, gt=0, description="a step is invalid when its send lateness p99 exceeds this"
    )
    metrics_url: str | None = Field(
        default=None, description="where to sample Prometheus metrics; default: ENDPOINT/metrics"
    )
    records_path: str | None = Field(
        default=None, description="also write every request's full-precision record here (JSONL)"
    )
    prefill_probe: list[int] = Field(
        default_factory=list,
        description="after the last step, time lone uncached prompts of these lengths in words (max_tokens 1, "
        "3 of each, one at a time, on the idle server) and keep them in the result as prefill_probe: they pin "
        "what a prompt token costs for `servops predict`, which a ramp of like-sized prompts cannot; each 2 to "
        "1,048,576 words; e.g. 64,256,512",
    )
    api_key: str | None = Field(
        default=None,
        repr=False,
        exclude=True,
        description="bearer token for servers started with --api-key; never echoed",
    )
    authorization: str | None = Field(
        default=None,
        repr=False,
        exclude=True,
        description="Authorization value from the URL's user:password; never echoed",
    )
    master_host: str = Field(default="127.0.0.1", exclude=True, description="worker: the master's address")
    master_timeout_s: float = Field(
        default=60.0, gt=0, exclude=True, description="worker: give up when no master answers within this many seconds"
    )


def ramp_default(name: str) -> Any:
    """The default of `RampConfig` field `name`, for code that takes the value outside the model."""
    return RampConfig.model_fields[name].get_default(call_default_factory=True)
