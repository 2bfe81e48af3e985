"""Build real Facts for rule tests: snapshots from plain dicts, windows through MetricWindow itself.

No mocks: a window is computed by `MetricWindow.from_snapshots` from two snapshots, exactly as
the collectors do, so a rule test also exercises the rate and percentile code it relies on.
"""

from __future__ import annotations

import math

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.events import LogEvent, LogEventKind
from rules.facts import (
    ConfigSource,
    Facts,
    Hardware,
    HistogramSample,
    MemoryFacts,
    MetricSnapshot,
    MetricWindow,
    ModelFacts,
    Sample,
    ServerConfig,
    Workload,
    flag_name,
)
from rules.model import Finding

MODEL = {"model_name": "Qwen/Qwen3-8B", "engine": "0"}
TTFT_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 7.5, 10.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)


def histogram(observations: dict[float, int], bounds: tuple[float, ...], labels: dict | None = None) -> HistogramSample:
    """Cumulative buckets for `observations` {value: count}, as prometheus_client would expose them."""
    buckets = []
    for bound in (*bounds, math.inf):
        buckets.append((bound, float(sum(n for v, n in observations.items() if v <= bound))))
    total = sum(observations.values())
    return HistogramSample(
        labels=dict(labels or MODEL),
        buckets=buckets,
        count=float(total),
        sum=float(sum(v * n for v, n in observations.items())),
    )


def snapshot(
    gauges: dict[str, float] | None = None,
    counters: dict[str, float] | None = None,
    histograms: dict[str, HistogramSample] | None = None,
    labels: dict | None = None,
) -> MetricSnapshot:
    """One scrape of one engine; names as exposed."""
    labels = dict(labels or MODEL)
    return MetricSnapshot(
        source="test",
        gauges={n: [Sample(labels=labels, value=v)] for n, v in (gauges or {}).items()},
        counters={n: [Sample(labels=labels, value=v)] for n, v in (counters or {}).items()},
        histograms={n: [h] for n, h in (histograms or {}).items()},
    )


def live(
    running: float = 10,
    waiting: float = 0,
    kv: float = 0.4,
    preemptions_added: float = 0,
    ttft: dict[float, int] | None = None,
    itl: dict[float, int] | None = None,
    prefix: tuple[float, float] | None = None,
    generated: float = 5000,
    interval_s: float = 10.0,
    extra_counters: dict[str, tuple[float, float]] | None = None,
) -> Facts:
    """Facts of a live server over one window; `ttft`/`itl` are the window's observations."""
    before_counters = {"vllm:num_preemptions_total": 100.0, "vllm:generation_tokens_total": 1e6}
    after_counters = {
        "vllm:num_preemptions_total": 100.0 + preemptions_added,
        "vllm:generation_tokens_total": 1e6 + generated,
    }
    if prefix is not None:
        queries, hits = prefix
        before_counters |= {"vllm:prefix_cache_queries_total": 5e5, "vllm:prefix_cache_hits_total": 1e5}
        after_counters |= {"vllm:prefix_cache_queries_total": 5e5 + queries, "vllm:prefix_cache_hits_total": 1e5 + hits}
    for name, (old, new) in (extra_counters or {}).items():
        before_counters[name], after_counters[name] = old, new
    base_ttft, base_itl = {0.2: 1000}, {0.03: 50_000}
    window_ttft = ttft if ttft is not None else {0.2: 100}
    window_itl = itl if itl is not None else {0.03: 5000}
    gauges = {
        "vllm:num_requests_running": running,
        "vllm:num_requests_waiting": waiting,
        "vllm:kv_cache_usage_perc": kv,
    }
    before = snapshot(
        gauges,
        before_counters,
        {
            "vllm:time_to_first_token_seconds": histogram(base_ttft, TTFT_BUCKETS),
            "vllm:inter_token_latency_seconds": histogram(base_itl, ITL_BUCKETS),
        },
    )
    after = snapshot(
        gauges,
        after_counters,
        {
            "vllm:time_to_first_token_seconds": histogram(_add(base_ttft, window_ttft), TTFT_BUCKETS),
            "vllm:inter_token_latency_seconds": histogram(_add(base_itl, window_itl), ITL_BUCKETS),
        },
    )
    return Facts(snapshot=after, window=MetricWindow.from_snapshots(before, after, interval_s))


def _add(a: dict[float, int], b: dict[float, int]) -> dict[float, int]:
    out = dict(a)
    for value, count in b.items():
        out[value] = out.get(value, 0) + count
    return out


