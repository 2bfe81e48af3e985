"""The layout of a server's GPUs (TP size x pipeline stages x replicas) the performance model predicts best.

Why: OP-3.1 (and OP-5's and AP-7's PCIe remedies) trade tensor parallelism over a slow link for
replicas (or, for a model one GPU cannot hold, for pipeline stages) by rule of thumb. That is not
always right: one GPU reads twice the weights per step and holds a smaller KV pool, at high load a
TP-2 replica may carry more than two TP-1 replicas do, and stages add sends and read every
stage's weights in turn. The other way, OP-5.4 and OP-5.5 regroup replicas decoding at their
bandwidth floor into half as many of twice the TP when the floor alone says a wider replica steps
faster; whether it carries more within the SLOs is the model's to say.

With a ramp (or a live window) to calibrate on and the model and GPU known, each way of
splitting the same GPUs into replicas of TP' x PP' GPUs (TP' a size vLLM accepts for the model,
PP' no more stages than layers, and a layout at which it starts) is priced
(advisor/perf/parallel.py) and its ramp replayed; the fleet carries replicas x one replica's safe
operating point within the SLOs. The layout that carries most wins; between layouts that carry
the same, the one whose replica, at its share of the requests in flight, has the lower ITL p99
beyond the uncertainty; between those, the one with fewer stages.

The figures a finding then shows are one replica's at its share (the largest ramp step at or
under it), as `servops predict --change "--tensor-parallel-size TP'" --change
"--pipeline-parallel-size PP'"` prints them, and the fleet's capacity; the command is beside them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor.catalog.models import valid_tp
from advisor.errors import UserError
from advisor.perf.limits import PIPELINE_PARALLEL_FLAG, TENSOR_PARALLEL_FLAG
from advisor.perf.parallel import layout_text
from advisor.perf.ranking import step_views
from advisor.perf.replicas import REPLICAS_FLAG, ms_text, seconds_text
from advisor.perf.whatif import FlagChanges, Forecaster
from rules.model import ConfigChange, PredictedEffect


class LayoutForecast(BaseModel):
    """One layout of the GPUs and what the model predicts for it."""

    tensor_parallel: int
    pipeline_parallel: int = 1
    replicas: int
    safe_point_per_replica: float | None
    fleet_safe_point: float
    share: float | None = None  # requests in flight per replica
    step: dict[str, Any] | None = None  # one replica's predicted step at its share
    relative_error: float
    note: str = ""

    @property
    def name(self) -> str:
        return layout_text(self.tensor_parallel, self.pipeline_parallel)

    @property
    def key(self) -> tuple[int, int]:
        """(TP, PP): what identifies the layout of one replica."""
        return self.tensor_parallel, self.pipeline_parallel

    def describe(self) -> str:
        head = f"{self.name} x {self.replicas} replica(s): " + (
            f"{self.fleet_safe_point:g} requests within the SLOs ({self.safe_point_per_replica:g} per replica)"
            if self.safe_point_per_replica
            else "no load step within the SLOs"
        )
        if self.step is None:
            return head
        return (
            f"{head}; at {self.share:.3g} in flight per replica (step {self.step['offered']:g}): TTFT p99 "
            f"{seconds_text(self.step['ttft_s']['p99'])}, ITL p99 {ms_text(self.step['itl_s']['p99'])}, "
            f"{self.step['output_tokens_per_s']:.0f} tok/s per replica (±{self.relative_error:.0%})"
        )


# The rules whose larger TP alone is a wider replica at its bandwidth floor, taken onto GPUs that --gpus
# counts idle (rules/catalog/floors.wider_replica), not a memory need.
WIDER_RULES = ("OP-5.4", "OP-5.5")


def regrouping_change(changes: list[ConfigChange], current_tp: int, onto_idle: bool = False) -> ConfigChange | None:
    """The TP change among `changes` that regroups the server's GPUs: a smaller TP (over PCIe, traded for
    replicas), a larger one that takes its GPUs from the replicas (a decode at its bandwidth floor,
    OP-5.4/OP-5.5), or with `onto_idle` a larger one alone onto GPUs the server leaves idle. Otherwise a
    larger TP alone is a memory need, the GPUs to be added (advisor/triage/tp_choice.py)."""
    tp = next((c for c in changes if c.flag == TENSOR_PARALLEL_FLAG), None)
    if tp is None or not tp.proposed.isdigit() or int(tp.proposed) == current_tp:
        return None
    if int(tp.proposed) < current_tp or any(c.flag == REPLICAS_FLAG for c in changes) or onto_idle:
        return tp
    return None


def layout_candidates(forecaster: Forecaster, gpus: int) -> list[tuple[int, int]]:
    """(TP, PP) replica layouts whose GPUs divide `gpus`: TP a size vLLM accepts for the model, PP no more
    stages than it has layers."""
    deployment = forecaster.deployment
    if deployment is None:
        return []
    model = deployment.model
    return [
        (tp, pp)
        for tp in range(1, gpus + 1)
        if gpus % tp == 0 and valid_tp(model, tp)
        for pp in range(1, gpus // tp + 1)
        if (gpus // tp) % pp == 0 and pp <= model.num_hidden_layers
    ]


def forecast_layout(
    forecaster: Forecaster, tp: int, pp: int, gpus: int, in_flight: float | None, replicas: int | None = None
) -> LayoutForecast:
    """The fleet of `gpus` GPUs as replicas of TP `tp` x `pp` stages (`replicas` of them when given: the
    server as it runs, beside GPUs it leaves idle); a UserError saying why when it cannot be priced (the
    memory model predicts it does not start, or the GPU's bandwidth is unknown)."""
    if (tp, pp) == (forecaster.current_tensor_parallel(), forecaster.stages):
        predicted, error, note = forecaster.baseline, forecaster.cost.relative_error, ""
    else:
        prediction = forecaster.predict(
            FlagChanges.of({TENSOR_PARALLEL_FLAG: str(tp), PIPELINE_PARALLEL_FLAG: str(pp)}), with_bands=False
        )
        predicted, error, note = prediction, prediction.cost.relative_error, prediction.notes[-1]
    replicas = replicas or gpus // (tp * pp)
    safe = predicted.safe_operating_point.offered if predicted.safe_operating_point else None
    steps = [s for s in step_views(predicted) if s["valid"]]
    share = in_flight / replicas if in_flight else None
    carried = [s for s in steps if share is not None and s["offered"] <= share + 1e-9]
    return LayoutForecast(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        replicas=replicas,
        safe_point_per_replica=safe,
        fleet_safe_point=replicas * (safe or 0.0),
        share=share,
        step=max(carried, key=lambda s: s["offered"]) if carried else None,
        relative_error=error,
        note=note,
    )


def price_layouts(
    forecaster: Forecaster, gpus: int, in_flight: float | None
) -> tuple[list[LayoutForecast], dict[tuple[int, int], str]]:
    """Every layout of `gpus` GPUs the model can price, and why each other candidate could not be."""
    layouts, unpriced = [], {}
    for tp, pp in layout_candidates(forecaster, gpus):
        try:
            layouts.append(forecast_layout(forecaster, tp, pp, gpus, in_flight))
        except UserError as exc:
            unpriced[(tp, pp)] = str(exc)
    return layouts, unpriced


def best_layout(layouts: list[LayoutForecast], current: LayoutForecast) -> LayoutForecast:
    """The layout that carries most within the SLOs; on a tie, the lower ITL p99 at the share beyond the
    uncertainty; between changes that tie, the one with fewer stages (fewer sends, one less thing to
    fail); else the current one (a change must earn its restart)."""
    best = current
    for layout in layouts:
        if layout.fleet_safe_point > best.fleet_safe_point or (
            layout.fleet_safe_point == best.fleet_safe_point
            and (
                _clearly_faster(layout, best)
                or (
                    best is not current
                    and layout.pipeline_parallel < best.pipeline_parallel
                    and not _clearly_faster(best, layout)
                )
            )
        ):
            best = layout
    return best


def _clearly_faster(layout: LayoutForecast, other: LayoutForecast) -> bool:
    mine, theirs = _itl(layout), _itl(other)
    if mine is None or theirs is None:
        return False
    error = max(layout.relative_error, other.relative_error)
    return mine * (1 + error) < theirs * (1 - error)


def _itl(layout: LayoutForecast) -> float | None:
    return layout.step["itl_s"]["p99"] if layout.step else None


CHOSEN = "the layout the performance model predicts to carry most within the SLOs"
ANNOTATED = "the rule's layout, with the model's figures beside it (the fit is too loose to choose among layouts)"


def layout_changes(
    chosen: LayoutForecast,
    current: LayoutForecast,
    rule_tp: ConfigChange,
    command: str,
    why: str = CHOSEN,
    rule_pp: ConfigChange | None = None,
) -> list[ConfigChange]:
    """The TP, pipeline-stage and replica changes for `chosen` (those that differ from `current`), the first
    carrying the prediction and its command; `why` says whether the model chose it or only priced the
    rule's. `rule_pp`: the rule's own stage change, whose reason and cost the stage change keeps."""
    gpus = chosen.tensor_parallel * chosen.pipeline_parallel * chosen.replicas
    lead = {
        "reason": f"{rule_tp.reason}; {why} (every TP x PP layout of the {gpus} GPUs weighed)",
        "predicted_effect": _layout_effect(chosen, current, command),
    }
    tp = rule_tp.model_copy(update={"proposed": str(chosen.tensor_parallel)})
    pp = _stage_change(chosen, current, rule_pp)
    replicas = ConfigChange(
        flag=REPLICAS_FLAG,
        current=str(current.replicas),
        proposed=str(chosen.replicas),
        reason=f"keeps all {gpus} GPUs busy as replicas of {chosen.name}",
        cost="no cross-GPU traffic between replicas; each has its own KV pool",
    )
    changes = [
        change
        for change, differs in (
            (tp, chosen.tensor_parallel != current.tensor_parallel),
            (pp, chosen.pipeline_parallel != current.pipeline_parallel),
            (replicas, chosen.replicas != current.replicas),
        )
        if differs
    ] or [tp]
    changes[0] = changes[0].model_copy(update=lead)
    return changes


def _layout_effect(chosen: LayoutForecast, current: LayoutForecast, command: str) -> PredictedEffect:
    """The layout's predicted effect: the fleet's safe operating point before and after, and one replica's
    latency and throughput at the load it would carry (its step of the predicted ramp)."""
    figures = {
        "tensor_parallel_after": chosen.tensor_parallel,
        "pipeline_parallel_after": chosen.pipeline_parallel,
        "replicas_after": chosen.replicas,
        "fleet_safe_operating_point_before": current.fleet_safe_point,
        "fleet_safe_operating_point_after": chosen.fleet_safe_point,
        "safe_operating_point_per_replica_after": chosen.safe_point_per_replica,
        "relative_error": chosen.relative_error,
    }
    if chosen.step is not None:
        figures |= {
            "per_replica_offered": chosen.step["offered"],
            "ttft_p99_s_per_replica": chosen.step["ttft_s"]["p99"],
            "itl_p99_s_per_replica": chosen.step["itl_s"]["p99"],
            "output_tokens_per_s_per_replica": chosen.step["output_tokens_per_s"],
        }
    if current.step is not None:
        figures["itl_p99_s_per_replica_before"] = current.step["itl_s"]["p99"]
    return PredictedEffect(
        text=f"{current.describe()} → {chosen.describe()}",
        figures={k: round(float(v), 4) for k, v in figures.items() if v is not None},
        command=command,
    )


def _stage_change(chosen: LayoutForecast, current: LayoutForecast, rule_pp: ConfigChange | None) -> ConfigChange:
    """The pipeline-stage change for `chosen`, keeping the rule's own reason and cost when the rule proposed one."""
    reason = f"the {chosen.name} layout: {chosen.pipeline_parallel} stage(s) per replica"
    cost = "a send between stages each step; the stages' weights read in turn" if chosen.pipeline_parallel > 1 else ""
    return ConfigChange(
        flag=PIPELINE_PARALLEL_FLAG,
        current=str(current.pipeline_parallel),
        proposed=str(chosen.pipeline_parallel),
        reason=rule_pp.reason if rule_pp is not None else reason,
        cost=(rule_pp.cost if rule_pp is not None else "") or cost,
    )
