"""A step cost from first principles, for when nothing has been measured (offline triage).

Roofline reasoning (Williams et al., "Roofline", CACM 2009; the same decomposition BLIS and
AIConfigurator start from): a decode iteration reads every weight once, so its fixed part is
at least weight bytes / memory bandwidth; each decoded sequence adds 2·params FLOPs of
compute; each prompt token 2·params FLOPs at the prefill efficiency a GPU reaches on large
matmuls; each context token read adds its KV bytes / bandwidth. Bandwidth and bf16 FLOPs come
from the GPU catalog (vendor data sheets), sizes from the model catalog and memory math.

No per-prompt-chunk cost (`StepCost.prefill_seq_s` = PREFILL_CHUNK_S = 0): on a GPU a chunk's
fixed part (its attention metadata, one logits row) is small next to the step's weight read,
which `base` already holds, and the roofline has nothing to size it from; a calibration fits it
where a ramp shows it (on the bundled engine's CPU path it is about a tenth of a second).

Tensor parallelism adds its all-reduces (rules/catalog/floors.py, the decode floor's arithmetic):
two per layer per step, each a fixed ring latency (in `base`) and a transfer per row of hidden
state (in the per-sequence and per-prompt-token terms).

The stated uncertainty is wide (±50 %): kernels, launch overheads and attention efficiency
vary by a factor of two between engines and versions; a ramp replaces this with a fit.

The bundled engine is the exception that a roofline cannot see: it runs every decoder layer as a
handful of PyTorch calls from Python, with no CUDA graph or compiled step, so on a GPU its step
is bound by the host issuing kernels, not by memory. On an H100 its decode step took 22-26 ms at
every batch from 1 to 62, for a 30-layer 135M shape and a 32-layer 8B shape alike, where the
weights take 0.1 and 4.5 ms to read (BENCHMARKS.md, "On a GPU"). Its prior base is therefore at
least the layers times BUNDLED_LAYER_STEP_S.
"""

from __future__ import annotations

from advisor.catalog.gpus import GpuSpec
from advisor.catalog.models import ModelSpec, active_params
from advisor.memory.terms import GIB, kv_bytes_per_token_per_gpu, weights_gib_per_gpu
from advisor.perf.cost import StepCost
from rules.catalog.floors import (
    ALLREDUCES_PER_LAYER,
    allreduce_latency_s,
    allreduce_token_s,
    stage_send_latency_s,
    stage_send_token_s,
)

# Per-iteration work outside the matmuls (scheduling, sampling, kernel launches): a few ms in
# vLLM V1 without CUDA graphs, less with them; an assumption, inside the stated error.
FIXED_STEP_S = 0.003
PREFILL_MFU = 0.5  # share of dense bf16 peak a large prefill matmul reaches (assumption)
DECODE_SEQ_OVERHEAD_S = 5e-5  # per sequence: sampling, detokenising, bookkeeping (assumption)
PREFILL_CHUNK_S = 0.0  # per prompt chunk: none assumed (module docstring)
PRIOR_RELATIVE_ERROR = 0.5
# The bundled engine's host-bound step per decoder layer: the SmolLM2-135M shape's one-stream ITL
# p50 on an H100 (22 ms over 30 layers); the 8B shape's 23-27 ms over 32 layers checks it out of
# sample (24 ms). One GPU and its host measured it; another host may differ by a third.
BUNDLED_LAYER_STEP_S = 0.00075


def roofline_cost(
    model: ModelSpec,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    dtype_bytes: float = 2.0,
    kv_dtype_bytes: float = 2.0,
    quantization: str | None = None,
    engine: str | None = None,
    pipeline_parallel: int = 1,
) -> StepCost | None:
    """The prior cost of `model` on `tensor_parallel` × `pipeline_parallel` × `gpu`; None when the catalog
    lacks its bandwidth or FLOPs.

    Stages are one batch passing through them in turn (advisor/perf/parallel.py): each stage's weights
    and KV are read in sequence and each of the stages - 1 boundaries adds a send.
    `engine` "bundled": the step is at least the engine's per-layer host cost (module docstring)."""
    if not gpu.memory_bandwidth_tbps or not gpu.bf16_tflops:
        return None
    bandwidth = gpu.memory_bandwidth_tbps * 1e12
    flops = gpu.bf16_tflops * 1e12
    tp, pp = tensor_parallel, pipeline_parallel
    weights = weights_gib_per_gpu(model, dtype_bytes, quantization, tp, pp) * GIB * pp
    active = active_params(model) / tp
    layers = ALLREDUCES_PER_LAYER * model.num_hidden_layers
    link = gpu.interconnect_gbps_per_direction
    link_fixed = layers * allreduce_latency_s(tp, gpu.interconnect) + (pp - 1) * stage_send_latency_s(gpu.interconnect)
    allreduce_row = layers * allreduce_token_s(tp, model.hidden_size, link) + (pp - 1) * stage_send_token_s(
        model.hidden_size, link
    )
    base = FIXED_STEP_S + weights / bandwidth + link_fixed
    if engine == "bundled":
        base = max(base, model.num_hidden_layers * BUNDLED_LAYER_STEP_S)
    return StepCost(
        base_s=base,
        prefill_token_s=2 * active / (flops * PREFILL_MFU) + allreduce_row,
        decode_seq_s=2 * active / flops + DECODE_SEQ_OVERHEAD_S + allreduce_row,
        prefill_seq_s=PREFILL_CHUNK_S,
        context_token_s=kv_bytes_per_token_per_gpu(model, kv_dtype_bytes, tp, pp) * pp / bandwidth,
        overhead_s=0.0,
        relative_error=PRIOR_RELATIVE_ERROR,
        source=f"roofline prior: {model.name} on {tp * pp} x {gpu.name}{f' ({pp} stages)' if pp > 1 else ''} "
        f"({gpu.memory_bandwidth_tbps:g} TB/s, {gpu.bf16_tflops:g} bf16 TFLOPS)"
        + (f", the bundled engine's {BUNDLED_LAYER_STEP_S * 1e3:g} ms per layer" if engine == "bundled" else "")
        + "; no measurement",
    )
