"""Prometheus metrics with vLLM V1's names, types, labels and buckets (as vLLM 0.33 exposes them).

Why exact: the advisor's collectors, Grafana dashboards and alert rules written for vLLM
must read this engine unchanged. So names, help texts, label sets ({model_name, engine}),
histogram buckets and the pre-created `finished_reason` children follow vLLM's
`vllm/v1/metrics/loggers.py` (see docs/reference.md §1).

The server process uses the global default registry, as vLLM does with one API server, so
`_created` series and the python/process collectors appear too. Tests pass their own
`CollectorRegistry` so several instances can live in one process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

# vLLM serves /metrics as text format 0.0.4 (newer prometheus_client defaults to announcing
# 1.0.0, which some scrapers negotiate differently; the body is the same 0.0.4 text).
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# finished_reason values vLLM 0.33 pre-creates (0.13+ adds error, 0.17+ repetition).
FINISHED_REASONS: tuple[str, ...] = ("stop", "length", "abort", "error", "repetition")
ADMISSION_REASONS: tuple[str, ...] = ("max_num_queued_reqs", "max_num_queued_tokens")

TTFT_BUCKETS_S = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
)
ITL_BUCKETS_S = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
REQUEST_LATENCY_BUCKETS_S = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
)
ITERATION_TOKENS_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
PARAMS_N_BUCKETS = (1, 2, 5, 10, 20)
NUM_PREEMPTIONS_BUCKETS = (1, 2, 3, 4, 5, 10, 20)


def build_1_2_5_buckets(max_value: int) -> list[int]:
    """1, 2, 5, 10, 20, 50, … up to max_value, as vLLM's `build_1_2_5_buckets`."""
    buckets: list[int] = []
    exponent = 0
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if value > max_value:
                return buckets
            buckets.append(value)
        exponent += 1


@dataclass(frozen=True, slots=True)
class FinishedRequestStats:
    """What one finished request contributes to the per-request histograms (seconds, tokens)."""

    finished_reason: str
    e2e_latency_s: float
    num_prompt_tokens: int
    num_generation_tokens: int
    max_tokens_param: int | None
    queued_time_s: float
    prefill_time_s: float
    inference_time_s: float
    decode_time_s: float
    mean_time_per_output_token_s: float
    num_cached_tokens: int = 0
    num_preemptions: int = 0
    n_param: int = 1


