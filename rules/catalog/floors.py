"""Physical floors: the fastest this model can run a step on this hardware.

Why: a fixed threshold ("ITL p99 > 0.1 s") says nothing about a server decoding at 40 ms when
the hardware allows 5 ms, and raises alarms about a 32k-token prompt whose prefill simply takes
seconds. A floor turns a measurement into a multiple ("ITL p50 0.040 s = 8.3x the bandwidth
floor"): far above the floor there is a cause to find; at the floor only hardware, quantization
or a different parallel layout helps.

The three floors (formulas and catalog figures in docs/triage.md, "Physical floors"):

- decode step, memory bandwidth: every decode step reads each weight once and every running
  sequence's KV cache once: (weight bytes + batch x context x KV bytes per token) per GPU over
  that GPU's memory bandwidth (roofline, Williams et al., CACM 2009);
- all-reduce, interconnect: tensor parallelism all-reduces the hidden state twice per layer
  (after attention and after the MLP, Megatron-LM, Shoeybi et al. 2019); each costs NCCL's ring
  latency (base + 2(TP-1) hops, NCCL src/graph/tuning.cc, LL protocol) plus
  2(TP-1)/TP x bytes over the per-direction link bandwidth;
- prefill, compute: 2 x active parameters FLOPs per prompt token over the GPUs' dense bf16 peak.

Every figure is a lower bound: peak bandwidth and FLOPs, no kernel or launch overhead. Floors
exist only when the model and the hardware are known (catalog, --model/--gpu, the log).
"""

from __future__ import annotations

from pydantic import BaseModel

from rules import signals
from rules.catalog.common import NVLINK_DOMAIN_GPUS, data_parallel_size, tensor_parallel_size, tp_divides_heads
from rules.facts import Facts, ModelFacts
from rules.model import Evidence

ALLREDUCES_PER_LAYER = 2
# NCCL ring all-reduce, LL protocol (src/graph/tuning.cc): base latency and per-hop latency, µs.
NCCL_RING_BASE_US = 3.6
NCCL_RING_HOP_US = {"nvlink": 0.47, "xgmi": 0.47, "pcie": 1.0}
ACTIVATION_BYTES = 2.0  # bf16/fp16 hidden state on the wire
# Pipeline parallelism sends each stage's output to the next: for Llama-family models vLLM passes the hidden
# state and the residual (IntermediateTensors, vllm/model_executor/models/llama.py), two rows per token.
STAGE_SEND_TENSORS = 2
# Bytes per weight under a quantization; otherwise the checkpoint's dtype.
QUANTIZED_WEIGHT_BYTES = {
    "fp8": 1.0,
    "fbgemm_fp8": 1.0,
    "compressed-tensors": 1.0,
    "awq": 0.5,
    "awq_marlin": 0.5,
    "gptq": 0.5,
    "gptq_marlin": 0.5,
    "bitsandbytes": 0.5,
    "gguf": 0.5,
}
# A measurement this many times its floor has a cause worth naming, SLO or not.
FAR_ABOVE = 3.0
# At or below this multiple a latency is the physics of the work asked for.
AT_FLOOR = 1.5
# A wider replica is worth proposing when its floor is at most this share of the current one: both are
# lower bounds, so a smaller difference could vanish in the kernels' real efficiency.
WIDER_FLOOR_SHARE = 0.75
# Links over which tensor parallelism's all-reduces run near NCCL's figures; over PCIe they go through
# host memory without P2P and OP-3.1 argues the other way.
FAST_LINKS = ("nvlink", "xgmi")
PROMPT_TOKENS = "vllm:request_prompt_tokens"
GENERATION_TOKENS = "vllm:request_generation_tokens"


