"""A tensor- or pipeline-parallel layout the server did not run, priced from the cost fitted at the one it ran.

Why not a fresh roofline: the fitted cost holds what this engine, model and GPU really spend per
step (kernel launches, sampling, Python), which the roofline cannot see and which a change of
layout does not move. Only the parts of a step that physics splits over the GPUs change, so each
fitted term is moved by what the roofline says changes in it, and nothing else:

- the step's fixed part (or each point of its curve over the decode batch) loses or gains the
  weight read (weight bytes per GPU x stages / memory bandwidth: a step passes every stage in
  turn), the all-reduces' fixed ring latencies (2 per layer, rules/catalog/floors.py) and the
  stage-to-stage sends' latencies (stages - 1 per step);
- the per-sequence decode term gains or loses the all-reduces' transfer of one row of hidden
  state (2(TP-1)/TP of its bytes over the link, per all-reduce), the sends' transfer of that row
  (hidden state and residual, per send) and the change in its matmul FLOPs per GPU
  (2 x active parameters / TP at the bf16 peak; the stages compute their layers in turn);
- the per-prompt-token term, compute-bound, scales with the FLOPs each GPU computes (1/TP), its
  link transfers moved as the decode term's;
- the per-context-token term scales with the KV bytes per token a step reads per GPU of a stage,
  summed over the stages (the KV heads split over TP, replicated when TP exceeds them);
- the per-prompt-chunk term and the time outside the engine stay: neither is split.

Pipeline stages are priced as one batch passing through them (the reading that fitted real vLLM's
two-stage ramp, docs/predict.md): stages add capacity (weights and KV spread over more GPUs) and
sends, never speed. vLLM keeps up to one batch per stage in flight, which at high load can hide
part of the per-sequence work; the figure then understates tok/s, and a note says so.

The KV pool at the new layout comes from the memory model at that launch, offset by what the
server's log measured at the launch it ran (advisor/memory/kv_change.py `figures`).

The uncertainty: the fit's own, plus the roofline prior's ±50 % on the share of a lone decode
step that the change moved. A layout whose step is mostly physics carries its error; one the
change barely touches keeps the fit's.

Why GPUs only: on vLLM's CPU backend TP ranks and stages split one machine's cores and memory
channels, which no catalog describes; the change is refused by name there.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel

from advisor.catalog.models import active_params, valid_tp
from advisor.errors import UserError
from advisor.memory.budget import LaunchConfig, estimate_memory
from advisor.memory.kv_change import Deployment, figures
from advisor.memory.terms import GIB
from advisor.perf.cost import StepCost
from advisor.perf.limits import PIPELINE_PARALLEL_FLAG as PP_FLAG
from advisor.perf.limits import TENSOR_PARALLEL_FLAG as TP_FLAG
from advisor.perf.prior import PRIOR_RELATIVE_ERROR
from rules.catalog.floors import (
    ALLREDUCES_PER_LAYER,
    allreduce_latency_s,
    allreduce_token_s,
    stage_send_latency_s,
    stage_send_token_s,
)


class ParallelTerms(BaseModel):
    """The parts of a step that depend on the layout (tensor-parallel size x pipeline stages), at one layout."""

    tensor_parallel: int
    pipeline_parallel: int = 1
    weights_s: float  # per step: the weight bytes a step reads on each GPU of every stage in turn, over bandwidth
    allreduce_fixed_s: float  # per step: the all-reduces' ring latencies
    allreduce_row_s: float  # per row of hidden state (a decoded sequence or a prompt token)
    send_fixed_s: float = 0.0  # per step: the stage-to-stage sends' latencies
    send_row_s: float = 0.0  # per row of hidden state: the sends' transfer
    decode_compute_s: float  # per decoded sequence: 2 x active params / TP FLOPs at the GPU's bf16 peak
    kv_bytes_per_token: int  # per step and context token: one GPU's share of a stage's KV, over the stages
    kv_cache_tokens: int  # the pool at this layout (memory model, offset by the measured pool)
    starts: bool

    @property
    def link_fixed_s(self) -> float:
        """Per step on the links: the all-reduces' and the sends' latencies."""
        return self.allreduce_fixed_s + self.send_fixed_s

    @property
    def link_row_s(self) -> float:
        """Per row of hidden state on the links: the all-reduces' and the sends' transfer."""
        return self.allreduce_row_s + self.send_row_s

    def describe(self) -> str:
        return layout_text(self.tensor_parallel, self.pipeline_parallel)


def layout_text(tp: int, pp: int = 1) -> str:
    """ "TP 2" or "TP 1 x PP 4": how a layout of one replica's GPUs is named in notes and findings."""
    return f"TP {tp}" + (f" x PP {pp}" if pp > 1 else "")


