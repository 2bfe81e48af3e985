"""What-if: the measured ramp, the flags it ran with, flag changes → a predicted ramp.

Steps: read the ramp; work out the scheduler limits of the ramped launch (its flags, then the
engine's defaults); fit the step cost to the ramp (calibrate); estimate the KV pool from
the KV usage the ramp saw when the size was not given; replay every step with the changed
limits. The unchanged launch is replayed too, so the prediction's own error on the measured
configuration is shown beside the answer.
"""

from __future__ import annotations

import shlex
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from advisor.catalog.vllm_versions import version_of
from advisor.collect.launch_values import check_value, size_of
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.memory.kv_change import Deployment
from advisor.perf.calibrate import Calibration, calibrate
from advisor.perf.cost import StepCost
from advisor.perf.forecast import PredictedRamp, Prediction, calibration_note, predict_ramp
from advisor.perf.gap_spread import SPREAD_UNMEASURED, GapSpread, measure_spread
from advisor.perf.limits import (
    BOOLEAN_FLAGS,
    LAYOUT_FLAGS,
    MAX_MODEL_LEN_FLAG,
    PIPELINE_PARALLEL_FLAG,
    POOL_BYTES_FLAG,
    PREDICTED_FLAGS,
    SHARE_FLAG,
    TENSOR_PARALLEL_FLAG,
    SchedulerLimits,
    engine_kind,
    limits_for,
)
from advisor.perf.measured import MeasuredRamp, one_replica
from advisor.perf.parallel import ParallelTerms, cost_at_layout, parallel_terms, terms_for_change
from advisor.perf.pool import DeviceShare, pool_tokens_after, pool_tokens_for_share, share_inputs_missing
from advisor.perf.replay import replay_step
from advisor.perf.replicas import REPLICAS_FLAG
from advisor.perf.workload import workload_from_ramp

Progress = Callable[[str], None]


def parse_change(text: str) -> dict[str, str]:
    """`--max-num-seqs 8`, `--no-enable-prefix-caching` or `--enable-prefix-caching` → {flag: value}."""
    words = shlex.split(text)
    if not words or not words[0].startswith("--"):
        raise UserError(f'--change {text!r}: give a flag and its value, e.g. --change "--max-num-seqs 8"')
    flag = words[0].split("=", 1)[0]
    value = words[0].split("=", 1)[1] if "=" in words[0] else (words[1] if len(words) > 1 else None)
    if flag.startswith("--no-") and "--" + flag[5:] in BOOLEAN_FLAGS:
        flag, value = "--" + flag[5:], "false"
    elif flag in BOOLEAN_FLAGS and value is None:
        value = "true"
    if flag not in PREDICTED_FLAGS:
        raise UserError(
            f"--change {text!r}: the performance model does not predict {flag}; "
            f"it predicts {', '.join(PREDICTED_FLAGS)}"
        )
    if value is None or len(words) > 2:
        raise UserError(f'--change {text!r}: give one flag and one value, e.g. --change "{flag} 8"')
    if flag in BOOLEAN_FLAGS and value.lower() not in ("true", "false"):
        raise UserError(f"--change {text!r}: {flag} takes true or false (or --no-{flag[2:]})")
    if flag in LAYOUT_FLAGS and not (value.isdigit() and int(value) >= 1):
        raise UserError(f"--change {text!r}: {flag} takes a GPU count, 1 or more")
    problem = check_value(flag, value)
    if problem:
        raise UserError(f"--change {text!r}: {problem}")
    return {flag: value.lower() if flag in BOOLEAN_FLAGS else value}


@dataclass(frozen=True, slots=True)
class FlagChanges:
    """Flag changes parsed once: `values` ({flag: value}) as the replay applies them, `texts` as they were
    written (a prediction shows those). Built from the user's `--change` texts at the CLI edge (`parse`),
    or from a proposal's {flag: value} (`of`)."""

    values: dict[str, str]
    texts: tuple[str, ...]

    @classmethod
    def parse(cls, texts: Iterable[str]) -> FlagChanges:
        """Each `--change` text checked (parse_change); a flag changed twice is one line naming both values,
        not the last silently winning."""
        values: dict[str, str] = {}
        for text in texts:
            for flag, value in parse_change(text).items():
                if flag in values:
                    raise UserError(
                        f"--change {text!r}: {flag} is already changed to {values[flag]}; give each flag once"
                    )
                values[flag] = value
        return cls(values=values, texts=tuple(texts))

    @classmethod
    def of(cls, values: dict[str, str]) -> FlagChanges:
        return cls.parse(f"{flag} {value}" for flag, value in values.items())