class DecodeFloor(BaseModel):
    """The bandwidth floor of one decode step at the measured batch and context, per GPU."""

    batch: float
    context_tokens: float
    weight_bytes: float
    kv_bytes: float
    bandwidth_bytes_per_s: float
    allreduce_s: float
    tensor_parallel: int
    layers: int
    interconnect: str | None
    context_source: str

    @property
    def memory_s(self) -> float:
        return (self.weight_bytes + self.kv_bytes) / self.bandwidth_bytes_per_s

    @property
    def step_s(self) -> float:
        return self.memory_s + self.allreduce_s

    @property
    def allreduces(self) -> int:
        return ALLREDUCES_PER_LAYER * self.layers if self.tensor_parallel > 1 else 0

    def describe(self) -> str:
        kv = (
            f"{self.kv_bytes / 1e9:.2f} GB KV for {self.batch:g} x {self.context_tokens:.0f} tokens"
            if self.context_tokens
            else "no KV: context length unknown, so this floor is the weights' alone"
        )
        text = (
            f"({self.weight_bytes / 1e9:.2f} GB weights + {kv}) / {_per_second(self.bandwidth_bytes_per_s, 'B/s')} "
            f"= {self.memory_s * 1e3:.2f} ms"
        )
        if self.tensor_parallel > 1:
            text += (
                f" + all-reduce {self.allreduce_s * 1e3:.2f} ms (TP {self.tensor_parallel} over "
                f"{self.interconnect or 'an unknown link'})"
            )
        return text


class PrefillFloor(BaseModel):
    """The compute floor of prefilling one median prompt across the tensor-parallel GPUs."""

    prompt_tokens: float
    active_params: float
    flops_per_s: float
    prompt_source: str

    @property
    def step_s(self) -> float:
        return 2 * self.active_params * self.prompt_tokens / self.flops_per_s

    def describe(self) -> str:
        return (
            f"2 x {self.active_params / 1e9:.2f} B params x {self.prompt_tokens:.0f} tokens / "
            f"{_per_second(self.flops_per_s, 'FLOP/s')} = {self.step_s * 1e3:.1f} ms"
        )


def decode_floor(facts: Facts, tp: int | None = None, batch: float | None = None) -> DecodeFloor | None:
    """The decode step's floor, or None when the model or the GPU's bandwidth is unknown.

    The floor is one replica's step: with --data-parallel-size N each of the N engines runs its share of
    the requests running (vLLM's gauges sum the engines). `tp` and `batch` price another layout of the
    same GPUs (a replica of `tp` GPUs running `batch` sequences); by default the server's own
    tensor-parallel size and its running share."""
    hardware, model = facts.hardware, facts.model
    if hardware is None or not hardware.memory_bandwidth_gbps or model is None:
        return None
    tp = tp or tensor_parallel_size(facts)
    weights = _weight_bytes_per_gpu(facts, tp)
    kv_per_token = _kv_bytes_per_token_per_gpu(facts, tp)
    if weights is None or kv_per_token is None:
        return None
    if batch is None:
        run = signals.running(facts)
        batch = run.value / data_parallel_size(facts) if run else 1.0
    batch = max(1.0, batch)
    context, source = _mean_context(facts)
    return DecodeFloor(
        batch=batch,
        context_tokens=context,
        weight_bytes=weights,
        kv_bytes=batch * context * kv_per_token,
        bandwidth_bytes_per_s=hardware.memory_bandwidth_gbps * 1e9,
        allreduce_s=_allreduce_s(facts, tp, batch),
        tensor_parallel=tp,
        layers=model.num_layers or 0,
        interconnect=hardware.interconnect,
        context_source=source,
    )