class EngineMetrics:
    """All vLLM V1 core metrics of one engine, labelled {model_name, engine}."""

    def __init__(
        self, model_name: str, max_model_len: int, engine_index: int = 0, registry: CollectorRegistry | None = None
    ) -> None:
        """Registers every family at once, in vLLM's order, so /metrics lists them all (at 0) from the start."""
        self.model_name = model_name
        self.registry = registry if registry is not None else REGISTRY
        self._labels = ["model_name", "engine"]
        self._label_values = (model_name, str(engine_index))
        self._add_scheduler_gauges()
        self._add_counters()
        self._add_token_histograms(max_model_len)
        self._add_latency_histograms()

    def _gauge(self, name: str, doc: str) -> Gauge:
        return Gauge(name, doc, self._labels, registry=self.registry).labels(*self._label_values)

    def _counter(self, name: str, doc: str) -> Counter:
        return Counter(name, doc, self._labels, registry=self.registry).labels(*self._label_values)

    def _histogram(self, name: str, doc: str, buckets: Iterable[float]) -> Histogram:
        return Histogram(name, doc, self._labels, buckets=list(buckets), registry=self.registry).labels(
            *self._label_values
        )

    def _add_scheduler_gauges(self) -> None:
        """Scheduler and cache gauges."""
        self.num_requests_running = self._gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches."
        )
        self.num_requests_waiting = self._gauge(
            "vllm:num_requests_waiting", "Number of requests waiting to be processed."
        )
        waiting_by_reason = Gauge(
            "vllm:num_requests_waiting_by_reason",
            "Number of requests waiting to be processed, by reason.",
            self._labels + ["reason"],
            registry=self.registry,
        )
        self.num_requests_waiting_capacity = waiting_by_reason.labels(*self._label_values, "capacity")
        self.num_requests_waiting_deferred = waiting_by_reason.labels(*self._label_values, "deferred")
        self.kv_cache_usage_perc = self._gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self._cache_config_info: Gauge | None = None  # registered by set_cache_config_info after init

    def _add_counters(self) -> None:
        """Counters (prometheus_client exposes them with a `_total` suffix)."""
        self.prefix_cache_queries = self._counter(
            "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens."
        )
        self.prefix_cache_hits = self._counter(
            "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens."
        )
        self.num_preemptions = self._counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.")
        self.prompt_tokens = self._counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        self.prompt_tokens_cached = self._counter(
            "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external)."
        )
        self.generation_tokens = self._counter("vllm:generation_tokens", "Number of generation tokens processed.")
        success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            self._labels + ["finished_reason"],
            registry=self.registry,
        )
        # vLLM calls .labels() for every reason at init, so all appear at 0 from the start.
        self.request_success = {reason: success.labels(*self._label_values, reason) for reason in FINISHED_REASONS}
        rejections = Counter(
            "vllm:admission_rejections",
            "Number of requests rejected by admission control (HTTP 503).",
            ["model_name", "reason"],
            registry=self.registry,
        )
        self.admission_rejections = {reason: rejections.labels(self.model_name, reason) for reason in ADMISSION_REASONS}

    def _add_token_histograms(self, max_model_len: int) -> None:
        """Token-count histograms: per request (buckets 1-2-5 up to the model length) and per engine step."""
        request_token_buckets = build_1_2_5_buckets(max_model_len)
        self.request_prompt_tokens = self._histogram(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", request_token_buckets
        )
        self.request_generation_tokens = self._histogram(
            "vllm:request_generation_tokens", "Number of generation tokens processed.", request_token_buckets
        )
        self.request_max_num_generation_tokens = self._histogram(
            "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            request_token_buckets,
        )
        self.request_params_max_tokens = self._histogram(
            "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", request_token_buckets
        )
        self.request_params_n = self._histogram(
            "vllm:request_params_n", "Histogram of the n request parameter.", PARAMS_N_BUCKETS
        )
        self.iteration_tokens = self._histogram(
            "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", ITERATION_TOKENS_BUCKETS
        )
        self.request_prefill_kv_computed_tokens = self._histogram(
            "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
            request_token_buckets,
        )
        self.request_num_preemptions = self._histogram(
            "vllm:request_num_preemptions",
            "Histogram of the number of preemptions per finished request.",
            NUM_PREEMPTIONS_BUCKETS,
        )

    def _add_latency_histograms(self) -> None:
        """Latency histograms, in seconds."""
        self.time_to_first_token = self._histogram(
            "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS_S
        )
        self.inter_token_latency = self._histogram(
            "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_BUCKETS_S
        )
        self.request_time_per_output_token = self._histogram(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            ITL_BUCKETS_S,
        )
        self.e2e_request_latency = self._histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.request_queue_time = self._histogram(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.request_inference_time = self._histogram(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.request_prefill_time = self._histogram(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.request_decode_time = self._histogram(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )

    # --- recording ---------------------------------------------------------------------

    def set_cache_config_info(self, config: dict[str, object], engine_index: int = 0) -> None:
        """`vllm:cache_config_info` = 1 with every cache field as a string label, set once after init."""
        if self._cache_config_info is not None:
            return
        labels = {key: _label_text(value) for key, value in sorted(config.items())}
        labels["engine"] = str(engine_index)
        info = Gauge(
            "vllm:cache_config_info", "Information of the LLMEngine CacheConfig", list(labels), registry=self.registry
        )
        info.labels(**labels).set(1)
        self._cache_config_info = info

    def record_scheduler_state(self, running: int, waiting: int, kv_cache_usage: float) -> None:
        self.num_requests_running.set(running)
        self.num_requests_waiting.set(waiting)
        self.num_requests_waiting_capacity.set(waiting)
        self.num_requests_waiting_deferred.set(0)
        self.kv_cache_usage_perc.set(kv_cache_usage)

    def record_iteration(
        self, prompt_tokens: int, generation_tokens: int, preemptions: int, prefix_queries: int, prefix_hits: int
    ) -> None:
        """One engine step's deltas; iteration_tokens observes only steps that ran tokens."""
        if prompt_tokens:
            self.prompt_tokens.inc(prompt_tokens)
        if generation_tokens:
            self.generation_tokens.inc(generation_tokens)
        if preemptions:
            self.num_preemptions.inc(preemptions)
        if prefix_queries:
            self.prefix_cache_queries.inc(prefix_queries)
        if prefix_hits:
            self.prefix_cache_hits.inc(prefix_hits)
        if prompt_tokens + generation_tokens:
            self.iteration_tokens.observe(prompt_tokens + generation_tokens)

    def record_first_token(self, ttft_s: float) -> None:
        self.time_to_first_token.observe(ttft_s)

    def record_inter_token(self, itl_s: float) -> None:
        self.inter_token_latency.observe(itl_s)

    def record_finished(self, stats: FinishedRequestStats) -> None:
        reason = stats.finished_reason if stats.finished_reason in self.request_success else "error"
        self.request_success[reason].inc()
        self.e2e_request_latency.observe(stats.e2e_latency_s)
        self.request_queue_time.observe(stats.queued_time_s)
        self.request_prefill_time.observe(stats.prefill_time_s)
        self.request_inference_time.observe(stats.inference_time_s)
        self.request_decode_time.observe(stats.decode_time_s)
        self.request_prompt_tokens.observe(stats.num_prompt_tokens)
        self.request_generation_tokens.observe(stats.num_generation_tokens)
        self.request_max_num_generation_tokens.observe(stats.num_generation_tokens)
        self.request_params_n.observe(stats.n_param)
        self.request_num_preemptions.observe(stats.num_preemptions)
        self.request_prefill_kv_computed_tokens.observe(max(0, stats.num_prompt_tokens - stats.num_cached_tokens))
        if stats.num_cached_tokens:
            self.prompt_tokens_cached.inc(stats.num_cached_tokens)
        if stats.max_tokens_param is not None:
            self.request_params_max_tokens.observe(stats.max_tokens_param)
        if stats.num_generation_tokens > 1:
            self.request_time_per_output_token.observe(stats.mean_time_per_output_token_s)

    def record_admission_rejection(self, reason: str = "max_num_queued_reqs") -> None:
        self.admission_rejections[reason].inc()

    def exposition(self) -> bytes:
        """The text exposition of this registry (format 0.0.4)."""
        return generate_latest(self.registry)


def _label_text(value: object) -> str:
    return "None" if value is None else str(value)
