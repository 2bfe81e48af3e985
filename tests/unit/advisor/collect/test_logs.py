"""The log collector: every vLLM version's wording becomes the same typed event.

Lines are vLLM's format strings from docs/reference.md §2 filled with
the real numbers quoted there (#27313, #34076, #20305, #15676, #18115) unless noted.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.collect.facts import memory_from_log
from advisor.collect.logs import LogReadError, parse_lines, read_log
from rules.events import FIELDS_BY_KIND, LogEventKind, OomPhase

FIXTURES = Path(__file__).parents[3] / "fixtures" / "collect"
K = LogEventKind


def only_event(line: str):
    result = parse_lines([line])
    assert len(result.events) == 1, [e.kind for e in result.events]
    return result.events[0]


# (line, kind, expected fields) — several versions' spellings of each event.
CASES = [
    # KV cache size: two lines (0.8–0.27), one line (0.28–0.29), device word (0.30+)
    (
        "(EngineCore_DP0 pid=77352) INFO 10-22 09:33:49 [kv_cache_utils.py:1087] GPU KV cache size: 162,704 tokens",
        K.KV_CACHE_SIZE,
        {"kv_cache_tokens": 162704, "device": "GPU"},
    ),
    (
        "INFO 03-30 12:00:00 [kv_cache_utils.py:634] Maximum concurrency for 4,096 tokens per request: 13.20x",
        K.MAX_CONCURRENCY,
        {"max_model_len": 4096, "max_concurrency": 13.20},
    ),
    (
        "(EngineCore pid=1) INFO 01-01 00:00:00 [kv_cache_utils.py:1] GPU KV cache size: 162,704 tokens, "
        "Maximum concurrency for 16,000 tokens per request: 10.17x",
        K.KV_CACHE_SIZE,
        {"kv_cache_tokens": 162704, "max_model_len": 16000, "max_concurrency": 10.17},
    ),
    (
        "(EngineCore pid=1) INFO 01-01 00:00:00 [kv_cache_utils.py:9] CPU KV cache size: 4,096 tokens, "
        "Maximum concurrency for 256 tokens per request: 16.00x",
        K.KV_CACHE_SIZE,
        {"kv_cache_tokens": 4096, "device": "CPU", "max_concurrency": 16.0},
    ),
    (
        "INFO 05-01 10:00:00 [executor_base.py:111] # cuda blocks: 3852, # CPU blocks: 4096",
        K.V0_GPU_BLOCKS,
        {"num_gpu_blocks": 3852, "device": "cuda"},
    ),
    # available memory: %.2f (0.9.1–0.13) and round(x,2) (0.14+)
    (
        "(EngineCore_DP0 pid=7) INFO 10-22 09:33:47 [gpu_worker.py:298] Available KV cache memory: 22.34 GiB",
        K.AVAILABLE_KV_MEMORY,
        {"available_kv_gib": 22.34},
    ),
    (
        "(EngineCore pid=7) INFO 10-22 09:33:47 [gpu_worker.py:300] Available KV cache memory: 24.0 GiB",
        K.AVAILABLE_KV_MEMORY,
        {"available_kv_gib": 24.0},
    ),
    # model loading: GB (0.8.0), GiB (0.8.5–0.11), GiB memory (0.12+)
    (
        "INFO 03-01 00:00:00 [model_runner.py:1] Model loading took 14.9889 GB and 5.123456 seconds",
        K.MODEL_LOADING,
        {"weights_gib": 14.9889, "load_seconds": 5.123456},
    ),
    (
        "INFO 03-01 00:00:00 [gpu_model_runner.py:1] Model loading took 15.2683 GiB memory and 8.5 seconds",
        K.MODEL_LOADING,
        {"weights_gib": 15.2683},
    ),
    # stats line: 0.8.0 (no prefix), 0.8.5–0.11 (Engine 000), 0.12+ (Preemptions), 0.30 (device word), V0
    (
        "INFO 07-28 06:40:59 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
        "throughput: 239.2 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 91.2%, "
        "Prefix cache hit rate: 0.0%",
        K.STATS_LINE,
        {
            "engine": "000",
            "running": 8,
            "waiting": 0,
            "kv_usage": 0.912,
            "prefix_hit_rate": 0.0,
            "generation_throughput_tps": 239.2,
        },
    ),
    (
        "INFO 01-01 00:00:00 [loggers.py:1] Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: "
        "20.0 tokens/s, Running: 2 reqs, Waiting: 1 reqs, GPU KV cache usage: 50.0%, Prefix cache hit rate: 25.0%",
        K.STATS_LINE,
        {"running": 2, "waiting": 1, "kv_usage": 0.5, "prefix_hit_rate": 0.25},
    ),
    (
        "(APIServer pid=9) INFO 01-01 00:00:10 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
        "Avg generation throughput: 2.0 tokens/s, Running: 32 reqs, Waiting: 5 reqs, Deferred: 2 reqs, "
        "Preemptions: 7, GPU KV cache usage: 99.1%, Prefix cache hit rate: 3.0%",
        K.STATS_LINE,
        {"running": 32, "waiting": 5, "deferred": 2, "preemptions": 7, "kv_usage": 0.991},
    ),
    (
        "(APIServer pid=9) INFO 01-01 00:00:10 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
        "Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, CPU KV cache usage: 12.5%",
        K.STATS_LINE,
        {"running": 3, "kv_usage": 0.125},
    ),
    (
        "INFO 05-01 10:00:00 metrics.py:455] Avg prompt throughput: 5.0 tokens/s, Avg generation throughput: "
        "6.0 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 9 reqs, GPU KV cache usage: 98.0%, "
        "CPU KV cache usage: 0.0%.",
        K.STATS_LINE,
        {"running": 4, "waiting": 9, "kv_usage": 0.98},
    ),
    (
        "INFO 01-01 00:00:00 [loggers.py:1] 2 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s, Avg "
        "generation throughput: 2.0 tokens/s, Running: 6 reqs, Waiting: 0 reqs, GPU KV cache usage: 40.0%",
        K.STATS_LINE,
        {"engine": "all", "running": 6},
    ),
    # startup failure: models's (0.8–0.21), model's + round() GiB (0.22+), V0 wording
    (
        "ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, "
        "the estimated maximum model length is 34736. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.",
        K.MAX_MODEL_LEN_TOO_LARGE,
        {"max_model_len": 262144, "kv_needed_gib": 24.0, "available_kv_gib": 3.18, "estimated_max_model_len": 34736},
    ),
    (
        "(EngineCore pid=3) ERROR 01-01 00:00:00 [core.py:1] ValueError: To serve at least one request with the "
        "model's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV "
        "cache memory (9.50 GiB). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more "
        "details.",
        K.MAX_MODEL_LEN_TOO_LARGE,
        {"max_model_len": 131072, "available_kv_gib": 9.5, "estimated_max_model_len": None},
    ),
    (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored "
        "in KV cache (21776). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine.",
        K.V0_MAX_SEQ_LEN_TOO_LARGE,
        {"max_model_len": 32768, "max_seq_len_tokens": 21776},
    ),
    (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine.",
        K.NO_CACHE_BLOCKS,
        {},
    ),
    (
        "ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory "
        "utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        K.FREE_MEMORY_BELOW_REQUESTED,
        {"free_gib": 31.44, "total_gib": 47.38, "gpu_memory_utilization": 0.95, "requested_gib": 45.01},
    ),
    (
        "ValueError: Free memory on device cuda:0 (31.44/47.38 GiB) on startup is less than desired GPU memory "
        "utilization (0.95, 45.01 GiB).",
        K.FREE_MEMORY_BELOW_REQUESTED,
        {"free_gib": 31.44},
    ),
    (
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try "
        "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
        K.CUDA_OOM,
        {"oom_phase": OomPhase.SAMPLER_WARMUP, "num_dummy_requests": 1024},
    ),
    # datawhalechina/self-llm#459, verbatim: argparse's refusal retyped without its spaces, in Chinese quotes
    (
        "2.报错：“vllm:error:unrecognized arguments:--enable-reason”",
        K.ARGS_UNRECOGNIZED,
        {"message": "--enable-reason"},
    ),
    # llm-d/llm-d#787, verbatim: the reporter wrapped the message over lines, and this one ends at the count
    (
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 ",
        K.CUDA_OOM,
        {"oom_phase": OomPhase.SAMPLER_WARMUP, "num_dummy_requests": 1024},
    ),
    # V1's executor after a worker died (vllm-project/vllm-omni#2224, verbatim): the death, with no process named
    (
        "(EngineCore pid=374854) ERROR 03-28 12:39:08 [core.py:1101] RuntimeError: Executor failed.",
        K.WORKER_DIED,
        {"process": None},
    ),
    (
        "ERROR 01-01 00:00:00 [gpu_model_runner.py:1] Failed to load model - not enough GPU memory. Try lowering "
        "--gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using "
        "--quantization.",
        K.CUDA_OOM,
        {"oom_phase": OomPhase.WEIGHT_LOAD},
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of "
        "44.53 GiB of which 448.00 KiB is free. Including non-PyTorch memory, this process has 44.06 GiB memory "
        "in use.",
        K.CUDA_OOM,
        {"tried_to_allocate_gib": 2 / 1024, "total_gib": 44.53},
    ),
    (  # torch names each other process on the GPU, then this one (PyTorch and the rest)
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 594.00 MiB. GPU 0 has a total capacity of "
        "22.03 GiB of which 582.00 MiB is free. Process 29529 has 796.00 MiB memory in use. Process 7 has 1.25 GiB "
        "memory in use. Including non-PyTorch memory, this process has 20.67 GiB memory in use.",
        K.CUDA_OOM,
        {"other_processes": True, "other_processes_gib": 796 / 1024 + 1.25, "this_process_gib": 20.67},
    ),
    (
        "AssertionError: Error in memory profiling. Initial free memory 70.1 GiB, current free memory 72.3 GiB. "
        "This happens when other processes sharing the same container release GPU memory while vLLM is profiling "
        "during initialization.",
        K.MEMORY_PROFILING_ERROR,
        {"initial_free_gib": 70.1, "current_free_gib": 72.3},
    ),
    (
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {'EngineCore_DP0': 1}",
        K.ENGINE_CORE_FAILED,
        {},
    ),
    # vLLM 0.32's CPU backend (v1/worker/cpu_worker.py), as recorded in tests/fixtures/vllm_cpu
    (
        (
            "(VllmWorker-0 pid=9483) ERROR 11-23 20:43:19 [multiproc_executor.py:953] ValueError: Available memory on "
            "node 0 (10.65/12.34 GiB) on startup is less than desired CPU memory utilization (0.92, 11.35 GiB). On the "
            "CPU backend, the `--gpu-memory-utilization` flag controls the fraction of CPU memory reserved."
        ),
        K.FREE_MEMORY_BELOW_REQUESTED,
        {
            "free_gib": 10.65,
            "total_gib": 12.34,
            "gpu_memory_utilization": 0.92,
            "requested_gib": 11.35,
            "device": "CPU",
        },
    ),
    (
        "(Worker pid=6844) INFO 11-23 20:40:32 [cpu_worker.py:260] Explicitly set (1.0/12.34) GiB for KV cache on node 0.",
        K.AVAILABLE_KV_MEMORY,
        {"available_kv_gib": 1.0},
    ),
    (
        (
            "(EngineCore pid=6832) INFO 11-23 20:40:35 [core.py:402] init engine (profile, create kv cache, warmup "
            "model) took 67.93 s"
        ),
        K.ENGINE_READY,
        {"init_seconds": 67.93},
    ),
    (
        "INFO 05-01 10:00:00 [core.py:1] init engine (profile, create kv cache, warmup model) took 10.32 seconds",
        K.ENGINE_READY,
        {"init_seconds": 10.32},
    ),
    (  # vllm#20264, verbatim: the reporter bolded the figure
        "INFO 06-19 23:05:35 [core.py:162] init engine (profile, create kv cache, warmup model) took **34.11 seconds**",
        K.ENGINE_READY,
        {"init_seconds": 34.11},
    ),
    (
        "(EngineCore_DP0 pid=6448) INFO 02-12 15:00:36 [monitor.py:34] torch.compile takes 2222.52 s in total",
        K.COMPILE_TOTAL,
        {"init_seconds": 2222.52},
    ),
    (
        "(APIServer pid=6819) INFO 11-23 20:39:01 [api_utils.py:347]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.32.0",
        K.VERSION,
        {"version": "0.32.0"},
    ),
    # runtime failures
    (
        "(EngineCore_DP0 pid=5) ERROR 01-01 00:00:00 [core.py:1] EngineCore encountered a fatal error.",
        K.FATAL_ERROR,
        {},
    ),
    ("TimeoutError: RPC call to execute_model timed out.", K.RPC_TIMEOUT, {"rpc_method": "execute_model"}),
    (
        "(EngineCore_DP0 pid=5) WARNING 01-01 00:01:00 [shm_broadcast.py:1] No available shared memory broadcast "
        "block found in 60 second.",
        K.SHM_BROADCAST_HANG,
        {"hang_seconds": 60.0},
    ),
    (  # 0.5-0.6's wording, without the queue's name (vllm#9321, verbatim)
        "(VllmWorkerProcess pid=3106) WARNING 10-12 22:31:22 shm_broadcast.py:396] No available block found in 60 "
        "second.",
        K.SHM_BROADCAST_HANG,
        {"hang_seconds": 60.0},
    ),
    (
        "ERROR 01-01 00:00:00 [multiproc_executor.py:1] Worker proc VllmWorker-1 died unexpectedly, shutting down "
        "executor.",
        K.WORKER_DIED,
        {"process": "VllmWorker-1"},
    ),
    (
        "[rank0]:[E1022 09:40:00.123 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for "
        "600060 milliseconds before timing out.",
        K.NCCL_WATCHDOG_TIMEOUT,
        {"rank": 0, "op_type": "ALLREDUCE", "timeout_ms": 600000, "ran_ms": 600060},
    ),
    # V0 preemption warning (docs artifact for V1, real in V0)
    (
        "WARNING 05-01 10:00:00 scheduler.py:1057] Sequence group 0 is preempted by PreemptionMode.RECOMPUTE mode "
        "because there is not enough KV cache space. This can affect the end-to-end performance. "
        "total_num_cumulative_preemption=51",
        K.V0_PREEMPTION_WARNING,
        {"total_preemptions": 51},
    ),
    # vllm#8219, verbatim from a 0.6.1 company image, bold in the issue: "in" and "impact" for vLLM's "by", "affect"
    (
        "**Sequence group cmpl-71c6c2702c07450bb38a3a497140d0eb-0 is preempted in PreemptionMode.RECOMPUTE mode "
        "because there is not enough KV cache space. This can impact end-to-end performance. Increase "
        "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
        "total_num_cumulative_preemption=1**",
        K.V0_PREEMPTION_WARNING,
        {"total_preemptions": 1},
    ),
    # configuration
    (
        "(APIServer pid=7) INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.11.0",
        K.VERSION,
        {"version": "0.11.0"},
    ),
    (
        "(APIServer pid=7) INFO 01-01 00:00:00 [api_server.py:1] vLLM server version 0.33.0, serving model "
        "Qwen/Qwen3-8B",
        K.VERSION,
        {"version": "0.33.0", "model": "Qwen/Qwen3-8B"},
    ),
    (  # the bundled engine serving its embedded default model
        "(APIServer pid=7) INFO 01-01 00:00:00 [server.py:70] vLLM server version 0.33.0+servops.0.1.0, serving "
        "model SmolLM2-135M-Instruct (the embedded default)",
        K.VERSION,
        {"version": "0.33.0+servops.0.1.0", "model": "SmolLM2-135M-Instruct"},
    ),
    (  # servops 0.1's wording of the same (tests/fixtures/bundled/queue_seqs1.log): not the model "the"
        "(APIServer pid=7) INFO 01-01 00:00:00 [server.py:67] vLLM server version 0.33.0+servops.0.1.0, serving "
        "model the embedded SmolLM2-135M-Instruct",
        K.VERSION,
        {"version": "0.33.0+servops.0.1.0", "model": "SmolLM2-135M-Instruct"},
    ),
    (
        "INFO 01-01 00:00:00 [config.py:1] Chunked prefill is enabled with max_num_batched_tokens=8192.",
        K.CHUNKED_PREFILL,
        {"max_num_batched_tokens": 8192},
    ),
    (
        "WARNING 01-01 00:00:00 [async_llm.py:1] AsyncLLM created with api_server_count more than 1; disabling "
        "stats logging to avoid incomplete stats.",
        K.STATS_DISABLED,
        {},
    ),
    (
        "INFO 01-01 00:00:00 [gpu_model_runner.py:1] Graph capturing finished in 12 secs, took 0.56 GiB",
        K.CUDA_GRAPH_MEMORY,
        {"cudagraph_gib": 0.56},
    ),
    (
        "SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 30.00 tokens/s, Drafted "
        "throughput: 60.00 tokens/s, Accepted: 300 tokens, Drafted: 600 tokens, Per-position acceptance rate: "
        "0.700, 0.500, Avg Draft acceptance rate: 50.0%",
        K.SPEC_DECODE_METRICS,
        {"mean_acceptance_length": 2.5, "acceptance_rate": 0.5, "drafted_tokens": 600},
    ),
    (
        "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please "
        "reduce the length of the input messages.",
        K.REQUEST_TOO_LONG,
        {"max_model_len": 4096, "prompt_tokens": 5000},
    ),
    # The wordings below were read in the released wheels (0.4.0, 0.5.5, 0.6.6, 0.7.3, 0.8.5, 0.10.1) and 0.32.
    # V0's spec decode (engine/metrics.py 0.5-0.8): a fraction, not a percentage
    (
        "INFO 07-01 10:00:00 metrics.py:373] Speculative metrics: Draft acceptance rate: 0.723, System efficiency: "
        "0.612, Number of speculative tokens: 4, Number of accepted tokens: 18234, Number of draft tokens: 25216, "
        "Number of emitted tokens: 21980.",
        K.SPEC_DECODE_METRICS,
        {"acceptance_rate": 0.723, "accepted_tokens": 18234, "drafted_tokens": 25216},
    ),
    # KV blocks: 0.6-0.7's V1 alone, V0's CPU backend alone, the API server's count (0.10-0.33)
    ("INFO 07-01 10:00:00 kv_cache_utils.py:522] # GPU blocks: 27926", K.V0_GPU_BLOCKS, {"num_gpu_blocks": 27926}),
    (
        "INFO 07-01 10:00:00 cpu_executor.py:207] # CPU blocks: 2730",
        K.V0_GPU_BLOCKS,
        {"num_gpu_blocks": 2730, "device": "CPU"},
    ),
    (
        "(APIServer pid=4100) INFO 07-01 10:00:00 [loggers.py:142] Engine 000: vllm cache_config_info with "
        "initialization after num_gpu_blocks is: 27926",
        K.V0_GPU_BLOCKS,
        {"num_gpu_blocks": 27926},
    ),
    # 0.32's memory summary after graph capture (v1/worker/gpu_worker.py), and the --kv-cache-memory branch
    (
        "(VllmWorker TP0 pid=4301) INFO 07-01 10:00:00 [gpu_worker.py:1034] Free memory on device (78.5/79.19 GiB) "
        "on startup. Desired GPU memory utilization is (0.9, 71.27 GiB). Actual usage is 15.44 GiB for consumed "
        "memory (weights + non-torch), 1.39 GiB for peak activation, and 0.52 GiB for CUDAGraph memory. Replace "
        "gpu_memory_utilization config with `--kv-cache-memory=57000000000` (53.1 GiB) to fit into requested memory, "
        "or `--kv-cache-memory=60000000000` (55.9 GiB) to fully utilize gpu memory. Current kv cache memory in use "
        "is 53.76 GiB.",
        K.MEMORY_BUDGET,
        {
            "free_gib": 78.5,
            "total_gib": 79.19,
            "gpu_memory_utilization": 0.9,
            "requested_gib": 71.27,
            "activation_peak_gib": 1.39,
            "cudagraph_gib": 0.52,
        },
    ),
    (
        "(VllmWorker TP0 pid=4301) INFO 07-01 10:00:00 [gpu_worker.py:669] Initial free memory 78.5 GiB, reserved "
        "40.0 GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling.",
        K.AVAILABLE_KV_MEMORY,
        {"available_kv_gib": 40.0},
    ),
    # the backend the selector chose, by VLLM_ATTENTION_BACKEND's name: 0.4.0, 0.6.6, 0.8.5 (V1) and 0.32
    (
        "INFO 07-01 10:00:00 selector.py:16] Using FlashAttention backend.",
        K.ATTENTION_BACKEND,
        {"message": "FLASH_ATTN"},
    ),
    ("INFO 07-01 10:00:00 selector.py:120] Using XFormers backend.", K.ATTENTION_BACKEND, {"message": "XFORMERS"}),
    (
        "INFO 07-01 10:00:00 [cuda.py:214] Using FlashInfer backend on V1 engine.",
        K.ATTENTION_BACKEND,
        {"message": "FLASHINFER"},
    ),
    (
        "INFO 07-01 10:00:00 [cuda.py:206] Using Triton MLA backend on V1 engine.",
        K.ATTENTION_BACKEND,
        {"message": "TRITON_MLA"},
    ),
    (
        "(EngineCore pid=1) INFO 07-01 10:00:00 [cuda.py:506] Using FLASH_ATTN attention backend out of potential "
        "backends: ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].",
        K.ATTENTION_BACKEND,
        {"message": "FLASH_ATTN"},
    ),
    # V0's fallback without "-2": 0.4.0's selector, the FP8 KV line of 0.8-0.10
    (
        "INFO 07-01 10:00:00 [cuda.py:273] Cannot use FlashAttention backend for FP8 KV cache.",
        K.ATTENTION_FALLBACK,
        {"message": "for FP8 KV cache"},
    ),
    (
        "INFO 07-01 10:00:00 selector.py:45] Cannot use FlashAttention because the package is not found. Please "
        "install it for better performance.",
        K.ATTENTION_FALLBACK,
        {"message": "because the package is not found"},
    ),
]


def test_v0s_swapped_requests_are_preemptions_when_nothing_else_counts_them():
    """engine/metrics.py (0.2-0.10): `Swapped: N reqs` are requests preempted by swapping their blocks to CPU."""
    from rules.facts import Facts
    from rules.signals import preemption_rate

    line = (
        "INFO 07-01 10:00:00 metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 812.5 "
        "tokens/s, Running: 60 reqs, Swapped: 12 reqs, Pending: 40 reqs, GPU KV cache usage: 99.1%, CPU KV cache "
        "usage: 38.2%."
    )
    stats = only_event(line)
    assert (stats.running, stats.swapped, stats.waiting) == (60, 12, 40)
    signal = preemption_rate(Facts(events=[stats]))
    assert (signal.value, signal.strong) == (12.0, False)
    none_swapped = only_event(line.replace("Swapped: 12", "Swapped: 0"))
    assert preemption_rate(Facts(events=[none_swapped])) is None


def test_v0s_prefix_hit_rate_line_joins_the_stats_line_before_it():
    """engine/metrics.py (0.5-0.10) prints the rate on the next line: one interval, as V1 prints it."""
    events = parse_lines(
        [
            "INFO 07-01 10:00:00 metrics.py:351] Avg prompt throughput: 1200.5 tokens/s, Avg generation throughput: "
            "300.1 tokens/s, Running: 12 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 45.2%, CPU KV "
            "cache usage: 0.0%.",
            "INFO 07-01 10:00:00 metrics.py:367] Prefix cache hit rate: GPU: 41.27%, CPU: 0.00%",
        ]
    ).events
    [stats] = events
    assert (stats.kind, stats.running, stats.prefix_hit_rate) == (K.STATS_LINE, 12, pytest.approx(0.4127))
    alone = only_event("INFO 07-01 10:00:00 metrics.py:367] Prefix cache hit rate: GPU: 5.00%, CPU: 0.00%")
    assert (alone.kind, alone.prefix_hit_rate, alone.running) == (K.STATS_LINE, pytest.approx(0.05), None)


@pytest.mark.parametrize(("line", "kind", "fields"), CASES, ids=[f"{c[1].value}-{i}" for i, c in enumerate(CASES)])
def test_each_version_wording_becomes_a_typed_event(line, kind, fields):
    event = only_event(line)
    assert event.kind == kind
    for name, expected in fields.items():
        actual = getattr(event, name)
        if isinstance(expected, float):
            assert actual == pytest.approx(expected), name
        else:
            assert actual == expected, name
    assert set(fields) - {"process"} <= set(FIELDS_BY_KIND[kind]), "fields outside the kind's contract"


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "(EngineCore_DP0 pid=77352) ",
        "(APIServer pid=716) (EngineCore_DP0 pid=1101) ",
        "(VllmWorker rank=0 pid=12) ",
        "(RayWorkerWrapper pid=3, ip=10.0.0.1) ",
    ],
)
def test_process_prefixes_and_file_locations_do_not_change_the_event(prefix):
    for location in ("[kv_cache_utils.py:1087]", "[kv_cache_utils.py:634]", "kv_cache_utils.py:12]"):
        event = only_event(f"{prefix}INFO 10-22 09:33:49 {location} GPU KV cache size: 54,048 tokens")
        assert event.kind == K.KV_CACHE_SIZE and event.kv_cache_tokens == 54048


def test_nested_prefix_keeps_the_innermost_process_and_the_level():
    event = only_event(
        "(APIServer pid=716) (EngineCore_DP0 pid=1101) ERROR 10-22 09:34:00 [core.py:708] EngineCore failed to start."
    )
    assert event.process == "EngineCore_DP0" and event.level == "ERROR" and event.timestamp == "10-22 09:34:00"


def test_repeated_startup_error_from_several_processes_is_kept_once():
    message = (
        "To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (3.18 GiB)."
    )
    lines = [
        f"(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] ValueError: {message}",
        f"ValueError: {message}",
        f"(APIServer pid=2) ValueError: {message}",
    ]
    assert len(parse_lines(lines).of_kind(K.MAX_MODEL_LEN_TOO_LARGE)) == 1


def test_stats_lines_are_all_kept_with_seconds_since_the_first_line():
    lines = [
        f"INFO 01-01 00:00:{10 * i:02d} [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
        f"Avg generation throughput: 1.0 tokens/s, Running: {i} reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 1.0%"
        for i in range(5)
    ]
    events = parse_lines(lines).of_kind(K.STATS_LINE)
    assert [e.running for e in events] == [0, 1, 2, 3, 4]
    assert [e.time_s for e in events] == [0.0, 10.0, 20.0, 30.0, 40.0]


def test_oom_during_cuda_graph_capture_is_told_apart_from_runtime_oom():
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity "
        "of 79.19 GiB of which 10.00 MiB is free."
    )
    during_capture = parse_lines(
        [
            "INFO 01-01 00:00:00 [gpu_model_runner.py:1] Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 10%",
            oom,
        ]
    )
    assert during_capture.of_kind(K.CUDA_OOM)[0].oom_phase == OomPhase.CUDAGRAPH_CAPTURE
    while_serving = parse_lines(["INFO:     Application startup complete.", oom])
    assert while_serving.of_kind(K.CUDA_OOM)[0].oom_phase == OomPhase.RUNTIME
    # an offline job: `generate` draws its bar only after LLM() returned, its engine started
    offline = parse_lines(["Processed prompts:  45%|████▌     | 450/1000 [01:02<01:16,  7.19it/s]", oom])
    assert offline.of_kind(K.CUDA_OOM)[0].oom_phase == OomPhase.RUNTIME


def test_non_default_args_line_becomes_vllm_serve_flags():
    event = only_event(
        "(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model_tag': "
        "'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': 16000, "
        "'enable_prefix_caching': False, 'gpu_memory_utilization': 0.95}"
    )
    assert event.kind == K.NON_DEFAULT_ARGS
    assert event.args == {
        "--model": "Qwen/Qwen3-8B",
        "--max-model-len": "16000",
        "--enable-prefix-caching": "false",
        "--gpu-memory-utilization": "0.95",
    }


def test_non_default_args_python_cannot_build_are_read_as_pairs_not_a_crash():
    # a value that parses as a set of lists (torch-style `{[1, 1]}`): ast.literal_eval raises TypeError on it
    event = only_event(
        "(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'm', 'x': {[1, 1]}}"
    )
    assert event.kind == K.NON_DEFAULT_ARGS and event.args.get("--model") == "m"


def test_old_namespace_args_keep_only_the_flags_triage_reads():
    event = only_event(
        "INFO 03-01 00:00:00 api_server.py:1] args: Namespace(host=None, port=8000, "
        "model='meta-llama/Llama-3.1-8B', max_model_len=8192, enforce_eager=False, "
        "tensor_parallel_size=2, allowed_origins=['*'], disable_log_requests=False)"
    )
    assert event.args == {
        "--model": "meta-llama/Llama-3.1-8B",
        "--max-model-len": "8192",
        "--tensor-parallel-size": "2",
    }


def test_a_truncated_log_still_yields_its_events():
    text = (FIXTURES / "log_v0_11_startup_failure.log").read_text()
    truncated = text[: text.index("ValueError: To serve") + 30]  # cut mid-line, before the numbers
    result = parse_lines(io.StringIO(truncated))
    assert result.of_kind(K.AVAILABLE_KV_MEMORY)[0].available_kv_gib == 3.18
    assert result.of_kind(K.ENGINE_CORE_FAILED)
    assert not result.of_kind(K.MAX_MODEL_LEN_TOO_LARGE)


def test_fixture_startup_failure_log_reads_in_order():
    result = read_log(str(FIXTURES / "log_v0_11_startup_failure.log"))
    kinds = [event.kind for event in result.events]
    assert kinds[:2] == [K.VERSION, K.NON_DEFAULT_ARGS]
    assert K.MAX_MODEL_LEN_TOO_LARGE in kinds and K.ENGINE_CORE_FAILED in kinds
    assert result.events[0].line_no == 2  # line 1 is the fixture's comment
    assert result.events[0].source_file.endswith(".log")


@pytest.mark.parametrize("content", ["", "\x00\x01\x02 binary\nhello world\nnot a log at all\n"])
def test_garbage_or_empty_text_is_one_clear_error(tmp_path, content):
    path = tmp_path / "server.log"
    path.write_text(content)
    with pytest.raises(LogReadError) as caught:
        read_log(str(path))
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_vllm_log_with_no_known_event_is_not_an_error():
    # (the listening line this test once used is read since 0.32's release lines were audited: it is an event now)
    result = parse_lines(["INFO 01-01 00:00:00 [api_server.py:1] Available routes are:"])
    assert result.events == [] and result.vllm_lines == 1


def test_the_listening_line_of_every_release_says_where_the_server_listens():
    lines = [
        "INFO 01-01 00:00:00 api_server.py:958] Starting vLLM API server on http://0.0.0.0:8000",
        "(APIServer pid=7) INFO 01-01 00:00:01 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8001",
        "(APIServer pid=7) INFO 01-01 00:00:02 [entry.py:140] Starting vLLM server on http://127.0.0.1:8002",
    ]
    events = parse_lines(lines).events
    assert [e.listen_address for e in events] == ["http://0.0.0.0:8000", "http://0.0.0.0:8001", "http://127.0.0.1:8002"]
    assert {e.kind for e in events} == {LogEventKind.SERVER_LISTENING}


def test_missing_log_file_is_a_user_error(tmp_path):
    with pytest.raises(LogReadError, match="cannot read"):
        read_log(str(tmp_path / "absent.log"))


def test_stdin_is_read_for_dash():
    code = (
        "from advisor.collect.logs import read_log; r = read_log('-'); "
        "print(r.source, [e.kind.value for e in r.events])"
    )
    line = "INFO 01-01 00:00:00 [x.py:1] Available KV cache memory: 1.5 GiB\n"
    proc = subprocess.run([sys.executable, "-c", code], input=line, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "stdin ['available_kv_memory']"


def test_keyword_prefilter_finds_exactly_what_trying_every_wording_finds():
    from advisor.collect.log_patterns import PATTERNS, candidates

    corpus = Path(__file__).parents[3] / "fixtures" / "vllm"
    lines = [case[0] for case in CASES] + [
        line for path in sorted(corpus.glob("*.log")) for line in path.read_text().splitlines()
    ]
    for line in lines:
        every = next((p.kind for p in PATTERNS if p.regex.search(line)), None)
        prefiltered = next((p.kind for p in candidates(line) if p.regex.search(line)), None)
        assert prefiltered == every, line


def test_the_prefix_tree_trigger_finds_a_line_exactly_when_some_key_is_in_it():
    """The tree drops keys that extend another; a line still triggers exactly when it holds any key."""
    from advisor.collect.log_patterns import _BY_KEY, trigger

    keys = list(_BY_KEY)
    tree, flat = trigger(keys), re.compile("|".join(re.escape(key) for key in keys))
    corpus = Path(__file__).parents[3] / "fixtures" / "vllm"
    lines = [case[0] for case in CASES] + [
        line for path in sorted(corpus.glob("*.log")) for line in path.read_text().splitlines()
    ]
    lines += [f"before {key} after" for key in keys] + [key[:-1] for key in keys if len(key) > 1]
    for line in lines:
        assert (tree.search(line) is None) == (flat.search(line) is None), line
    small = trigger(["CUDA out of memory", "CUDA out of memory occurred", "CUDA error"])
    assert small.pattern == "CUDA\\ (?:error|out\\ of\\ memory)"


@pytest.mark.parametrize(
    "shipped",
    [
        "2025-10-22T09:33:49.123456789Z (EngineCore_DP0 pid=7) INFO 10-22 09:33:49 [kv_cache_utils.py:1] {msg}",
        "\x1b[32mINFO\x1b[0m 10-22 09:33:49 \x1b[90m[kv_cache_utils.py:1]\x1b[0m {msg}",
        "2025-10-22T09:33:49+02:00 INFO 10-22 09:33:49 [kv_cache_utils.py:1] {msg}",
    ],
)
def test_kubectl_timestamps_and_terminal_colours_do_not_hide_the_line(shipped):
    event = only_event(shipped.format(msg="GPU KV cache size: 54,048 tokens"))
    assert event.kv_cache_tokens == 54048 and event.level == "INFO" and event.timestamp == "10-22 09:33:49"


TWO_STARTS = """\
(APIServer pid=12) INFO 08-20 10:00:00 [api_server.py:1395] vLLM API server version 0.10.1
(APIServer pid=12) INFO 08-20 10:00:00 [utils.py:326] non-default args: {'model': 'm', 'max_num_seqs': 512, 'enable_prefix_caching': True}
(EngineCore_0 pid=40) ERROR 08-20 10:02:00 [core.py:700] EngineCore failed to start.
(APIServer pid=77) INFO 08-20 10:05:00 [api_server.py:1395] vLLM API server version 0.10.1
(APIServer pid=77) INFO 08-20 10:05:00 [utils.py:326] non-default args: {'model': 'm', 'max_num_seqs': 64}
"""


def test_a_log_with_two_server_starts_is_read_as_the_last_start_only():
    """A restart appended to the same file: the second start's flags alone, never merged with the first's."""
    from advisor.collect.facts import effective_command, server_config

    result = parse_lines(TWO_STARTS.splitlines())
    assert result.server_starts == 2 and result.last_start_line == 4
    assert [e.line_no for e in result.events][0] == 4
    assert not result.of_kind(K.ENGINE_CORE_FAILED)  # the first start's failure is not this server's
    assert "2 server starts: read the last, from line 4" in result.describe()
    config = server_config(effective_command(None, result.events, None), result.events, None)
    assert config.max_num_seqs == 64 and config.enable_prefix_caching is None


def test_metric_figures_a_person_quoted_are_read_and_vllms_own_lines_are_not():
    log = parse_lines(
        [
            "```",
            "vllm:prefix_cache_queries_total   442,227",
            "- `vllm:num_requests_running == 0` while `vllm:num_requests_waiting` climbs",
            "| vllm:kv_cache_usage_perc | 45% |",
            'vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 5',
            "the prefix_hit_rate is 3 and the num_preemptions_total_x is 9",  # not names vLLM exposes
            "INFO 01-01 00:00:00 [loggers.py:1] vllm:num_requests_waiting 7",  # vLLM's own line
        ]
    )
    samples = {name: (labels, value) for _, name, labels, value in log.quoted_metrics.all()}
    assert samples == {
        "vllm:prefix_cache_queries_total": ({}, 442227.0),
        "vllm:num_requests_running": ({}, 0.0),
        "vllm:num_requests_waiting": ({}, 1.0),  # "climbs": at least 1
        "vllm:kv_cache_usage_perc": ({}, 0.45),
        "vllm:time_to_first_token_seconds_bucket": ({"le": "0.1", "model_name": "m"}, 5.0),
    }
    assert "5 metric figure(s) quoted" in log.describe()


def test_a_warning_wrapped_mid_sentence_is_read_as_one_line():
    log = parse_lines(
        [
            "WARNING [kv_cache_coordinator.py:611] Disabling fine-grained prefix-cache hits",
            "because these KV cache managers require block-aligned lookups: KpoolTailManager",
        ]
    )
    [event] = log.events
    assert event.catalog is not None and event.catalog.captured == {
        "unsupported_partial_hit_managers": "KpoolTailManager"
    }


def test_a_quoted_metric_name_in_capitals_is_read_as_vllm_spells_it():
    log = parse_lines(["The Num_Requests_Running is 0 and VLLM:NUM_REQUESTS_WAITING climbs"])
    assert {name for _, name, _, _ in log.quoted_metrics.all()} == {
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
    }


def test_torchruns_rank_prefix_is_read_through_wherever_a_viewer_put_it():
    # modelscope/ms-swift#6670: a web log viewer's table cells and stamp before torchrun's `[rank1]:`
    lines = [
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/lora/ops/triton_ops/lora_shrink_op.py", line 149, in f',
        "  |   | 2025-11-19 18:38:40.880777 master-0 >> [rank1]:     assert token_lora_mapping.size(0) == M |",
        "  |   | 2025-11-19 18:38:40.880777 master-0 >> [rank1]: AssertionError",
    ]
    [event] = parse_lines(lines).events
    assert (event.exception, event.code.strip()) == ("AssertionError", "assert token_lora_mapping.size(0) == M |")


def test_rays_deduplication_count_is_not_part_of_the_line_it_follows():
    # vllm-project/vllm#7662's form: a line Ray's workers printed alike, shown once with Ray's count appended
    said = "ValueError: Model architectures ['Foo'] are not supported for now. Supported architectures: ['Bar']"
    plain = parse_lines([f"(RayWorkerWrapper pid=11033) ERROR 08-19 16:07:35 worker_base.py:438] {said}"]).events
    counted = parse_lines(
        [f"(RayWorkerWrapper pid=11033) ERROR 08-19 16:07:35 worker_base.py:438] {said} [repeated 2x across cluster]"]
    ).events
    assert [(e.kind, e.message) for e in counted] == [(e.kind, e.message) for e in plain]
    assert "repeated" not in (counted[0].message or "")


@pytest.mark.parametrize(
    "line",
    [
        "INFO 07-01 10:00:00 [cpu.py:312] Using CPU SSM state storage for the CPU accelerated GDN backend.",
        "INFO 07-01 10:00:00 [arg_utils.py:1] Using mp-based distributed executor backend.",
        "INFO 07-01 10:00:00 [model.py:1] Using max model len 4096",
    ],
)
def test_other_using_lines_are_not_an_attention_backend(line):
    assert all(e.kind != K.ATTENTION_BACKEND for e in parse_lines([line]).events)


def test_v1s_first_queue_line_is_a_stats_line_of_its_own():
    lines = [
        "INFO 07-01 10:00:00 core.py:315] RUNNING: 42 | WAITING: 7",
        "INFO 07-01 10:00:05 core.py:315] RUNNING: 40 | WAITING: 0",
    ]
    stats = parse_lines(lines).events
    assert [(e.kind, e.running, e.waiting) for e in stats] == [
        (LogEventKind.STATS_LINE, 42, 7),
        (LogEventKind.STATS_LINE, 40, 0),
    ]


def test_a_stats_line_pasted_from_its_queue_on_is_still_a_stats_line():
    # vllm#39863, verbatim (V1), and V0's order; a count without the KV usage after it is not read as one
    v1, v0 = (
        "Running: 0 reqs, Waiting: 3 reqs, GPU KV cache usage: 0.0%",
        ("Running: 2 reqs, Swapped: 1 reqs, Pending: 5 reqs, GPU KV cache usage: 99.1%, CPU KV cache usage: 3.0%."),
    )
    events = parse_lines([v1, v0]).events
    assert [(e.kind, e.running, e.waiting, e.swapped, e.kv_usage) for e in events] == [
        (LogEventKind.STATS_LINE, 0, 3, None, 0.0),
        (LogEventKind.STATS_LINE, 2, 5, 1, 0.991),
    ]
    assert all(e.kind != K.STATS_LINE for e in parse_lines(["Running: 3 reqs, Waiting: 1 reqs"]).events)


def test_graph_capture_time_alone_keeps_the_graph_memory_read_before_it():
    lines = [
        "INFO 07-01 10:00:00 [gpu_model_runner.py:2708] Graph capturing finished in 18 secs, took 0.52 GiB",
        "INFO 07-01 10:00:01 model_runner.py:1300] Graph capturing finished in 12 secs.",
    ]
    events = parse_lines(lines).events
    assert [e.capture_s for e in events] == [18, 12]
    assert memory_from_log(events).cudagraph_gib == 0.52


def test_an_errors_words_logged_before_its_traceback_take_the_tracebacks_frames():
    header = "ERROR 05-26 00:17:47 [engine.py:448] "
    words = "'ColumnParallelLinear' object has no attribute 'input_scale'"
    traceback = [
        "Traceback (most recent call last):",
        '  File "/x/vllm/engine/multiprocessing/engine.py", line 128, in from_vllm_config',
        "    return cls(",
        '  File "/x/vllm/engine/multiprocessing/engine.py", line 82, in __init__',
        "    self.engine = LLMEngine(*args, **kwargs)",
        '  File "/x/vllm/model_executor/models/mllama.py", line 900, in forward',
        "    x = layer.input_scale",
    ]
    cut = parse_lines([header + line for line in [words, *traceback]])
    [error] = cut.events  # the cut traceback is that error's, not a second event
    assert (error.kind, error.exception, error.phase) == (LogEventKind.UNPLACED_ERROR, "AttributeError", "startup")
    assert error.code_file.endswith("vllm/model_executor/models/mllama.py") and error.line_no == 1
    assert "the line before it names the error" in cut.describe()
    whole = parse_lines([header + line for line in [words, *traceback, f"AttributeError: {words}"]])
    [error] = whole.events
    assert error.code_file.endswith("mllama.py") and error.code == "x = layer.input_scale"
    apart = parse_lines([header + words, "INFO 05-26 00:17:48 [core.py:1] something else", *traceback])
    assert [e.kind for e in apart.events] == [LogEventKind.UNPLACED_ERROR, LogEventKind.CUT_TRACEBACK]


def test_pythons_words_a_program_printed_after_its_own_error_word_are_that_exception():
    # unslothai/unsloth-zoo#356, verbatim: Unsloth caught vLLM 0.11.2's ImportError and printed its words alone
    unsloth = (
        "`Unsloth: FAILED getting compilation_config with error = cannot import name 'CompilationLevel' from "
        "'vllm.config' (/root/sky_workdir/.venv/lib/python3.10/site-packages/vllm/config/__init__.py)`"
    )
    error = only_event(unsloth)
    assert (error.kind, error.exception) == (LogEventKind.UNPLACED_ERROR, "ImportError")
    assert error.message.startswith("ImportError: cannot import name 'CompilationLevel' from 'vllm.config'")
    assert parse_lines(["the error: 'abc'"]).events == []  # a quoted word after it is no KeyError
    # only a line without a level: a logged line is a message the catalog reads (vLLM's `Batch read error: {e}`), and a
    # warning or a note is not an error however it ends
    logged = only_event("ERROR 01-01 00:00:00 [x.py:1] Batch read error: too many values to unpack (expected 2)")
    assert logged.kind == LogEventKind.VLLM_MESSAGE
    for line in (
        "WARNING: failed to import flash_attn, error: No module named 'flash_attn'",
        "UserWarning: optional, error: No module named 'flash_attn'",
    ):
        assert parse_lines([line]).events == [], line


def test_pythons_logging_default_format_names_its_level():
    # waybarrios/vllm-mlx#87 and #516, verbatim: `LEVEL:logger:message`, logging.basicConfig's format
    cut = parse_lines(["  ERROR:vllm_mlx.engine_core:Engine loop error: ArraysCache.__init__()"]).events
    assert [(e.kind, e.message) for e in cut] == [
        (LogEventKind.UNPLACED_LINE, "Engine loop error: ArraysCache.__init__()")
    ]
    mllm = only_event(
        "ERROR:vllm_mlx.models.mllm:Failed to load MLLM: Model type qwen3 not supported. Error: No module named "
        "'mlx_vlm.speculative.drafters.qwen3'"
    )
    assert (mllm.kind, mllm.exception) == (LogEventKind.UNPLACED_ERROR, "ModuleNotFoundError")
    assert parse_lines(["WARNING:root:some thing happened"]).events == []  # a warning that says nothing failed
    for line in ("ERROR:https://huggingface.co/api/models failed", "ERROR:C:\\Users\\me\\main.py failed"):
        assert all(e.component != "https" and e.component != "C" for e in parse_lines([line]).events), line


def test_an_error_before_the_engine_core_failed_to_start_was_raised_while_starting_in_its_plugins_component():
    # baidu/vLLM-Kunlun#477: the Kunlun plugin's attention kernel refusing the warm-up's batch
    lines = [
        'File "vllm_kunlun/v1/attention/backends/kunlun_attn.py", line 928, in forward',
        "  kunlun_ops.speculative_attention(",
        "ValueError: Check 0 == ret failed, left operand=0, speculative_attention failed",
        "RuntimeError: Engine core initialization failed.",
    ]
    error = parse_lines(lines).events[0]
    assert (error.kind, error.phase) == (LogEventKind.UNPLACED_ERROR, "startup")
    assert error.component == "attention backend (vllm_kunlun)"


def test_the_plugin_whose_code_raised_is_named_and_vllms_own_frames_name_none():
    plugin = ['File "/x/vllm_ascend/worker/model_runner_v1.py", line 1, in f', "  g()", "ValueError: npu refused"]
    assert parse_lines(plugin).events[0].plugin == "vllm_ascend"
    # vLLM's own frame under the plugin's: vLLM's code raised it
    own = [*plugin[:2], 'File "/x/vllm/v1/sample/sampler.py", line 9, in h', "  k()", "ValueError: vllm refused"]
    assert parse_lines(own).events[0].plugin is None
    # no traceback: the header's file says whose logger wrote the error line
    logged = "ERROR 05-29 08:37:38 [vllm_omni/engine/async_omni_engine.py:1148] TimeoutError: no READY after 300s"
    assert parse_lines([logged]).events[0].plugin == "vllm_omni"
    assert parse_lines([logged.replace("vllm_omni/", "v1/")]).events[0].plugin is None