class WiderReplica(BaseModel):
    """Replicas of twice the tensor-parallel size and their decode floor: the same GPUs regrouped, or, when
    --gpus counts idle GPUs enough to double every replica, the same replicas widened onto them."""

    tensor_parallel: int
    replicas: int
    floor: DecodeFloor
    current: DecodeFloor
    idle_gpus: int = 0  # the idle GPUs the widened replicas take (0: the same GPUs regrouped)

    @property
    def share(self) -> float:
        return self.floor.step_s / self.current.step_s

    def describe(self) -> str:
        if self.idle_gpus:
            return (
                f"a TP-{self.tensor_parallel} replica running the same {self.floor.batch:g} sequences (on "
                f"{self.idle_gpus} GPUs that --gpus counts and the server leaves idle) has a floor of "
                f"{self.floor.step_s * 1e3:.2f} ms, {self.share:.0%} of TP {self.current.tensor_parallel}'s "
                f"{self.current.step_s * 1e3:.2f} ms"
            )
        return (
            f"a TP-{self.tensor_parallel} replica running {self.floor.batch:g} sequences (its share of the "
            f"{self.current.batch * self.replicas * 2:g} running) has a floor of {self.floor.step_s * 1e3:.2f} ms, "
            f"{self.share:.0%} of TP {self.current.tensor_parallel}'s {self.current.step_s * 1e3:.2f} ms"
        )


