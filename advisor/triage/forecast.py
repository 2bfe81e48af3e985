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
from advisor.triage.valuation import Valuation
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


def forecast_findings(findings: list[Finding], request: ForecastRequest) -> Valuation:
    """The findings valued by the performance model: new findings (values, effects, the layout and replica
    changes) in their new order, with the changes predicted not to help and the notes. `findings` is left
    as it was: each valued finding is a copy."""
    try:
        forecaster = Forecaster(request.ramp, request.source, request.server).fit(cost=request.cost)
    except UserError as exc:
        return Valuation(findings=list(findings), notes=[f"no latency predictions: {exc}"])
    triage = {"findings": [f.model_dump(mode="json") for f in findings]}
    loose = forecaster.cost.relative_error > TRUSTED_RELATIVE_ERROR
    ranked = rank_changes(
        forecaster, TuneCriterion(), triage, skip=set(), allow_unsafe=True, search=not loose, alternatives=True
    )
    notes = [f"latency predictions: {note}" for note in forecaster.notes]
    commands = _Commands(request, forecaster)
    rejected: list[RejectedChange] = []
    findings, layout_notes = _choose_layouts(
        findings, forecaster, request.in_flight, rejected, loose, commands.for_layout, request.gpus
    )
    notes += layout_notes
    if loose:
        notes.append(
            f"latency predictions: the fit's error (±{forecaster.cost.relative_error:.0%}) is above "
            f"{TRUSTED_RELATIVE_ERROR:.0%}, so the rules' changes stand as proposed, with the prediction "
            f"beside them; ramp more load levels for a tighter fit"
        )
        return Valuation(_annotate_only(findings, ranked, forecaster, commands.for_change), rejected, notes)
    judge = _Judge(ranked, forecaster, commands.for_change)
    valued = [judge.finding(finding) for finding in findings]
    order = [(_severity_rank(f), -judge.gains.get(id(f), 0.0), i) for i, f in enumerate(valued)]
    valued, replica_notes = _propose_replicas(valued, forecaster, judge.best, request)  # same positions
    ordered = [finding for _, finding in sorted(zip(order, valued, strict=True), key=lambda pair: pair[0])]
    return Valuation(ordered, [*rejected, *judge.rejected], [*notes, *replica_notes])


@dataclass(frozen=True, slots=True)
class _Commands:
    """The `servops predict` command behind each figure, when the ramp is a file the user can name."""

    request: ForecastRequest
    forecaster: Forecaster

    def for_change(self, forecast: ChangeForecast | None) -> str | None:
        return _command_for(forecast, self.request, self.forecaster)

    def for_layout(self, tp: int, pp: int) -> str:
        if not self.request.ramp_path:
            return ""
        layout = [f"{TENSOR_PARALLEL_FLAG} {tp}"] + (
            [f"{PIPELINE_PARALLEL_FLAG} {pp}"] if pp != self.forecaster.stages else []
        )
        return reproduce_command(self.request, self.forecaster, layout)


class _Judge:
    """Each modelled change of a finding at the value the model predicts best, or rejected; what it judged.

    `best`: the flag → its winning forecast; `gains`: a judged finding (by id) → the largest predicted gain of
    its changes (what orders findings within a severity); `rejected`: the changes no value of whose flag
    helps."""

    def __init__(
        self,
        ranked: list[ChangeForecast],
        forecaster: Forecaster,
        command: Callable[[ChangeForecast | None], str | None],
    ) -> None:
        self.ranked, self.forecaster, self.command = ranked, forecaster, command
        self.best = {r.changes[0]["flag"]: r for r in ranked if r.helps}
        self.gains: dict[str, float] = {}
        self.rejected: list[RejectedChange] = []

    def finding(self, finding: Finding) -> Finding:
        """A copy of the finding with its changes and alternatives judged. Alternatives are applied instead of
        the changes, so they meet the same test (a preempting CPU server's larger KV space in bytes is one,
        advisor/perf/pool.py), but only the changes' gains order the finding."""
        alternatives = [kept for kept, _ in (self.change(finding, a) for a in finding.alternatives) if kept]
        judged = [self.change(finding, c) for c in finding.changes]
        valued = finding.model_copy(
            update={"changes": [kept for kept, _ in judged if kept], "alternatives": alternatives}
        )
        gains = [gain for _, gain in judged if gain is not None]
        if gains:
            self.gains[id(valued)] = max(gains)
        return valued

    def change(self, finding: Finding, change: ConfigChange) -> tuple[ConfigChange | None, float | None]:
        """The change with the model's value and effect, or None after listing it (and the model's closest
        value, when it came near) as rejected; a flag the model does not cover as it is. With it, the
        predicted gain of the value chosen (None when the model did not choose one)."""
        if change.flag not in MODELLED_FLAGS or _gives_up_kv_room(change):
            return change, None
        winner = self.best.get(change.flag)
        if winner is None:
            self.rejected.extend(rejections(finding, change, self.ranked, self.command))
            return None, None
        chosen = winner.changes[0]
        updated = change.model_copy(
            update={
                "proposed": str(chosen["proposed"]),
                "reason": chosen["reason"],
                "predicted_effect": _effect(winner, self.forecaster),
            }
        )
        if _below_current(updated):
            updated = _say_why_lower(updated, winner)
        effect = updated.predicted_effect.model_copy(update={"command": self.command(winner) or ""})
        return updated.model_copy(update={"predicted_effect": effect}), _gain(winner)