# Predictions for batches beyond EXTRAPOLATION_FACTOR x the largest the calibration ran carry at least
# EXTRAPOLATION_ERROR: make demo's SmolLM2 round, fitted at batch 1 and predicting --max-num-seqs 16,
# missed ITL p50 by 58 % and tok/s by 33 % (median over steps; BENCHMARKS.md, "servops demo").
EXTRAPOLATION_FACTOR = 2
EXTRAPOLATION_ERROR = 0.5


@dataclass(frozen=True, slots=True)
class ServerContext:
    """What the performance model knows of the server besides its ramp.

    Why one object: every entry of the model (predict, triage's forecast, tune's round) needs the same
    facts, and they used to travel as five loose parameters beside raw strings. The command is parsed
    once, at the CLI edge; `engine` says whose defaults fill the flags it left out ("bundled",
    "vllm-cpu", "vllm-cuda"; None: the command decides); `kv_cache_tokens` is the pool the server
    logged; `device_share` (the pool in GiB per GPU and the GPU's size) prices --gpu-memory-utilization;
    `deployment` (model, GPU, launch) prices --tensor-parallel-size and stages (advisor/perf/parallel.py).
    """

    command: ServeCommand
    engine: str | None = None
    kv_cache_tokens: int | None = None
    device_share: DeviceShare | None = None
    deployment: Deployment | None = None

    def default_inputs(self) -> dict[str, Any]:
        """What vLLM's defaults for the flags the command left out depend on (rules/vllm_defaults.py): the
        version and one GPU's memory and name, as far as this context knows them."""
        if self.deployment is not None:
            gpu = self.deployment.gpu
            version = version_of(self.deployment.launch.vllm_version)
            return {"version": version, "usable_gib": gpu.usable_gib, "gpu_name": gpu.name}
        if self.device_share is not None:
            return {"usable_gib": self.device_share.device_gib}
        return {}