def wider_replica(facts: Facts, current: DecodeFloor) -> WiderReplica | None:
    """The decode floor when the server's GPUs are regrouped into half as many replicas of twice the
    tensor-parallel size, each carrying twice the sequences (an even number of --data-parallel-size
    replicas); else, when --gpus counts idle GPUs enough to double every replica, the same replicas
    widened onto them, each carrying the sequences it has. None unless such a layout is possible (no
    pipeline, heads that split, a fast link, within one NVLink board) and its floor is at most
    WIDER_FLOOR_SHARE of today's.

    Why: at its bandwidth floor a decode step is the weights plus the batch's KV read per GPU. Two
    GPUs per replica read half the weights each per step for twice the batch, so a weight-bound
    step nearly halves while a KV-bound one does not move: the floor says which, before any ramp."""
    model, hardware = facts.model, facts.hardware
    have = data_parallel_size(facts)
    tp = 2 * current.tensor_parallel
    pipelined = facts.config is not None and (facts.config.pipeline_parallel_size or 1) > 1
    if pipelined or model is None or hardware is None:
        return None
    idle = (hardware.gpu_count or 0) - current.tensor_parallel * have
    regroup = have >= 2 and have % 2 == 0
    if not regroup and idle < current.tensor_parallel * have:
        return None
    if hardware.interconnect not in FAST_LINKS or tp > NVLINK_DOMAIN_GPUS:
        return None
    if not (model.num_attention_heads and model.num_kv_heads) or not tp_divides_heads(
        model.num_attention_heads, model.num_kv_heads, tp, mla=bool(model.is_mla)
    ):
        return None
    floor = decode_floor(facts, tp=tp, batch=2 * current.batch if regroup else current.batch)
    if floor is None or floor.step_s > WIDER_FLOOR_SHARE * current.step_s:
        return None
    if regroup:
        return WiderReplica(tensor_parallel=tp, replicas=have // 2, floor=floor, current=current)
    widened = current.tensor_parallel * have
    return WiderReplica(tensor_parallel=tp, replicas=have, floor=floor, current=current, idle_gpus=widened)


def prefill_floor(facts: Facts, prompt_tokens: float | None = None, source: str = "") -> PrefillFloor | None:
    """The compute floor of one prompt (`prompt_tokens`, else the mean prompt), or None when FLOPs,
    model or prompt length are unknown."""
    hardware, model = facts.hardware, facts.model
    if hardware is None or not hardware.bf16_tflops or model is None or not model.params_billion:
        return None
    prompt = prompt_tokens
    if prompt is None:
        prompt, source = _mean_prompt(facts)
    if prompt is None:
        return None
    active = (model.active_params_billion or model.params_billion) * 1e9
    return PrefillFloor(
        prompt_tokens=prompt,
        active_params=active,
        flops_per_s=hardware.bf16_tflops * 1e12 * tensor_parallel_size(facts),
        prompt_source=source,
    )


def evidence(name: str, floor_s: float, derivation: str) -> Evidence:
    """A floor as a finding's evidence, its derivation (the formula with its figures) as description."""
    return Evidence(source="advisor", name=name, value=round(floor_s, 6), unit="s", description=derivation)


def multiple(measured: float, floor: float) -> float:
    return measured / floor if floor > 0 else float("inf")


def ttft_floor_s(facts: Facts, prompt_tokens: float | None = None) -> float | None:
    """Prefill of the prompt plus the step that samples its first token; None when unknown."""
    prefill = prefill_floor(facts, prompt_tokens)
    if prefill is None:
        return None
    decode = decode_floor(facts)
    return prefill.step_s + (decode.step_s if decode else 0.0)


def describe_multiple(measured: float, floor_s: float | None, what: str) -> str:
    """ " = 2.3x the bandwidth floor" for a title; "" when there is no floor."""
    if not floor_s:
        return ""
    return f" = {multiple(measured, floor_s):.1f}x the {what} floor"


def _per_second(value: float, unit: str) -> str:
    """989 TFLOP/s for a GPU, 96 GFLOP/s or 18.5 GB/s for a CPU core: the unit that keeps 3 digits."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _weight_bytes_per_gpu(facts: Facts, tp: int) -> float | None:
    """Measured per GPU at the server's own size (the log's or the memory model's figure), moved to `tp`."""
    if facts.memory is not None and facts.memory.weights_gib:
        return facts.memory.weights_gib * 2**30 * tensor_parallel_size(facts) / tp
    model = facts.model
    if model is None or not model.params_billion:
        return None
    quantization = (facts.config.quantization if facts.config else None) or model.prequantized
    per_weight = QUANTIZED_WEIGHT_BYTES.get(quantization or "", model.dtype_bytes or 2.0)
    return model.params_billion * 1e9 * per_weight / tp


def _kv_bytes_per_token_per_gpu(facts: Facts, tp: int) -> float | None:
    model = facts.model
    if facts.memory is not None and facts.memory.kv_bytes_per_token:
        current = tensor_parallel_size(facts)
        return facts.memory.kv_bytes_per_token * _kv_split(model, current) / _kv_split(model, tp)
    if model is None or not (model.num_layers and model.num_kv_heads and model.head_dim):
        return None
    kv_dtype = facts.config.kv_cache_dtype if facts.config else None
    per_value = 1.0 if kv_dtype and kv_dtype.startswith("fp8") else (model.dtype_bytes or 2.0)
    return 2 * model.num_layers * model.num_kv_heads / _kv_split(model, tp) * model.head_dim * per_value


def _kv_split(model: ModelFacts | None, tp: int) -> float:
    """Over how many GPUs a token's KV heads are split: TP, up to the KV heads (beyond, they are replicated)."""
    if model is None or not model.num_kv_heads:
        return float(tp)
    return float(min(tp, model.num_kv_heads))


def _allreduce_s(facts: Facts, tp: int, batch: float) -> float:
    if facts.model is None or not (facts.model.num_layers and facts.model.hidden_size):
        return 0.0
    hardware = facts.hardware
    return allreduce_s(
        tp,
        facts.model.num_layers,
        facts.model.hidden_size,
        batch,
        (hardware.interconnect if hardware else None) or "pcie",
        hardware.interconnect_gbps if hardware else None,
    )


def allreduce_latency_s(tp: int, link: str) -> float:
    """One ring all-reduce's fixed time at NCCL's best (LL protocol): base plus 2(TP-1) hops."""
    hop = NCCL_RING_HOP_US.get(link, NCCL_RING_HOP_US["pcie"])
    return (NCCL_RING_BASE_US + 2 * (tp - 1) * hop) * 1e-6 if tp > 1 else 0.0


def allreduce_token_s(tp: int, hidden_size: int, link_gbps: float | None) -> float:
    """One ring all-reduce's transfer time per token of hidden state: 2(TP-1)/TP of its bytes over the
    per-direction link bandwidth (0 when the bandwidth is unknown: the floor stays a lower bound)."""
    if tp <= 1 or not link_gbps:
        return 0.0
    return 2 * (tp - 1) / tp * hidden_size * ACTIVATION_BYTES / (link_gbps * 1e9)


def stage_send_latency_s(link: str) -> float:
    """One stage-to-stage send's fixed time: NCCL's base latency plus the one hop it crosses."""
    return (NCCL_RING_BASE_US + NCCL_RING_HOP_US.get(link, NCCL_RING_HOP_US["pcie"])) * 1e-6


def stage_send_token_s(hidden_size: int, link_gbps: float | None) -> float:
    """One stage-to-stage send's transfer per token: STAGE_SEND_TENSORS rows of hidden state over the
    per-direction link bandwidth (0 when it is unknown: a lower bound, as the all-reduce's)."""
    if not link_gbps:
        return 0.0
    return STAGE_SEND_TENSORS * hidden_size * ACTIVATION_BYTES / (link_gbps * 1e9)


def allreduce_s(tp: int, layers: int, hidden_size: int, tokens: float, link: str, link_gbps: float | None) -> float:
    """A step's all-reduces for `tokens` rows of hidden state: ALLREDUCES_PER_LAYER per layer, each its
    latency plus its transfer. One source for the decode floor and the performance model's
    tensor-parallel cost (advisor/perf/parallel.py)."""
    if tp <= 1:
        return 0.0
    per = allreduce_latency_s(tp, link) + tokens * allreduce_token_s(tp, hidden_size, link_gbps)
    return ALLREDUCES_PER_LAYER * layers * per


def _mean_prompt(facts: Facts) -> tuple[float | None, str]:
    measured = signals.histogram_mean(facts, PROMPT_TOKENS)
    if measured is not None:
        return measured, "vllm:request_prompt_tokens (window mean)"
    if facts.workload and facts.workload.p50_input_tokens:
        return facts.workload.p50_input_tokens, "workload p50 input tokens"
    return None, ""


def _mean_context(facts: Facts) -> tuple[float, str]:
    """Tokens a running sequence holds on average: its prompt plus half its output."""
    prompt, prompt_source = _mean_prompt(facts)
    output = signals.histogram_mean(facts, GENERATION_TOKENS)
    output_source = "vllm:request_generation_tokens"
    if output is None and facts.workload and facts.workload.p50_output_tokens:
        output, output_source = facts.workload.p50_output_tokens, "workload p50 output tokens"
    if prompt is None and output is None:
        resident = _resident_context(facts)
        if resident is not None:
            return resident
        return 0.0, "unknown (weights only)"
    return (prompt or 0.0) + (output or 0.0) / 2, " + half ".join(s for s in (prompt_source, output_source) if s)


def _resident_context(facts: Facts) -> tuple[float, str] | None:
    """Tokens each running sequence holds, read off the KV cache itself: usage x pool / running.

    Why: without request lengths the floor would count the weights alone, and a large batch over
    long contexts would read as many times its floor (the KV read can exceed the weights). The
    pool's used share is what the running sequences hold (vLLM counts a cached block nobody holds
    as free), so it is their context, rounded up to whole blocks."""
    usage, run = signals.kv_usage(facts, hottest=False), signals.running(facts)
    pool = facts.memory.kv_cache_tokens if facts.memory and facts.memory.kv_cache_tokens else None
    if pool is None and facts.config and facts.config.num_gpu_blocks and facts.config.block_size:
        pool = facts.config.num_gpu_blocks * facts.config.block_size
    engines = data_parallel_size(facts)  # the pool and the usage are one engine's; the gauge sums the running
    if usage is None or run is None or run.value < engines or not pool or usage.value <= 0:
        return None
    per_engine = " per engine" if engines > 1 else ""
    return (
        usage.value * pool * engines / run.value,
        f"vllm:kv_cache_usage_perc x {pool:,} KV tokens / running{per_engine}",
    )
