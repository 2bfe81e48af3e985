"""The `/metrics` families vLLM exposes, by version: exposed name, type, versions, histogram buckets.

Why a table: `servops alerts lint` checks rules and dashboards written by people against what a
vLLM of a given version really exposes, and the mistakes it catches are exactly the ones this
table settles: a counter queried without `_total` (prometheus_client appends it), a series renamed
or removed (`gpu_cache_usage_perc` → `kv_cache_usage_perc` from 0.9.2, gone in 0.12.0), `rate()` over a
gauge, a quantile over a histogram's base name. Transcribed from docs/reference.md §1.3–1.5, whose
source is `vllm/v1/metrics/loggers.py` of each version (from 0.32 `vllm/v1/metrics/buckets.py`).
V0-only families (removed with V0 in 0.11.0) are kept so a rule written for V0 is named as such.

Two facts are read where they already live rather than written again: the renames from
`rules.metrics.METRIC_ALIASES` (the spellings triage reads), and the histogram bounds from the
bundled engine's `engine/observability/metrics.py`, which reproduces vLLM's exposition exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from advisor.catalog.vllm_versions import Version
from engine.observability.metrics import ITL_BUCKETS_S as ITL_BUCKETS
from engine.observability.metrics import REQUEST_LATENCY_BUCKETS_S as REQUEST_BUCKETS
from engine.observability.metrics import TTFT_BUCKETS_S as TTFT_BUCKETS
from rules.metrics import canonical_name

Kind = Literal["gauge", "counter", "histogram"]
NEWEST: Version = (0, 34, 99)  # the newest release whose metrics this table was checked against


@dataclass(frozen=True)
class MetricFamily:
    """One family as exposed: its name (counters with `_total`; a histogram by its base name), its
    type, the versions that expose it, what V1 replaced a V0-only family with, and its buckets in
    seconds."""

    name: str
    kind: Kind
    since: Version
    until: Version = NEWEST
    replaced_by: str | None = None
    buckets: tuple[float, ...] = ()

    def in_version(self, version: Version) -> bool:
        return self.since <= version <= self.until

    @property
    def successor(self) -> str | None:
        """The series to query instead: the newer spelling of a renamed one, or what V1 replaced it with."""
        newer = canonical_name(self.name)
        return newer if newer != self.name else self.replaced_by


_V0_END: Version = (0, 10, 99)  # V0 was removed in 0.11.0

FAMILIES: tuple[MetricFamily, ...] = (
    MetricFamily("vllm:num_requests_running", "gauge", (0, 8, 0)),
    MetricFamily("vllm:num_requests_waiting", "gauge", (0, 8, 0)),
    MetricFamily("vllm:num_requests_waiting_by_reason", "gauge", (0, 20, 0)),
    MetricFamily("vllm:engine_sleep_state", "gauge", (0, 12, 0)),
    MetricFamily("vllm:kv_cache_usage_perc", "gauge", (0, 9, 2)),
    MetricFamily("vllm:gpu_cache_usage_perc", "gauge", (0, 8, 0), (0, 11, 99)),
    MetricFamily("vllm:cache_config_info", "gauge", (0, 8, 0)),
    MetricFamily("vllm:prefix_cache_queries_total", "counter", (0, 9, 2)),
    MetricFamily("vllm:prefix_cache_hits_total", "counter", (0, 9, 2)),
    MetricFamily("vllm:gpu_prefix_cache_queries_total", "counter", (0, 8, 0), (0, 11, 99)),
    MetricFamily("vllm:gpu_prefix_cache_hits_total", "counter", (0, 8, 0), (0, 11, 99)),
    MetricFamily("vllm:num_preemptions_total", "counter", (0, 8, 0)),
    MetricFamily("vllm:prompt_tokens_total", "counter", (0, 8, 0)),
    MetricFamily("vllm:prompt_tokens_cached_total", "counter", (0, 16, 0)),
    MetricFamily("vllm:prompt_tokens_by_source_total", "counter", (0, 16, 0)),
    MetricFamily("vllm:prompt_tokens_cached_by_source_total", "counter", (0, 32, 0)),
    MetricFamily("vllm:generation_tokens_total", "counter", (0, 8, 0)),
    MetricFamily("vllm:request_success_total", "counter", (0, 8, 0)),
    MetricFamily("vllm:admission_rejections_total", "counter", (0, 32, 0)),
    MetricFamily("vllm:request_prompt_tokens", "histogram", (0, 8, 0)),
    MetricFamily("vllm:request_generation_tokens", "histogram", (0, 8, 0)),
    MetricFamily("vllm:request_max_num_generation_tokens", "histogram", (0, 8, 0)),
    MetricFamily("vllm:request_params_max_tokens", "histogram", (0, 8, 0)),
    MetricFamily("vllm:request_params_n", "histogram", (0, 8, 0)),
    MetricFamily("vllm:iteration_tokens_total", "histogram", (0, 8, 0)),
    MetricFamily("vllm:request_prefill_kv_computed_tokens", "histogram", (0, 13, 0)),
    MetricFamily("vllm:request_num_preemptions", "histogram", (0, 30, 0)),
    MetricFamily("vllm:time_to_first_token_seconds", "histogram", (0, 8, 0), buckets=TTFT_BUCKETS),
    MetricFamily("vllm:inter_token_latency_seconds", "histogram", (0, 10, 2), buckets=ITL_BUCKETS),
    MetricFamily("vllm:time_per_output_token_seconds", "histogram", (0, 8, 0), (0, 14, 99), buckets=ITL_BUCKETS),
    MetricFamily("vllm:request_time_per_output_token_seconds", "histogram", (0, 11, 0), buckets=ITL_BUCKETS),
    MetricFamily("vllm:e2e_request_latency_seconds", "histogram", (0, 8, 0), buckets=REQUEST_BUCKETS),
    MetricFamily("vllm:request_queue_time_seconds", "histogram", (0, 8, 0), buckets=REQUEST_BUCKETS),
    MetricFamily("vllm:request_inference_time_seconds", "histogram", (0, 8, 0), buckets=REQUEST_BUCKETS),
    MetricFamily("vllm:request_prefill_time_seconds", "histogram", (0, 8, 0), buckets=REQUEST_BUCKETS),
    MetricFamily("vllm:request_decode_time_seconds", "histogram", (0, 8, 0), buckets=REQUEST_BUCKETS),
    # chat templating, tokenization and multimodal preprocessing of one request (vllm/renderers/metrics.py, 0.34)
    MetricFamily("vllm:request_render_duration_seconds", "histogram", (0, 34, 0)),
    # requests that finished with NaN in their logits, counted only with VLLM_COMPUTE_NANS_IN_LOGITS=1 (0.11.1 on)
    MetricFamily("vllm:corrupted_requests_total", "counter", (0, 11, 1)),
    # V0 only (no successor in V1; the hit-rate gauges became the queries/hits counters)
    MetricFamily("vllm:num_requests_swapped", "gauge", (0, 8, 0), _V0_END),
    MetricFamily("vllm:cpu_cache_usage_perc", "gauge", (0, 8, 0), _V0_END),
    MetricFamily("vllm:gpu_prefix_cache_hit_rate", "gauge", (0, 8, 0), _V0_END, "vllm:prefix_cache_hits_total"),
    MetricFamily("vllm:cpu_prefix_cache_hit_rate", "gauge", (0, 8, 0), _V0_END),
    MetricFamily("vllm:time_in_queue_requests", "histogram", (0, 8, 0), _V0_END, "vllm:request_queue_time_seconds"),
    MetricFamily("vllm:model_forward_time_milliseconds", "histogram", (0, 8, 0), _V0_END),
    MetricFamily("vllm:model_execute_time_milliseconds", "histogram", (0, 8, 0), _V0_END),
    MetricFamily("vllm:spec_decode_draft_acceptance_rate", "gauge", (0, 8, 0), _V0_END),
    MetricFamily("vllm:spec_decode_efficiency", "gauge", (0, 8, 0), _V0_END),
)
BY_NAME: dict[str, MetricFamily] = {family.name: family for family in FAMILIES}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def family_of(series: str) -> tuple[MetricFamily | None, str]:
    """The family a queried series belongs to and its suffix (`_bucket`, `_sum`, `_count` or '')."""
    for suffix in HISTOGRAM_SUFFIXES:
        base = series.removesuffix(suffix)
        if base != series and BY_NAME.get(base) is not None and BY_NAME[base].kind == "histogram":
            return BY_NAME[base], suffix
    return BY_NAME.get(series), ""


def version_text(version: Version) -> str:
    return f"{version[0]}.{version[1]}" + (f".{version[2]}" if version[2] and version[2] < 99 else "")
