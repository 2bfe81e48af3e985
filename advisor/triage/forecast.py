"""Triage's flag changes with their predicted effect on latency and throughput.

Why in triage: the on-call question is "what happens to my TTFT, my ITL and my capacity if I
do this?". When a ramp of this server is at hand (`servops triage --ramp RAMP.json`), the
performance model calibrates on it and replays the ramp's load with each proposed change:
- a change the model predicts (the scheduling flags) gets the predicted safe operating
  point, TTFT/ITL p99 and tok/s at the ramp's top load, before → after, with the uncertainty;
- for --max-num-seqs and --max-num-batched-tokens the value is the one the model predicts
  best for the objective (the ramp's SLOs, or the user's --ttft-slo/--itl-slo), not the rule's
  rule of thumb;
- a change predicted not to help is taken out of the finding and listed as rejected, with
  the predicted figures that say why;
- within a severity, findings are ordered by predicted gain.
Changes the model does not cover keep the memory prediction they had.

Without a ramp, when the model, the GPU and the request lengths are known, the cost is the
roofline prior (advisor/perf/prior.py) over a synthetic ramp of 1…N streams: its ±50 % makes
it annotate only, never overrule a rule.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.errors import UserError
from advisor.perf.cost import StepCost
from advisor.perf.criterion import TuneCriterion
from advisor.perf.limits import LAYOUT_FLAGS, MODELLED_FLAGS, PIPELINE_PARALLEL_FLAG, SHARE_FLAG, TENSOR_PARALLEL_FLAG
from advisor.perf.measured import MeasuredRamp, measured_ramp
from advisor.perf.parallel import layout_text
from advisor.perf.ranking import ChangeForecast, rank_changes, step_views
from advisor.perf.replicas import (
    REPLICA_RULES,
    REPLICAS_FLAG,
    ms_text,
    replicas_are_servers,
    replicas_change,
    seconds_text,
    size_replicas,
)
from advisor.perf.whatif import Forecaster, ServerContext
from advisor.triage.layouts import (
    ANNOTATED,
    CHOSEN,
    WIDER_RULES,
    LayoutForecast,
    best_layout,
    forecast_layout,
    layout_changes,
    price_layouts,
    regrouping_change,
)
from advisor.triage.result import RejectedChange
from loadtest.slo import SLO
from rules.model import ConfigChange, Finding, PredictedEffect

# Above this in-sample error the fit is too loose to overrule a rule: the rule's change stays,
# with the prediction beside it and the caveat, instead of being rejected or re-valued.
TRUSTED_RELATIVE_ERROR = 0.25


@dataclass(frozen=True, slots=True)
class ForecastRequest:
    """What triage's forecast takes besides the findings: the measured ramp and the server it measured.

    `slo_text`: the user's SLOs as `servops predict --slo` takes them (already applied to the ramp).
    `cost`: a prior to use instead of a fit (no ramp: the roofline over workload hints). `ramp_path`:
    the ramp file as the user named it; each prediction then carries the `servops predict` command that
    reproduces its figures. `in_flight`: the requests the server holds now (running + waiting) or the
    clients' concurrency; with it, the finding whose remedy is more replicas gets the model's replica
    count (advisor/perf/replicas.py). `gpus`: the GPUs the host has (--gpus), when more than the server
    uses: the layouts weighed then take the idle ones too (advisor/triage/layouts.py)."""

    ramp: MeasuredRamp
    source: str
    server: ServerContext
    slo_text: str = ""
    cost: StepCost | None = None
    ramp_path: str | None = None
    in_flight: float | None = None
    gpus: int | None = None

    @classmethod
    def for_document(
        cls, document: dict[str, Any], source: str, server: ServerContext, slos: list[SLO], **options: Any
    ) -> ForecastRequest:
        """The request for a ramp document (a ramp file, or a live window as one), the user's SLOs set on it
        as `servops predict --slo` would; UserError when the document is not a usable ramp."""
        slo_text = ",".join(f"{s.key}={s.bound_s:g}s" for s in slos)
        if slos:
            document = {**document, "config": {**(document.get("config") or {}), "slo": slo_text}}
        return cls(ramp=measured_ramp(document, source), source=source, server=server, slo_text=slo_text, **options)


def forecast_findings(findings: list[Finding], request: ForecastRequest) -> tuple[list[RejectedChange], list[str]]:
    """Attach predictions to `findings` in place (values, effects, order); the rejected changes and notes."""
    try:
        forecaster = Forecaster(request.ramp, request.source, request.server).fit(cost=request.cost)
    except UserError as exc:
        return [], [f"no latency predictions: {exc}"]
    triage = {"findings": [f.model_dump(mode="json") for f in findings]}
    loose = forecaster.cost.relative_error > TRUSTED_RELATIVE_ERROR
    ranked = rank_changes(
        forecaster, TuneCriterion(), triage, skip=set(), allow_unsafe=True, search=not loose, alternatives=True
    )
    notes = [f"latency predictions: {note}" for note in forecaster.notes]

    def command(forecast: ChangeForecast | None) -> str | None:
        return _command_for(forecast, request, forecaster)

    def command_for_layout(tp: int, pp: int) -> str:
        if not request.ramp_path:
            return ""
        layout = [f"{TENSOR_PARALLEL_FLAG} {tp}"] + (
            [f"{PIPELINE_PARALLEL_FLAG} {pp}"] if pp != forecaster.stages else []
        )
        return reproduce_command(request, forecaster, layout)

    rejected: list[RejectedChange] = []
    notes += _choose_layouts(findings, forecaster, request.in_flight, rejected, loose, command_for_layout, request.gpus)
    if loose:
        _annotate_only(findings, ranked, forecaster, command)
        notes.append(
            f"latency predictions: the fit's error (±{forecaster.cost.relative_error:.0%}) is above "
            f"{TRUSTED_RELATIVE_ERROR:.0%}, so the rules' changes stand as proposed, with the prediction "
            f"beside them; ramp more load levels for a tighter fit"
        )
        return rejected, notes
    best = {r.changes[0]["flag"]: r for r in ranked if r.helps}

    gains: dict[int, float] = {}

    def judge(finding: Finding, change: ConfigChange, ranks: bool = True) -> ConfigChange | None:
        """The change with the model's value and effect, or None after listing it (and the model's
        closest value, when it came near) as rejected; a flag the model does not cover as it is.
        `ranks`: its predicted gain orders the finding (a finding's changes; not its alternatives)."""
        if change.flag not in MODELLED_FLAGS or _gives_up_kv_room(change):
            return change
        winner = best.get(change.flag)
        if winner is None:
            rejected.extend(rejections(finding, change, ranked, command))
            return None
        chosen = winner.changes[0]
        updated = change.model_copy(update={"proposed": str(chosen["proposed"]), "reason": chosen["reason"]})
        updated.predicted_effect = _effect(winner, forecaster)
        if _below_current(updated):
            updated = _say_why_lower(updated, winner)
        updated.predicted_effect.command = command(winner) or ""
        if ranks:
            gains[id(finding)] = max(gains.get(id(finding), 0.0), _gain(winner))
        return updated

    for finding in findings:
        # Alternatives are applied instead of the changes, so they meet the same test (a preempting CPU
        # server's larger KV space in bytes is one, advisor/perf/pool.py).
        finding.alternatives = [kept for kept in (judge(finding, a, ranks=False) for a in finding.alternatives) if kept]
        finding.changes = [kept for kept in (judge(finding, c) for c in finding.changes) if kept]
    notes += _propose_replicas(findings, forecaster, best, request)
    order = {id(f): i for i, f in enumerate(findings)}
    findings.sort(key=lambda f: (_severity_rank(f), -gains.get(id(f), 0.0), order[id(f)]))
    return rejected, notes


def _choose_layouts(
    findings: list[Finding],
    forecaster: Forecaster,
    in_flight: float | None,
    rejected: list[RejectedChange],
    loose: bool,
    command: Callable[[int, int], str],
    available: int | None = None,
) -> list[str]:
    """Re-value every remedy that regroups the GPUs (TP over PCIe traded for replicas or for pipeline
    stages, or replicas at their bandwidth floor merged into wider ones) to the layout of the same GPUs
    the model predicts to carry most (advisor/triage/layouts.py); notes. The layouts are priced once, at
    the first such remedy: OP-3.1, AP-7 and OP-5.13 may each propose the same one."""
    current_tp, stages = forecaster.current_tensor_parallel(), forecaster.stages
    used = current_tp * stages * forecaster.replicas
    gpus = max(used, available or 0)  # with idle GPUs (--gpus), every layout of all of them is weighed
    priced: tuple[list[LayoutForecast], dict[tuple[int, int], str]] | None = None
    notes: list[str] = []
    for finding in findings:
        tp_change = regrouping_change(finding.changes, current_tp, gpus > used and finding.rule in WIDER_RULES)
        if tp_change is None:
            continue
        pp_change = next((c for c in finding.changes if c.flag == PIPELINE_PARALLEL_FLAG), None)
        rule_key = (int(tp_change.proposed), _stages(pp_change, stages))
        if forecaster.deployment is None:
            notes.append(
                f"{finding.rule}: the layout is the rule's ({layout_text(*rule_key)}); pass --model and --gpu to "
                "have the performance model weigh every layout of the GPUs"
            )
            continue
        priced = priced or price_layouts(forecaster, gpus, in_flight)
        layouts, unpriced = priced
        current = next((layout for layout in layouts if layout.key == (current_tp, stages)), None)
        if current is not None and gpus > used:  # the server as it runs, beside the idle GPUs
            current = forecast_layout(forecaster, current_tp, stages, used, in_flight, forecaster.replicas)
        rule_layout = next((layout for layout in layouts if layout.key == rule_key), None)
        # The rule's layout unpriced: it stands when no other layout can be priced either (a GPU without
        # a catalog bandwidth) or the fit is loose; otherwise it cannot start or vLLM refuses it.
        pricing = bool(forecaster.deployment.gpu.memory_bandwidth_tbps)
        if current is None or (rule_layout is None and (loose or not pricing)):
            why = (
                unpriced.get(
                    (current_tp, stages), f"the current layout ({layout_text(current_tp, stages)}) is not priced"
                )
                if current is None
                else unpriced.get(rule_key, "")
            )
            notes.append(f"{finding.rule}: the rule's layout stands, unpriced: {why}")
            continue
        chosen = rule_layout if loose else best_layout(layouts, current)
        others = [layout.describe() for layout in layouts if layout is not chosen and layout is not current]
        if rule_layout is None:  # e.g. predicted not to start: the model chooses among the layouts it can price
            others.append(f"the rule's {layout_text(*rule_key)}: not priced: {unpriced.get(rule_key, '')}")
        kept = [c for c in finding.changes if c.flag not in (*LAYOUT_FLAGS, REPLICAS_FLAG)]
        if chosen is current:
            for change in (tp_change, pp_change):
                if change is None:
                    continue
                rejected.append(
                    RejectedChange(
                        rule=finding.rule,
                        change=change,
                        reason=f"the performance model predicts the current layout carries most: "
                        f"{current.describe()}; weighed: {'; '.join(others)}",
                        command=(command(*rule_key) or None) if rule_layout is not None else None,
                    )
                )
            finding.changes = kept
            continue
        changes = layout_changes(
            chosen, current, tp_change, command(*chosen.key), ANNOTATED if loose else CHOSEN, rule_pp=pp_change
        )
        if others:
            changes[0].predicted_effect.text += f"; weighed: {'; '.join(others)}"
        finding.changes = [*changes, *kept]
    return notes


def _stages(change: ConfigChange | None, current: int) -> int:
    """The stages a rule's --pipeline-parallel-size change proposes; the current ones without one."""
    return int(change.proposed) if change is not None and change.proposed.isdigit() else current


def rejections(
    finding: Finding,
    change: ConfigChange,
    ranked: list[ChangeForecast],
    command: Callable[[ChangeForecast | None], str | None],
) -> list[RejectedChange]:
    """A change no value of whose flag is predicted to help: listed as rejected with the figures of its own
    value (else the flag's best loser), and beside it the model's closest value when one helped at its
    percentiles' nominal ranks but not a half-point away (advisor/perf/ranking.py), so the on-call sees
    how near the model came."""
    of_flag = [r for r in ranked if r.changes[0]["flag"] == change.flag]
    own = next((r for r in of_flag if r.prediction and str(r.changes[0]["proposed"]) == change.proposed), None)
    losers = [r for r in of_flag if not r.helps and r.prediction]
    loser = own or (losers[-1] if losers else None)
    reason = loser.decision if loser else "the performance model predicts no gain"
    listed = [_rejection(finding, change, reason, loser, command)]
    closest = next((r for r in of_flag if r.helps_at_nominal_ranks and not r.helps), None)
    if closest is not None and str(closest.changes[0]["proposed"]) != change.proposed:
        searched = change.model_copy(update={"proposed": str(closest.changes[0]["proposed"])})
        listed.append(_rejection(finding, searched, f"the model's closest value: {closest.decision}", closest, command))
    return listed


def _rejection(
    finding: Finding, change: ConfigChange, reason: str, forecast: ChangeForecast | None, command
) -> RejectedChange:
    return RejectedChange(
        rule=finding.rule,
        change=change,
        reason=reason,
        predicted=forecast.prediction if forecast else None,
        command=command(forecast),
    )


def _command_for(forecast: ChangeForecast | None, request: ForecastRequest, forecaster: Forecaster) -> str | None:
    """The `servops predict` that gives a candidate's figures again (none without a ramp file)."""
    if forecast is None or not request.ramp_path:
        return None
    chosen = forecast.changes[0]
    return reproduce_command(request, forecaster, f"{chosen['flag']} {chosen['proposed']}")


def _gives_up_kv_room(change: ConfigChange) -> bool:
    """A lower --gpu-memory-utilization: proposed so the server starts or keeps headroom (OP-1.3, AP-1),
    never for latency, so the replay (which can only show the smaller pool) does not judge it."""
    try:
        return change.flag == SHARE_FLAG and float(change.proposed) < float(change.current or "inf")
    except ValueError:
        return False


def _below_current(change: ConfigChange) -> bool:
    """A batch-size value under the one the server already runs (and so is known to run)."""
    try:
        return change.current is not None and float(change.proposed) < float(change.current)
    except ValueError:
        return False


def _say_why_lower(change: ConfigChange, winner: ChangeForecast) -> ConfigChange:
    """Going below a value the server runs successfully needs its reason and its throughput price in words."""
    figures = change.predicted_effect.figures if change.predicted_effect else {}
    before, after = figures.get("output_tokens_per_s_before"), figures.get("output_tokens_per_s_after")
    price = (
        f"{before:.0f} → {after:.0f} tok/s at offered {figures.get('offered', 0):g}"
        if before is not None and after is not None
        else "throughput not predicted"
    )
    why = winner.decision.removeprefix("predicted to help: ")
    return change.model_copy(
        update={
            "reason": f"{change.reason}; below the {change.current} the server runs now because {why}",
            "cost": f"{change.cost + '; ' if change.cost else ''}throughput {price}",
        }
    )


def _propose_replicas(
    findings: list[Finding],
    forecaster: Forecaster,
    best: dict[str, ChangeForecast],
    request: ForecastRequest,
) -> list[str]:
    """Give the most severe finding whose remedy is more replicas the model's replica count; notes."""
    in_flight = request.in_flight
    targets = [f for f in findings if f.rule in REPLICA_RULES]
    if not in_flight or not targets or forecaster.ramp.plan.mode != "concurrency":
        return []
    target = min(targets, key=_severity_rank)
    if any(c.flag == REPLICAS_FLAG or c.flag in LAYOUT_FLAGS for c in target.changes):
        return []  # the layout choice sized this finding's fleet (or the rule's layout stands)
    modelled = next((c for c in target.changes if c.flag in MODELLED_FLAGS and c.flag in best), None)
    if modelled is not None:  # the replicas carry the launch with the finding's own change applied
        prediction = best[modelled.flag].prediction or {}
        steps, safe = prediction.get("steps") or [], prediction.get("safe_operating_point")
        error, setting = prediction.get("relative_error", forecaster.cost.relative_error), modelled.command_line()
    else:
        baseline = forecaster.baseline
        steps = step_views(baseline)
        safe = baseline.safe_operating_point.model_dump() if baseline.safe_operating_point else None
        error, setting = forecaster.cost.relative_error, None
    sizing = size_replicas(in_flight, [s for s in steps if s["valid"]], (safe or {}).get("offered"), error)
    if sizing is None:
        if safe is None:
            return [
                f"replicas: no load step of the ramp is predicted to meet the SLOs, so the replica count for "
                f"{in_flight:g} requests in flight is unknown; ramp lower loads to size it"
            ]
        return []
    command = reproduce_command(request, forecaster, setting) if request.ramp_path else ""
    current = forecaster.replicas
    servers = replicas_are_servers(forecaster.engine)
    target.changes.append(replicas_change(sizing, current, command, setting, servers=servers))
    return []


def reproduce_command(request: ForecastRequest, forecaster: Forecaster, change: str | list[str] | None) -> str:
    """`servops predict` with the same ramp, launch, engine, KV pool and SLOs: the figures shown, again
    (no `--change`: the ramped configuration itself; a list: one `--change` each, applied together)."""
    changes = [change] if isinstance(change, str) else list(change or [])
    words = [
        "servops",
        "predict",
        "--ramp",
        request.ramp_path or "",
        "--server-args",
        forecaster.command.render(),
        "--engine",
        forecaster.engine,
    ]
    if request.server.kv_cache_tokens:
        words += ["--kv-cache-tokens", str(request.server.kv_cache_tokens)]
    if forecaster.device_share is not None:
        share = forecaster.device_share
        words += ["--kv-cache-gib", f"{share.pool_gib:g}", "--gpu-memory-gib", f"{share.device_gib:g}"]
    deployment = forecaster.deployment
    if any(c.split()[0] in LAYOUT_FLAGS for c in changes) and deployment is not None:
        words += ["--model", deployment.model.source_path or deployment.model.name, "--gpu", deployment.gpu.name]
    if request.slo_text:
        words += ["--slo", request.slo_text]
    for one in changes:
        words += ["--change", one]
    return shlex.join(words)


def with_change(command: str, change: str) -> str:
    """A printed `servops predict …` command with its `--change` set to `change` (e.g. "--max-num-seqs 8"):
    the same ramp, launch, engine, KV pool and SLOs, asked about another value. Why parse and not
    replace text: the value also appears inside --server-args when the launch sets it."""
    words = shlex.split(command)
    if words[:2] != ["servops", "predict"]:
        raise ValueError(f"not a servops predict command: {command}")
    if "--change" in words:
        words[words.index("--change") + 1] = change
    else:
        words += ["--change", change]
    return shlex.join(words)


def _annotate_only(
    findings: list[Finding],
    ranked: list[ChangeForecast],
    forecaster: Forecaster,
    command: Callable[[ChangeForecast | None], str | None],
) -> None:
    """A loose fit: each modelled change and alternative keeps the rule's value and gets the model's
    figures for that value, with the command that gives them again."""
    predicted = {(r.changes[0]["flag"], str(r.changes[0]["proposed"])): r for r in ranked if r.prediction}
    for finding in findings:
        for change in [*finding.changes, *finding.alternatives]:
            match = predicted.get((change.flag, change.proposed))
            if change.flag in MODELLED_FLAGS and match is not None:
                change.predicted_effect = _effect(match, forecaster)
                change.predicted_effect.command = command(match) or ""


def _effect(forecast: ChangeForecast, forecaster: Forecaster) -> PredictedEffect:
    prediction = forecast.prediction or {}
    after = prediction.get("steps") or []
    before = forecaster.baseline.steps
    if not after or not before:
        return PredictedEffect()
    top_after, top_before = after[-1], before[-1]
    error = prediction.get("relative_error", 0.0)
    figures = {
        "safe_operating_point_before": forecast.criterion_before,
        "safe_operating_point_after": forecast.criterion_after,
        "offered": top_after["offered"],
        "ttft_p99_s_before": top_before.ttft_s.p99,
        "ttft_p99_s_after": top_after["ttft_s"]["p99"],
        "itl_p99_s_before": top_before.itl_s.p99,
        "itl_p99_s_after": top_after["itl_s"]["p99"],
        "output_tokens_per_s_before": top_before.output_tokens_per_s,
        "output_tokens_per_s_after": top_after["output_tokens_per_s"],
        "relative_error": error,
    }
    figures = {k: round(float(v), 4) for k, v in figures.items() if v is not None}
    text = (
        f"at offered {top_after['offered']:g}: TTFT p99 {seconds_text(top_before.ttft_s.p99)} → "
        f"{seconds_text(top_after['ttft_s']['p99'])}, ITL p99 {ms_text(top_before.itl_s.p99)} → "
        f"{ms_text(top_after['itl_s']['p99'])}, "
        f"{top_before.output_tokens_per_s:.0f} → {top_after['output_tokens_per_s']:.0f} tok/s; "
        f"{forecast.decision.removeprefix('predicted to help: ')} (±{error:.0%})"
    )
    return PredictedEffect(text=text, figures=figures)


def _gain(forecast: ChangeForecast) -> float:
    before, after = forecast.criterion_before, forecast.criterion_after
    return (after - before) / before if before and after is not None else 0.0


def _severity_rank(finding: Finding) -> int:
    order = ["critical", "high", "medium", "low", "info"]
    value = getattr(finding.severity, "value", str(finding.severity)).lower()
    return order.index(value) if value in order else len(order)