def _choose_layouts(
    findings: list[Finding],
    forecaster: Forecaster,
    in_flight: float | None,
    rejected: list[RejectedChange],
    loose: bool,
    command: Callable[[int, int], str],
    available: int | None = None,
) -> tuple[list[Finding], list[str]]:
    """Re-value every remedy that regroups the GPUs (TP over PCIe traded for replicas or for pipeline
    stages, or replicas at their bandwidth floor merged into wider ones) to the layout of the same GPUs
    the model predicts to carry most (advisor/triage/layouts.py): the findings, each such one a copy with
    its layout changes, and notes; the layouts turned down go to `rejected`."""
    choice = _LayoutChoice(forecaster, in_flight, loose, command, available)
    chosen = [choice.finding(finding) for finding in findings]
    rejected.extend(choice.rejected)
    return chosen, choice.notes


class _LayoutChoice:
    """One finding's layout remedy weighed against every layout of the same GPUs. The layouts are priced
    once, at the first such remedy: OP-3.1, AP-7 and OP-5.13 may each propose the same one."""

    def __init__(
        self,
        forecaster: Forecaster,
        in_flight: float | None,
        loose: bool,
        command: Callable[[int, int], str],
        available: int | None,
    ) -> None:
        self.forecaster, self.in_flight, self.loose, self.command = forecaster, in_flight, loose, command
        self.current_tp, self.stages = forecaster.current_tensor_parallel(), forecaster.stages
        self.used = self.current_tp * self.stages * forecaster.replicas
        self.gpus = max(self.used, available or 0)  # with idle GPUs (--gpus), every layout of all of them is weighed
        self.priced: tuple[list[LayoutForecast], dict[tuple[int, int], str]] | None = None
        self.notes: list[str] = []
        self.rejected: list[RejectedChange] = []

    def finding(self, finding: Finding) -> Finding:
        """The finding, or a copy whose layout changes are the chosen layout's (none when the current one
        carries most)."""
        forecaster = self.forecaster
        widen = self.gpus > self.used and finding.rule in WIDER_RULES
        tp_change = regrouping_change(finding.changes, self.current_tp, widen)
        if tp_change is None:
            return finding
        pp_change = next((c for c in finding.changes if c.flag == PIPELINE_PARALLEL_FLAG), None)
        rule_key = (int(tp_change.proposed), _stages(pp_change, self.stages))
        if forecaster.deployment is None:
            self.notes.append(
                f"{finding.rule}: the layout is the rule's ({layout_text(*rule_key)}); pass --model and --gpu to "
                "have the performance model weigh every layout of the GPUs"
            )
            return finding
        self.priced = self.priced or price_layouts(forecaster, self.gpus, self.in_flight)
        layouts, unpriced = self.priced
        current = self._current(layouts)
        rule_layout = next((layout for layout in layouts if layout.key == rule_key), None)
        if self._rule_stands(finding.rule, current, rule_layout, rule_key, unpriced):
            return finding
        assert current is not None  # _rule_stands holds whenever the current layout is unpriced
        chosen = rule_layout if self.loose else best_layout(layouts, current)
        others = [layout.describe() for layout in layouts if layout is not chosen and layout is not current]
        if rule_layout is None:  # e.g. predicted not to start: the model chooses among the layouts it can price
            others.append(f"the rule's {layout_text(*rule_key)}: not priced: {unpriced.get(rule_key, '')}")
        kept = [c for c in finding.changes if c.flag not in (*LAYOUT_FLAGS, REPLICAS_FLAG)]
        if chosen is current:
            command = (self.command(*rule_key) or None) if rule_layout is not None else None
            self._reject_regrouping(finding.rule, (tp_change, pp_change), current, others, command)
            return finding.model_copy(update={"changes": kept})
        how = ANNOTATED if self.loose else CHOSEN
        changes = layout_changes(chosen, current, tp_change, self.command(*chosen.key), how, rule_pp=pp_change)
        if others:
            lead = changes[0].predicted_effect
            weighed = lead.model_copy(update={"text": f"{lead.text}; weighed: {'; '.join(others)}"})
            changes[0] = changes[0].model_copy(update={"predicted_effect": weighed})
        return finding.model_copy(update={"changes": [*changes, *kept]})

    def _rule_stands(
        self,
        rule: str,
        current: LayoutForecast | None,
        rule_layout: LayoutForecast | None,
        rule_key: tuple[int, int],
        unpriced: dict[tuple[int, int], str],
    ) -> bool:
        """Whether the rule's layout stands unpriced (noted with why): the current layout cannot be priced,
        or the rule's cannot and either the fit is loose or no layout can be (a GPU without a catalog
        bandwidth). Otherwise an unpriced rule layout cannot start or vLLM refuses it, and the model
        chooses among the others."""
        pricing = bool(self.forecaster.deployment and self.forecaster.deployment.gpu.memory_bandwidth_tbps)
        if current is not None and not (rule_layout is None and (self.loose or not pricing)):
            return False
        here = (self.current_tp, self.stages)
        why = (
            unpriced.get(here, f"the current layout ({layout_text(*here)}) is not priced")
            if current is None
            else unpriced.get(rule_key, "")
        )
        self.notes.append(f"{rule}: the rule's layout stands, unpriced: {why}")
        return True

    def _reject_regrouping(
        self,
        rule: str,
        proposed: tuple[ConfigChange, ConfigChange | None],
        current: LayoutForecast,
        others: list[str],
        command: str | None,
    ) -> None:
        """The rule's TP and PP changes turned down: the model predicts the current layout carries most."""
        reason = f"the performance model predicts the current layout carries most: {current.describe()}"
        self.rejected += [
            RejectedChange(rule=rule, change=change, reason=f"{reason}; weighed: {'; '.join(others)}", command=command)
            for change in proposed
            if change is not None
        ]

    def _current(self, layouts: list[LayoutForecast]) -> LayoutForecast | None:
        """The current layout among the priced ones; beside idle GPUs, the server as it runs on its own."""
        current = next((layout for layout in layouts if layout.key == (self.current_tp, self.stages)), None)
        if current is not None and self.gpus > self.used:
            forecaster = self.forecaster
            current = forecast_layout(
                forecaster, self.current_tp, self.stages, self.used, self.in_flight, forecaster.replicas
            )
        return current


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
) -> tuple[list[Finding], list[str]]:
    """The findings with the most severe one whose remedy is more replicas given the model's replica count,
    as a copy in its place; notes."""
    in_flight = request.in_flight
    targets = [f for f in findings if f.rule in REPLICA_RULES]
    if not in_flight or not targets or forecaster.ramp.plan.mode != "concurrency":
        return findings, []
    target = min(targets, key=_severity_rank)
    if any(c.flag == REPLICAS_FLAG or c.flag in LAYOUT_FLAGS for c in target.changes):
        return findings, []  # the layout choice sized this finding's fleet (or the rule's layout stands)
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
            return findings, [
                f"replicas: no load step of the ramp is predicted to meet the SLOs, so the replica count for "
                f"{in_flight:g} requests in flight is unknown; ramp lower loads to size it"
            ]
        return findings, []
    command = reproduce_command(request, forecaster, setting) if request.ramp_path else ""
    replicas = replicas_change(
        sizing, forecaster.replicas, command, setting, servers=replicas_are_servers(forecaster.engine)
    )
    sized = target.model_copy(update={"changes": [*target.changes, replicas]})
    return [sized if finding is target else finding for finding in findings], []


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
) -> list[Finding]:
    """A loose fit: copies of the findings in which each modelled change and alternative keeps the rule's
    value and gets the model's figures for that value, with the command that gives them again."""
    predicted = {(r.changes[0]["flag"], str(r.changes[0]["proposed"])): r for r in ranked if r.prediction}

    def annotated(change: ConfigChange) -> ConfigChange:
        match = predicted.get((change.flag, change.proposed))
        if change.flag not in MODELLED_FLAGS or match is None:
            return change
        effect = _effect(match, forecaster).model_copy(update={"command": command(match) or ""})
        return change.model_copy(update={"predicted_effect": effect})

    return [
        finding.model_copy(
            update={
                "changes": [annotated(c) for c in finding.changes],
                "alternatives": [annotated(c) for c in finding.alternatives],
            }
        )
        for finding in findings
    ]


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