class Forecaster:
    """One measured ramp, fitted once, asked any number of what-if questions.

    Why a class: tune and triage ask about several candidate changes (and several values of one flag)
    against the same ramp; the fit and the replay of the unchanged launch are done once, by `fit`.
    The constructor only builds the parts (the one engine's share of the ramp, its replayed workload,
    the scheduler limits the command ran with) and does no fitting.
    """

    def __init__(self, ramp: MeasuredRamp, source: str, server: ServerContext) -> None:
        self.source, self.server = source, server
        self.command, self.device_share, self.deployment = server.command, server.device_share, server.deployment
        self.engine = engine_kind(self.command, server.engine)
        self.replicas = self._count(REPLICAS_FLAG)
        self.stages = self._count(PIPELINE_PARALLEL_FLAG)  # the ramp stays one engine's (docs/predict.md)
        self.ramp = one_replica(ramp, self.replicas)
        self.workload = workload_from_ramp(self.ramp.config, [s.model_dump() for s in self.ramp.steps])
        self.notes: list[str] = list(self.workload.notes)
        if self.replicas > 1:
            self.notes.append(
                f"{REPLICAS_FLAG} {self.replicas}: the ramp measured {self.replicas} engines together; the model "
                f"fits and predicts one engine's share (loads are per engine: the busiest engine's streams, its "
                f"share of the tokens/s)"
            )
        self.limits = limits_for(
            self.command,
            self.engine,
            num_blocks=_blocks_override(self.command),
            kv_tokens=server.kv_cache_tokens,
            **server.default_inputs(),
        )
        self.calibration: Calibration | None = None
        self.gap_spread: GapSpread | None = None  # measured on the ramp (advisor/perf/gap_spread.py)
        self.cost: StepCost | None = None
        self.baseline: PredictedRamp | None = None

    def fit(self, cost: StepCost | None = None, progress: Progress = lambda line: None) -> Forecaster:
        """Fit the step cost to the ramp (or take `cost`, a prior: nothing measured to fit), size the KV pool
        the ramp saw when the server did not state it, and replay the unchanged launch; returns self."""
        if cost is not None:
            self.cost = cost
            self.notes.append(
                f"cost from the {cost.source} (±{cost.relative_error:.0%}); a ramp "
                f"(servops ramp, then --ramp) replaces it with a fit"
            )
        else:
            progress(
                f"predict: calibrating the step cost on {len(self.ramp.usable_steps)} measured step(s) of {self.source}"
            )
            self.calibration = calibrate(self.ramp, self.limits, self.workload, source=self.source)
            self.cost = self.calibration.cost
            self.notes.append(calibration_note(self.calibration))
            if self.limits.num_blocks is None:
                self._estimate_pool()
        self.baseline = predict_ramp(self.ramp, self.limits, self.cost, self.workload, with_bands=False)
        if self.calibration is not None:
            self._measure_gap_spread()
        return self

    def _estimate_pool(self) -> None:
        """The KV pool from the KV usage the ramp saw, when the server's size was not given."""
        estimated = estimate_kv_blocks(self.ramp, self.limits, self.cost, self.workload)
        if not estimated:
            self.notes.append(
                "KV pool: unknown (no KV usage in the ramp and no --kv-cache-tokens): the replay "
                "never runs out of blocks, so no preemption is predicted"
            )
            return
        self.limits = self.limits.model_copy(update={"num_blocks": estimated})
        self.notes.append(
            f"KV pool: about {estimated * self.limits.block_size:,} tokens ({estimated} blocks of "
            f"{self.limits.block_size}), estimated from the KV usage the ramp saw; pass --kv-cache-tokens "
            f"(the 'KV cache size: N tokens' line of the server's log) to state it"
        )

    def predict(self, changes: FlagChanges, with_bands: bool = True) -> Prediction:
        """The ramp predicted with `changes` applied."""
        if self.cost is None or self.baseline is None:
            raise RuntimeError("Forecaster.predict before fit(): fit the step cost first")
        applied, texts = changes.values, list(changes.texts)
        after_command = self.command.with_changes(applied)
        kv_tokens, layout = self._pool_after(applied)
        after = limits_for(
            after_command,
            self.engine,
            num_blocks=_blocks_override(after_command),
            kv_tokens=kv_tokens,
            **self.server.default_inputs(),
        )
        cost, notes = self._cost_for(after)
        if layout is not None:
            cost, notes = self._at_layout(cost, notes, layout)
        predicted = predict_ramp(self.ramp, after, cost, self.workload, with_bands=with_bands)
        return Prediction(
            ramp=self.source,
            engine=self.engine,
            server_args=self.command.render(),
            changes=texts,
            server_args_after=after_command.render(),
            limits_before=self.limits,
            limits_after=after,
            cost=cost,
            calibration=self.calibration,
            offered_unit=self.ramp.steps[0].offered_unit,
            steps=predicted.steps,
            bands=predicted.bands,
            knee=predicted.knee,
            safe_operating_point=predicted.safe_operating_point,
            edges=predicted.edges,
            baseline=self.baseline,
            measured={"knee": self.ramp.knee, "safe_operating_point": self.ramp.safe_operating_point},
            notes=[*self.notes, *notes],
        )

    def _pool_after(self, applied: dict[str, str]) -> tuple[int | None, tuple[ParallelTerms, ParallelTerms] | None]:
        """The KV pool in tokens after the change (its bytes, its device share, then its layout's share of
        the pool, in that order), and the layout's terms as ramped and after when the change moves TP or PP.
        A UserError when a change cannot be priced, the pool's before the layout's."""
        kv_tokens = self.limits.kv_tokens
        if POOL_BYTES_FLAG in applied:
            kv_tokens = pool_tokens_after(self.command, kv_tokens, applied[POOL_BYTES_FLAG])
        if SHARE_FLAG in applied:
            kv_tokens = pool_tokens_for_share(self.command, kv_tokens, applied[SHARE_FLAG], self.device_share)
        layout = self._layout(*self._layout_after(applied)) if LAYOUT_FLAGS & applied.keys() else None
        if layout is not None and kv_tokens:
            before_terms, after_terms = layout
            kv_tokens = max(1, round(kv_tokens * after_terms.kv_cache_tokens / max(1, before_terms.kv_cache_tokens)))
        return kv_tokens, layout

    def _at_layout(
        self, cost: StepCost, notes: list[str], layout: tuple[ParallelTerms, ParallelTerms]
    ) -> tuple[StepCost, list[str]]:
        """The cost moved to the new layout, with its note last: the layout choice quotes it
        (advisor/triage/layouts.py). With replicas ramped, the figures stay one replica's."""
        cost, note = cost_at_layout(cost, *layout)
        if self.replicas > 1:
            notes = [
                *notes,
                f"the figures are one {layout[1].describe()} replica's at each load per engine; "
                f"the command after keeps {REPLICAS_FLAG} {self.replicas} as ramped: how many replicas the "
                f"GPUs make is triage's layout choice (docs/triage.md)",
            ]
        return cost, [*notes, note]

    def _measure_gap_spread(self) -> None:
        """The spread of the server's token gaps around its step, measured on the ramp's steps whose replay
        has no tail of its own, into the cost (and the baseline replayed with it); a note either way."""
        spread = self.gap_spread = measure_spread(self.ramp.steps, self.baseline.steps)
        if spread is None:
            self.notes.append(SPREAD_UNMEASURED)
            return
        self.cost = self.cost.model_copy(update={"gap_spread": spread.ratios})
        self.notes.append(spread.describe())
        self.baseline = predict_ramp(self.ramp, self.limits, self.cost, self.workload, with_bands=False)

    def current_tensor_parallel(self) -> int:
        return self._count(TENSOR_PARALLEL_FLAG)

    def _count(self, flag: str) -> int:
        return command_size(self.command, flag)

    def _layout_after(self, applied: dict[str, str]) -> tuple[int, int]:
        """The TP size and stages after `applied`, each as ramped unless changed."""
        tp = int(applied.get(TENSOR_PARALLEL_FLAG, self.current_tensor_parallel()))
        return tp, int(applied.get(PIPELINE_PARALLEL_FLAG, self.stages))

    def _layout(self, tp: int, pp: int) -> tuple[ParallelTerms, ParallelTerms]:
        """The layout-dependent terms as ramped and at TP `tp` x `pp` stages; a UserError when the change
        cannot be priced."""
        after = terms_for_change(self.engine, self.deployment, tp, pp)
        return parallel_terms(self.deployment, self.current_tensor_parallel(), self.stages), after

    def _cost_for(self, after: SchedulerLimits) -> tuple[StepCost, list[str]]:
        """The fitted cost, its uncertainty widened when `after` lets the engine batch well beyond
        what the calibration ramp ran: the per-sequence decode cost is then an extrapolation."""
        if self.calibration is None:
            return self.cost, []
        top = max((s.offered for s in self.ramp.steps), default=1.0)
        reachable = min(after.max_num_seqs, int(top)) if self.ramp.plan.mode == "concurrency" else after.max_num_seqs
        seen = self.calibration.max_batch_seen
        if reachable <= EXTRAPOLATION_FACTOR * seen or self.cost.relative_error >= EXTRAPOLATION_ERROR:
            return self.cost, []
        return (
            self.cost.model_copy(update={"relative_error": EXTRAPOLATION_ERROR}),
            [
                f"the change lets the engine decode up to {reachable} sequences per step; the calibration ramp "
                f"ran at most {seen}, so the per-sequence cost is extrapolated: ±{EXTRAPOLATION_ERROR:.0%} "
                f"instead of the fit's ±{self.cost.relative_error:.0%} (ramp a configuration that batches, "
                f"then predict from it, for a tighter figure)"
            ],
        )


