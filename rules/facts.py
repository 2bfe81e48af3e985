"""Facts: everything the rules may know about one deployment, and nothing they must fetch.

The collectors (advisor/collect, advisor/triage) fill a `Facts`; every rule reads it and
nothing else. Every part is optional: a rule whose inputs are absent skips, so a log file
alone, a /metrics scrape alone, or a ramp JSON alone still yields the findings it supports.

Contents, and who fills them:
  snapshot / window      MetricSnapshot / MetricWindow (rules/metrics.py) from /metrics or Prometheus
  events                 LogEvent list (rules/events.py) from log files
  config                 ServerConfig: flags as `vllm serve` spells them, each with its source
  hardware / model       Hardware, ModelFacts (advisor catalogs)
  memory                 MemoryFacts: the memory advisor's figures as plain numbers
  workload               Workload: token lengths, prefix reuse, concurrency, SLOs
  loadtest               LoadTestFacts: a ramp result (issue #7 JSON keys)
  endpoint               EndpointFacts: /health, /v1/models, /version probes
  sources                what was collected, from where (for the report's "based on" line)

Stability contract: this module and the two it re-exports only ever gain optional fields.
Anything else will be announced here.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, model_validator

from rules.events import FIELDS_BY_KIND, LogEvent, LogEventKind, OomPhase
from rules.metrics import (
    METRIC_ALIASES,
    HistogramSample,
    MetricSnapshot,
    MetricWindow,
    Sample,
    WindowStats,
    canonical_name,
    histogram_quantile,
)

__all__ = [
    "ConfigSource",
    "EndpointFacts",
    "Facts",
    "FactSource",
    "FIELDS_BY_KIND",
    "Hardware",
    "HistogramSample",
    "LatencyPercentiles",
    "LoadStep",
    "LoadTestFacts",
    "LogEvent",
    "LogEventKind",
    "MemoryFacts",
    "METRIC_ALIASES",
    "MetricSnapshot",
    "MetricWindow",
    "ModelFacts",
    "OomPhase",
    "Sample",
    "ServerConfig",
    "WindowStats",
    "Workload",
    "canonical_name",
    "histogram_quantile",
]


class ConfigSource(str, Enum):
    """Where a configuration value came from; a default is weaker evidence than an explicit flag."""

    ARGS = "args"  # command line / non-default args log line
    CACHE_CONFIG_INFO = "cache_config_info"  # vllm:cache_config_info labels
    STARTUP_LOG = "startup_log"  # e.g. "Chunked prefill is enabled with max_num_batched_tokens=…"
    DEFAULT = "default"  # vLLM's documented default for that version
    USER = "user"  # given to servops by the user (e.g. --config)


class ServerConfig(BaseModel):
    """The server's launch configuration. Typed fields use vLLM's flag names with `_`;
    `sources` and `flags` key by the flag exactly as `vllm serve` spells it (`--max-model-len`)."""

    model: str | None = None
    vllm_version: str | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    block_size: int | None = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    kv_cache_dtype: str | None = None
    enforce_eager: bool | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    data_parallel_size: int | None = None
    quantization: str | None = None
    dtype: str | None = None
    speculative_config: str | None = None
    num_gpu_blocks: int | None = None  # from cache_config_info / startup log, not a flag
    api_server_count: int | None = None
    kv_cache_memory_bytes: int | None = None
    device: str | None = None  # the engine-config line's device_config: "cpu" is vLLM's CPU backend
    flags: dict[str, str] = Field(default_factory=dict)  # every flag seen, as text
    sources: dict[str, ConfigSource] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)  # the server's environment as given (VLLM_ATTENTION_BACKEND=…)

    def source_of(self, flag: str) -> ConfigSource | None:
        """Source of a flag given as `--max-model-len` or `max_model_len`."""
        return self.sources.get(flag_name(flag))

    def is_explicit(self, flag: str) -> bool:
        """True when the user set it (args or user), not a default or a derived figure."""
        return self.source_of(flag) in (ConfigSource.ARGS, ConfigSource.USER)


def flag_name(field_or_flag: str) -> str:
    """`max_model_len` or `--max-model-len` -> `--max-model-len`."""
    return "--" + field_or_flag.lstrip("-").replace("_", "-")


class Hardware(BaseModel):
    """The accelerators one replica runs on."""

    gpu_name: str | None = None
    usable_gib: float | None = None  # per GPU, as CUDA reports (not the catalog figure)
    gpu_count: int | None = None
    interconnect: str | None = None  # "nvlink" | "pcie" | "xgmi" | "unknown"
    interconnect_gbps: float | None = None  # per direction, GB/s, between two GPUs of the replica
    fp8_supported: bool | None = None  # W8A8 FP8 (Ada, Hopper, AMD)
    memory_bandwidth_gbps: float | None = None
    bf16_tflops: float | None = None
    host_profile: str | None = None  # a CPU server: the `servops probe` file these figures were measured in


class ModelFacts(BaseModel):
    """Architecture figures from the model's config.json (or the advisor's model catalog)."""

    name: str | None = None
    num_layers: int | None = None
    num_attention_heads: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None
    hidden_size: int | None = None
    params_billion: float | None = None
    active_params_billion: float | None = None  # what one token passes through (MoE: the routed experts only)
    max_position_embeddings: int | None = None
    dtype_bytes: float | None = None
    is_mla: bool | None = None
    is_moe: bool | None = None
    sliding_window: int | None = None
    prequantized: str | None = None  # e.g. "fp8", "awq", "gptq" when the checkpoint is quantized


class MemoryFacts(BaseModel):
    """The memory advisor's (or the startup log's) figures, as plain numbers."""

    total_gib: float | None = None
    requested_gib: float | None = None  # total × gpu_memory_utilization
    weights_gib: float | None = None  # per GPU
    activation_peak_gib: float | None = None
    non_torch_gib: float | None = None
    cudagraph_gib: float | None = None
    available_kv_gib: float | None = None
    kv_bytes_per_token: float | None = None  # per GPU (this rank's layers and KV heads), as advisor.memory.budget
    kv_cache_tokens: int | None = None
    num_blocks: int | None = None
    block_size: int | None = None
    max_concurrency: float | None = None  # at max_model_len
    max_model_len_that_fits: int | None = None
    source: str | None = None  # "advisor" | "startup_log"


class Workload(BaseModel):
    """What clients send: token lengths, shared prefixes, concurrency, and the SLOs they expect."""

    p50_input_tokens: float | None = None
    p95_input_tokens: float | None = None
    p50_output_tokens: float | None = None
    p95_output_tokens: float | None = None
    prefix_reuse_share: float | None = None  # fraction 0–1 of prompt tokens in shared prefixes
    shared_prefix_tokens: int | None = None  # typical shared prefix length (system prompt …)
    target_concurrency: int | None = None
    client_concurrency: int | None = None  # requests the clients have in flight
    num_replicas: int | None = None
    routing: str | None = None  # "round_robin" | "prefix_aware" | "session_affinity" | "unknown"
    uses_cache_salt: bool | None = None
    ttft_slo_s: float | None = None  # p99 target
    itl_slo_s: float | None = None  # p99 target


class LatencyPercentiles(BaseModel):
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None


class LoadStep(BaseModel):
    """One ramp step (issue #7 keys). `server` holds metric values sampled during the step.

    `errors` is the total; loadtest's RampResult writes a dict by kind, kept in `errors_by_kind`.
    `server` may be loadtest's ServerSignals (`running_mean`, `running_max`, `kv_cache_usage_max`,
    `preemptions_per_s`, …) or plain metric values; None becomes {}.
    """

    offered: float
    offered_unit: str | None = None  # "rps" | "concurrency"
    achieved_rate: float | None = None
    requests: int = 0
    errors: int = 0
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    ttft_s: LatencyPercentiles = Field(default_factory=LatencyPercentiles)
    itl_s: LatencyPercentiles = Field(default_factory=LatencyPercentiles)
    tpot_s: LatencyPercentiles = Field(default_factory=LatencyPercentiles)
    e2e_s: LatencyPercentiles = Field(default_factory=LatencyPercentiles)
    output_tokens_per_s: float | None = None
    goodput_rps: float | None = None
    valid: bool = True
    invalid_reason: str | None = None
    server: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if isinstance(data.get("errors"), dict):
                data["errors_by_kind"] = {str(k): int(v) for k, v in data["errors"].items()}
                data["errors"] = sum(data["errors_by_kind"].values())
            if data.get("server") is None:
                data["server"] = {}
        return data

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0

    def server_value(self, *names: str) -> float | None:
        """The first of `names` present in `server` as a number (e.g. running_mean, running)."""
        for name in names:
            value = self.server.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        return None


class LoadTestFacts(BaseModel):
    """A ramp result: steps, the knee (where latency bends) and the safe operating point."""

    steps: list[LoadStep] = Field(default_factory=list)
    knee: dict[str, Any] | None = None
    safe_operating_point: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_scalars(cls, data: Any) -> Any:
        """Accept `knee`/`safe_operating_point` given as a bare offered rate."""
        if isinstance(data, dict):
            data = dict(data)
            for key in ("knee", "safe_operating_point"):
                if isinstance(data.get(key), (int, float)):
                    data[key] = {"offered": float(data[key])}
        return data

    @property
    def valid_steps(self) -> list[LoadStep]:
        return [s for s in self.steps if s.valid]

    def knee_offered(self) -> float | None:
        value = (self.knee or {}).get("offered")
        return float(value) if isinstance(value, (int, float)) else None


class EndpointFacts(BaseModel):
    """What the HTTP probes said (a /health 200 alone does not prove progress)."""

    health_status: int | None = None  # 200, 503, 500 … None when unreachable
    health_reachable: bool | None = None
    models_ok: bool | None = None
    version: str | None = None


class FactSource(BaseModel):
    kind: str  # "metrics" | "prometheus" | "log" | "config" | "advisor" | "ramp" | "probe"
    location: str = ""
    note: str = ""


class Facts(BaseModel):
    """Everything known about one deployment; every part optional."""

    sources: list[FactSource] = Field(default_factory=list)
    snapshot: MetricSnapshot | None = None
    window: MetricWindow | None = None
    events: list[LogEvent] = Field(default_factory=list)
    config: ServerConfig | None = None
    hardware: Hardware | None = None
    model: ModelFacts | None = None
    memory: MemoryFacts | None = None
    workload: Workload | None = None
    loadtest: LoadTestFacts | None = None
    endpoint: EndpointFacts | None = None

    def events_of(self, *kinds: LogEventKind) -> list[LogEvent]:
        """Events of the given kinds, in log order."""
        return [e for e in self.events if e.kind in kinds]

    def first_event(self, *kinds: LogEventKind) -> LogEvent | None:
        """The earliest event of the given kinds (None if none): the one a rule quotes when the text holds several."""
        return next((e for e in self.events if e.kind in kinds), None)

    def last_event(self, *kinds: LogEventKind) -> LogEvent | None:
        found = self.events_of(*kinds)
        return found[-1] if found else None

    def gauge(self, name: str) -> float | None:
        """A gauge's current value: the window's end if there is one, else the snapshot."""
        if self.window is not None:
            value = self.window.total.gauge(name)
            if value is not None:
                return value
        return self.snapshot.value(name) if self.snapshot is not None else None