def parallel_terms(deployment: Deployment, tp: int, pp: int = 1) -> ParallelTerms:
    """The layout-dependent terms of `deployment` at TP `tp` x `pp` stages; a UserError when vLLM does not
    accept the layout for the model."""
    model, gpu = deployment.model, deployment.gpu
    if not valid_tp(model, tp):
        raise UserError(
            f"{TP_FLAG} {tp}: {model.name} has {model.num_attention_heads} attention and "
            f"{model.num_key_value_heads} KV heads, which {tp} GPUs cannot split evenly; choose a divisor"
        )
    if pp > model.num_hidden_layers:
        raise UserError(
            f"{PP_FLAG} {pp}: {model.name} has {model.num_hidden_layers} layers, fewer than the stages; "
            f"choose at most {model.num_hidden_layers}"
        )
    if not gpu.memory_bandwidth_tbps:
        raise UserError(f"{TP_FLAG}: the catalog has no memory bandwidth for {gpu.name}; name a catalog GPU with --gpu")
    launch = LaunchConfig.model_validate(
        {**deployment.launch.model_dump(), "tensor_parallel_size": tp, "pipeline_parallel_size": pp}
    )
    breakdown = estimate_memory(model, gpu, launch)
    layers = ALLREDUCES_PER_LAYER * model.num_hidden_layers
    pool = figures(deployment, launch)
    return ParallelTerms(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        weights_s=breakdown.weights_gib * GIB * pp / (gpu.memory_bandwidth_tbps * 1e12),
        allreduce_fixed_s=layers * allreduce_latency_s(tp, gpu.interconnect),
        allreduce_row_s=layers * allreduce_token_s(tp, model.hidden_size, gpu.interconnect_gbps_per_direction),
        send_fixed_s=(pp - 1) * stage_send_latency_s(gpu.interconnect),
        send_row_s=(pp - 1) * stage_send_token_s(model.hidden_size, gpu.interconnect_gbps_per_direction),
        decode_compute_s=2 * active_params(model) / tp / (gpu.bf16_tflops * 1e12) if gpu.bf16_tflops else 0.0,
        kv_bytes_per_token=breakdown.kv_bytes_per_token * pp,
        kv_cache_tokens=pool.kv_cache_tokens,
        starts=pool.fits,
    )


def terms_for_change(engine: str, deployment: Deployment | None, tp: int, pp: int = 1) -> ParallelTerms:
    """The terms at the layout a change asks for, after the checks that refuse it by name: vLLM's CPU backend
    (module docstring), no model and GPU to price it from, a layout vLLM refuses, or one the memory model
    predicts not to start (no room for one request's KV). One place for `servops predict`'s check before
    its calibration and for the Forecaster's."""
    asked = f"{TP_FLAG} {tp}" + (f" {PP_FLAG} {pp}" if pp > 1 else "")
    if engine == "vllm-cpu":
        raise UserError(
            f"{asked}: on vLLM's CPU backend TP ranks and pipeline stages split one machine's cores and memory "
            "channels, which the model does not price; ramp the layout instead"
        )
    if deployment is None:
        raise UserError(
            f"{asked}: pricing a parallel layout needs the model and the GPU; pass --model (a catalog "
            "name or config.json) and --gpu (a catalog GPU)"
        )
    terms = parallel_terms(deployment, tp, pp)
    if not terms.starts:
        raise UserError(
            f"{asked}: the memory model predicts {deployment.model.name} does not start on {tp * pp} x "
            f"{deployment.gpu.name} as {layout_text(tp, pp)} (no room for one request's KV at this launch); "
            "choose a larger layout"
        )
    return terms