def what_if(
    ramp: MeasuredRamp,
    source: str,
    server: ServerContext,
    changes: FlagChanges,
    progress: Progress = lambda line: None,
) -> Prediction:
    """One question: the ramp predicted under `changes` (`servops predict`)."""
    flags = changes.values  # refuse a change the model cannot price before the calibration's work
    if SHARE_FLAG in flags and (server.device_share is None or not server.kv_cache_tokens):
        raise UserError(share_inputs_missing(flags[SHARE_FLAG]))
    if LAYOUT_FLAGS & flags.keys():
        sizes = [
            int(flags.get(flag) or command_size(server.command, flag))
            for flag in (TENSOR_PARALLEL_FLAG, PIPELINE_PARALLEL_FLAG)
        ]
        terms_for_change(engine_kind(server.command, server.engine), server.deployment, *sizes)
    forecaster = Forecaster(ramp, source, server)
    _refuse_a_length_below_the_requests(forecaster, flags)
    forecaster.fit(progress=progress)
    progress("predict: replaying the measured configuration and the changed one")
    return forecaster.predict(changes)


def _refuse_a_length_below_the_requests(forecaster: Forecaster, flags: dict[str, str]) -> None:
    """A --max-model-len below the ramp's typical request is refused, not predicted. Why: vLLM's server
    rejects a request whose prompt plus max_tokens exceeds --max-model-len with HTTP 400 before it is
    scheduled, so most of the ramp would be refused and its latency is not what changes."""
    text = flags.get(MAX_MODEL_LEN_FLAG)
    length = size_of(MAX_MODEL_LEN_FLAG, text) if text else None
    typical = forecaster.workload.typical_request_tokens()
    if length is not None and 0 < length < typical:
        raise UserError(
            f"--change '{MAX_MODEL_LEN_FLAG} {text}': the ramp's median request takes {typical:,} tokens (prompt "
            f"and output); vLLM rejects each request longer than {MAX_MODEL_LEN_FLAG} with HTTP 400, so most of "
            f"this load would be refused, not served; give at least {typical:,}"
        )


