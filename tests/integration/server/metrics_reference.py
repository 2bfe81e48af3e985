"""vLLM 0.33's core V1 metrics as exposed: name, type and label set.

Transcribed from docs/reference.md §1.3 (the rows still present in 0.33 that this engine
can fill) and §1.5 (buckets). Names are the exposed ones (counters with `_total`).
"""

from __future__ import annotations

BASE = frozenset({"model_name", "engine"})

# exposed name -> (type, label names of a non-bucket sample)
EXPECTED: dict[str, tuple[str, frozenset[str]]] = {
    "vllm:num_requests_running": ("gauge", BASE),
    "vllm:num_requests_waiting": ("gauge", BASE),
    "vllm:num_requests_waiting_by_reason": ("gauge", BASE | {"reason"}),
    "vllm:kv_cache_usage_perc": ("gauge", BASE),
    "vllm:prefix_cache_queries_total": ("counter", BASE),
    "vllm:prefix_cache_hits_total": ("counter", BASE),
    "vllm:num_preemptions_total": ("counter", BASE),
    "vllm:prompt_tokens_total": ("counter", BASE),
    "vllm:prompt_tokens_cached_total": ("counter", BASE),
    "vllm:generation_tokens_total": ("counter", BASE),
    "vllm:request_success_total": ("counter", BASE | {"finished_reason"}),
    "vllm:admission_rejections_total": ("counter", frozenset({"model_name", "reason"})),
    "vllm:request_prompt_tokens": ("histogram", BASE),
    "vllm:request_generation_tokens": ("histogram", BASE),
    "vllm:request_max_num_generation_tokens": ("histogram", BASE),
    "vllm:request_params_max_tokens": ("histogram", BASE),
    "vllm:request_params_n": ("histogram", BASE),
    "vllm:iteration_tokens_total": ("histogram", BASE),
    "vllm:request_prefill_kv_computed_tokens": ("histogram", BASE),
    "vllm:request_num_preemptions": ("histogram", BASE),
    "vllm:time_to_first_token_seconds": ("histogram", BASE),
    "vllm:inter_token_latency_seconds": ("histogram", BASE),
    "vllm:request_time_per_output_token_seconds": ("histogram", BASE),
    "vllm:e2e_request_latency_seconds": ("histogram", BASE),
    "vllm:request_queue_time_seconds": ("histogram", BASE),
    "vllm:request_inference_time_seconds": ("histogram", BASE),
    "vllm:request_prefill_time_seconds": ("histogram", BASE),
    "vllm:request_decode_time_seconds": ("histogram", BASE),
}

# cache_config_info carries CacheConfig fields as labels; these must be among them.
CACHE_CONFIG_INFO_LABELS = frozenset(
    {"engine", "block_size", "num_gpu_blocks", "enable_prefix_caching", "gpu_memory_utilization", "cache_dtype"}
)

# Gone by 0.33 (removed in 0.12 / 0.15): must not be exposed.
REMOVED = ("vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_queries_total", "vllm:time_per_output_token_seconds")

FINISHED_REASONS = frozenset({"stop", "length", "abort", "error", "repetition"})

BUCKETS = {
    "vllm:time_to_first_token_seconds": [
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
    ],
    "vllm:inter_token_latency_seconds": [
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
    ],
    "vllm:e2e_request_latency_seconds": [
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
    ],
    "vllm:iteration_tokens_total": [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
    "vllm:request_num_preemptions": [1, 2, 3, 4, 5, 10, 20],
}
