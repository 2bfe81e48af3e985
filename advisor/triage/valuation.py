"""Valuation: every proposed change of every finding given its value and its predicted effect, in one
declared order, into new findings.

Why one place: three estimators price a change, and what each decides feeds the next.
1. `latency` (advisor/triage/forecast.py, the performance model): which value of a batch or layout flag
   the SLOs want, whether the change helps at all (a change predicted not to help is taken out and
   listed as rejected), the latency and throughput before and after, and the findings' order by gain.
2. `tensor_parallel` (advisor/triage/tp_choice.py, the memory model): a TP increase becomes the smallest
   valid size at which one request of --max-model-len starts.
3. `memory` (advisor/memory/kv_change.py): the KV pool, concurrency and start-up before and after, for
   the value the first two settled; composed with the latency prediction, memory figures first.
No estimator edits a finding: each pass returns new findings (the latency pass copies what it values; the
TP and memory estimators return new changes and effects that this module composes), so the rules'
findings come out as they went in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from advisor.memory.kv_change import LAUNCH_FLAGS, Deployment, MeasuredPool, predict_change
from advisor.triage.result import RejectedChange
from advisor.triage.tp_choice import valued_tensor_parallel
from rules.model import ConfigChange, Finding, PredictedEffect

VALUATION_ORDER = ("latency", "tensor_parallel", "memory")


@dataclass
class Valuation:
    """The valued findings, in their new order, with what the latency pass rejected and said."""

    findings: list[Finding]
    rejected: list[RejectedChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# The performance model's pass: the findings it is given valued (new findings, in its order), with the changes
# it rejected and its notes.
LatencyPass = Callable[[list[Finding]], Valuation]


def value_findings(
    findings: list[Finding],
    latency: LatencyPass | None,
    deployment: Deployment | None,
    gpus: int | None,
    pool: MeasuredPool | None,
) -> Valuation:
    """The passes of VALUATION_ORDER over `findings`, into new findings; `latency` None when nothing predicts it."""
    latency_valued = latency(findings) if latency is not None else Valuation(findings=findings)
    valued = latency_valued.findings
    valued = [
        _with_changes(f, lambda c, siblings: valued_tensor_parallel(c, siblings, deployment, gpus)) for f in valued
    ]
    valued = [_with_changes(f, lambda c, _: _with_memory_effect(c, deployment, pool)) for f in valued]
    return Valuation(findings=valued, rejected=latency_valued.rejected, notes=latency_valued.notes)


def _with_changes(finding: Finding, value: Callable[[ConfigChange, list[ConfigChange]], ConfigChange]) -> Finding:
    """The finding with each change and alternative replaced by its valued copy (siblings: its own list)."""
    return finding.model_copy(
        update={
            "changes": [value(change, finding.changes) for change in finding.changes],
            "alternatives": [value(change, finding.alternatives) for change in finding.alternatives],
        }
    )


def _with_memory_effect(change: ConfigChange, deployment: Deployment | None, pool: MeasuredPool | None) -> ConfigChange:
    effect = compose_effects(predict_change(change, deployment, pool), change.predicted_effect, change.flag)
    return change.model_copy(update={"predicted_effect": effect})


def compose_effects(memory: PredictedEffect, latency: PredictedEffect | None, flag: str) -> PredictedEffect:
    """One effect from the memory and the latency predictions: the memory figures first, then the latency;
    a memory note without figures goes after the latency prediction; a flag without a memory model keeps
    its latency prediction as it is."""
    if latency is None:
        return memory
    if flag not in LAUNCH_FLAGS:  # nothing to add: the latency prediction says it all
        return latency
    note = f"KV memory {memory.text}" if memory.text else ""
    parts = (memory.text, latency.text) if memory.figures else (latency.text, note)
    return PredictedEffect(
        text="; ".join(t for t in parts if t),
        figures={**memory.figures, **latency.figures},
        command=latency.command,
    )