def command_size(command: ServeCommand, flag: str) -> int:
    """A size flag of a command (TP, PP, data-parallel engines): its value, 1 when unset or not a positive
    whole number."""
    text = command.value(flag) or "1"
    return int(text) if text.isdigit() and int(text) > 0 else 1


def estimate_kv_blocks(ramp: MeasuredRamp, limits: SchedulerLimits, cost, workload) -> int | None:
    """Blocks in the pool ≈ blocks the replay holds on average / the KV usage /metrics showed (median over
    steps with usage above 2 %, where rounding does not dominate)."""
    estimates = []
    for step in ramp.usable_steps:
        usage = step.server.kv_cache_usage_mean if step.server else None
        if not usage or usage < 0.02:
            continue
        replay = replay_step(ramp.plan, step.step, limits.model_copy(update={"num_blocks": None}), cost, workload)
        window = replay.steps_in_window(ramp.plan, step.step)
        busy = sum(s.end - s.start for s in window)
        if not busy:
            continue
        held = sum((s.end - s.start) * s.used_blocks for s in window) / busy
        estimates.append(held / usage)
    return max(1, round(statistics.median(estimates))) if estimates else None


def _blocks_override(command: ServeCommand) -> int | None:
    text = command.value("--num-gpu-blocks-override")
    return int(text) if text and text.isdigit() and int(text) > 0 else None


def synthetic_ramp(levels: list[float], input_tokens: int, output_tokens: int, step_s: float = 60.0) -> dict:
    """A ramp document with nothing measured: the load steps and request shape a prediction replays
    when only workload hints are known (offline triage with a roofline prior)."""
    config = {
        "mode": "concurrency",
        "levels": levels,
        "step_s": step_s,
        "warmup_s": step_s / 6,
        "cooldown_s": step_s,
        "request_timeout_s": 600.0,
        "workload": {
            "kind": "random",
            "input_len": {"mean": max(1, input_tokens)},
            "output_len": {"mean": max(1, output_tokens)},
        },
    }
    empty = {"p50": None, "p90": None, "p95": None, "p99": None, "count": 0}
    steps = [
        {
            "step": k,
            "offered": level,
            "offered_unit": "concurrency",
            "window_s": step_s,
            "window_start_ts": 0.0,
            "window_end_ts": 0.0,
            "achieved_rate": 0.0,
            "requests": 0,
            "ok_requests": 0,
            "errors": {},
            "ttft_s": empty,
            "itl_s": empty,
            "itl_request_mean_s": empty,
            "tpot_s": empty,
            "e2e_s": empty,
            "output_tokens": 0,
            "output_tokens_per_s": 0.0,
            "goodput_rps": 0.0,
            "valid": False,
            "invalid_reason": "not measured: workload hints only",
            "client": {},
        }
        for k, level in enumerate(levels)
    ]
    return {"kind": "ramp", "config": config, "steps": steps, "knee": None, "safe_operating_point": None}