def cost_at_layout(cost: StepCost, before: ParallelTerms, after: ParallelTerms) -> tuple[StepCost, str]:
    """`cost`, fitted at `before`'s layout, moved to `after`'s (module docstring), and the note that says how."""
    compute = before.tensor_parallel / after.tensor_parallel
    kv = after.kv_bytes_per_token / before.kv_bytes_per_token if before.kv_bytes_per_token else 1.0
    moved = cost.model_copy(update=_moved_terms(cost, before, after, compute, kv))
    lone_before = cost.step_time_of_one()
    lone_after = moved.step_time_of_one()
    share = abs(lone_after - lone_before) / lone_after if lone_after > 0 else 0.0
    error = cost.relative_error + PRIOR_RELATIVE_ERROR * share
    moved = moved.model_copy(
        update={
            "relative_error": error,
            "source": f"{cost.source}; moved from {before.describe()} to {after.describe()} by the roofline's "
            "layout terms",
        }
    )
    move = _Move(compute, kv, lone_before, lone_after, share, error, cost.relative_error)
    return moved, _layout_note(before, after, move)


def _moved_terms(
    cost: StepCost, before: ParallelTerms, after: ParallelTerms, compute: float, kv: float
) -> dict[str, Any]:
    """The fitted step's terms at `after`'s layout: the layout's own parts (weight read, all-reduce, stage
    sends) swapped for the new layout's, never below what the new layout alone costs; prompt compute split
    over the new TP; the KV read per context token scaled by the KV bytes each GPU holds per token."""
    d_fixed = (after.weights_s - before.weights_s) + (after.link_fixed_s - before.link_fixed_s)
    d_row = after.link_row_s - before.link_row_s
    d_decode = d_row + after.decode_compute_s - before.decode_compute_s
    floor_fixed = after.weights_s + after.link_fixed_s
    update: dict[str, Any] = {
        "base_s": max(cost.base_s + d_fixed, floor_fixed),
        "decode_seq_s": max(cost.decode_seq_s + d_decode, after.link_row_s),
        "prefill_token_s": max(
            (cost.prefill_token_s - before.link_row_s) * compute + after.link_row_s, after.link_row_s
        ),
        "context_token_s": cost.context_token_s * kv,
    }
    if cost.decode_knots:
        update["decode_curve_s"] = [
            max(value + d_fixed + k * d_decode, floor_fixed + k * after.link_row_s)
            for k, value in zip(cost.decode_knots, cost.decode_curve_s, strict=False)
        ]
    return update


class _Move(NamedTuple):
    """What moving the cost changed, for its note: prompt compute per GPU, KV read per token, a lone decode
    step before and after, the share of it the roofline moved, and the error that results from the fit's."""

    compute: float
    kv: float
    lone_before: float
    lone_after: float
    share: float
    error: float
    fit_error: float


def _layout_note(before: ParallelTerms, after: ParallelTerms, move: _Move) -> str:
    """How the cost moved, term by term, with the uncertainty it adds: the figures a prediction shows at a
    new layout are the roofline's there, not a measurement."""
    sends = (
        f", stage sends {before.send_fixed_s * 1e3:.3f} → {after.send_fixed_s * 1e3:.3f} ms/step and "
        f"{before.send_row_s * 1e6:.1f} → {after.send_row_s * 1e6:.1f} µs/row"
        if before.pipeline_parallel > 1 or after.pipeline_parallel > 1
        else ""
    )
    note = (
        f"{before.describe()} → {after.describe()}: weight read {before.weights_s * 1e3:.2f} → "
        f"{after.weights_s * 1e3:.2f} ms/step, all-reduce latency {before.allreduce_fixed_s * 1e3:.2f} → "
        f"{after.allreduce_fixed_s * 1e3:.2f} ms/step and transfer {before.allreduce_row_s * 1e6:.1f} → "
        f"{after.allreduce_row_s * 1e6:.1f} µs/row{sends}, prompt compute ×{move.compute:g} per GPU, KV read per "
        f"token ×{move.kv:.3g}; the fitted step's other parts kept. A lone decode step "
        f"{move.lone_before * 1e3:.2f} → {move.lone_after * 1e3:.2f} ms; ±{move.error:.0%} (the fit's "
        f"±{move.fit_error:.0%} + the roofline's ±{PRIOR_RELATIVE_ERROR:.0%} on the {move.share:.0%} it moved); "
        f"KV pool {before.kv_cache_tokens:,} → {after.kv_cache_tokens:,} tokens per replica"
    )
    if after.pipeline_parallel > 1:
        note += (
            f"; the {after.pipeline_parallel} stages are priced as one batch passing through them: vLLM keeps up "
            f"to {after.pipeline_parallel} batches in flight, which at high load can hide part of the "
            "per-sequence work, so tok/s there is a lower figure"
        )
    return note