def config(source: ConfigSource = ConfigSource.ARGS, **fields) -> ServerConfig:
    """A ServerConfig whose given fields all come from `source`."""
    return ServerConfig(**fields, sources={flag_name(k): source for k in fields if k not in ("model", "vllm_version")})


def event(kind: LogEventKind, line_no: int = 1, **fields) -> LogEvent:
    return LogEvent(kind=kind, raw=f"<{kind.value} line>", line_no=line_no, source_file="server.log", **fields)


def h100(count: int = 1, interconnect: str = "nvlink") -> Hardware:
    return Hardware(
        gpu_name="H100-SXM-80GB",
        usable_gib=79.18,
        gpu_count=count,
        interconnect=interconnect,
        fp8_supported=True,
        memory_bandwidth_gbps=3350,
    )


def llama8b() -> ModelFacts:
    return ModelFacts(
        name="meta-llama/Llama-3.1-8B-Instruct",
        num_layers=32,
        num_attention_heads=32,
        num_kv_heads=8,
        head_dim=128,
        params_billion=8.0,
        max_position_embeddings=131072,
        dtype_bytes=2,
    )


def healthy() -> Facts:
    """A well-configured, lightly loaded Llama-3.1-8B on one H100: no rule should fire.

    ITL 8 ms at 12 running: within 2x of the decode step's bandwidth floor (~5 ms), as vLLM with
    CUDA graphs gets; the 30 ms the other factories use would be 7x the floor (OP-5.13)."""
    facts = live(running=12, waiting=0, kv=0.35, prefix=(10_000, 6_000), itl={0.008: 5000})
    facts.config = config(
        ConfigSource.ARGS,
        model="meta-llama/Llama-3.1-8B-Instruct",
        vllm_version="0.33.0",
        max_model_len=16384,
        max_num_seqs=200,
        gpu_memory_utilization=0.92,
        enable_prefix_caching=True,
        enable_chunked_prefill=True,
        tensor_parallel_size=1,
        max_num_batched_tokens=8192,
    )
    facts.hardware = h100()
    facts.model = llama8b()
    facts.memory = MemoryFacts(
        total_gib=79.18,
        weights_gib=14.99,
        available_kv_gib=55.9,
        kv_bytes_per_token=131072,
        kv_cache_tokens=457_900,
        block_size=16,
        max_concurrency=27.9,
        source="advisor",
    )
    facts.workload = Workload(
        p50_input_tokens=800,
        p95_input_tokens=3000,
        p95_output_tokens=600,
        prefix_reuse_share=0.5,
        shared_prefix_tokens=1200,
        target_concurrency=32,
        client_concurrency=12,
        num_replicas=1,
    )
    return facts


def a100_sxm(count: int) -> Hardware:
    """The catalog's A100-SXM-80GB (advisor/catalog/gpus.py): 2.039 TB/s, NVLink."""
    return Hardware(
        gpu_name="A100-SXM-80GB", usable_gib=79.15, gpu_count=count, interconnect="nvlink", memory_bandwidth_gbps=2039
    )


def replicas_at_their_floor(
    replicas: int, running: float, itl_s: float, hardware: Hardware | None = None, prompt: int = 200, output: int = 200
) -> Facts:
    """Llama-3.1-70B (bf16, 141 GB of weights) as `replicas` data-parallel TP-4 replicas of A100-SXM, a user's
    ITL target of 20 ms; short requests (context ~300 tokens) unless `prompt`/`output` say otherwise."""
    facts = live(running=running, itl={itl_s: 5000})
    facts.hardware = hardware or a100_sxm(4 * replicas)
    facts.model = ModelFacts(
        name="meta-llama/Llama-3.1-70B-Instruct",
        num_layers=80,
        num_attention_heads=64,
        num_kv_heads=8,
        head_dim=128,
        hidden_size=8192,
        params_billion=70.6,
        dtype_bytes=2,
    )
    facts.config = config(tensor_parallel_size=4, data_parallel_size=replicas)
    facts.workload = Workload(p50_input_tokens=prompt, p50_output_tokens=output, itl_slo_s=0.02)
    return facts


def top_finding(*lines: str, config: ServerConfig | None = None) -> Finding | None:
    """What triage says first about pasted `lines`, read by the log collector's own parser (None: nothing).

    Why one helper: a rule test for a pasted line asks exactly this, and twenty files each wrote it again."""
    return evaluate(Facts(events=parse_lines(list(lines)).events, config=config)).top
