"""What a server prints while it starts normally: its version, its arguments, its memory sizing.

The figures a start reports (weights, KV cache memory and tokens, CUDA-graph memory, the
concurrency vLLM computed, how long the engine took) fill `Facts` even when nothing fails.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import NUM, Fields, Pattern, to_float, to_gib, to_int, wording
from rules.events import LogEventKind as K


def _clock_s(text: str) -> float:
    """tqdm's clock, `MM:SS` or `H:MM:SS`, in seconds."""
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + int(part)
    return seconds


# The selector's printed names -> VLLM_ATTENTION_BACKEND's values (0.32's `_Backend`/`AttentionBackendEnum` names)
_BACKEND_NAMES = {
    "flash": "FLASH_ATTN",
    "flashattention": "FLASH_ATTN",
    "flashinfer": "FLASHINFER",
    "xformers": "XFORMERS",
    "triton": "TRITON_ATTN",
    "tritonmla": "TRITON_MLA",
    "flashmla": "FLASHMLA",
    "cutlassmla": "CUTLASS_MLA",
    "flexattention": "FLEX_ATTENTION",
    "torchsdpa": "TORCH_SDPA",
    "rocmflash": "ROCM_FLASH",
    "rocm": "ROCM_ATTN",
    "blocksparseflash": "BLOCK_SPARSE_FLASH_ATTN",
}


def attention_backend_name(printed: str) -> str:
    """`Flash Attention` -> FLASH_ATTN; an enum name as it is; a name this table lacks, upper-cased."""
    if printed.isupper() or "_" in printed:
        return printed
    compact = printed.lower().replace(" ", "")  # "Flash Attention" and "FlashAttention" are one name
    return _BACKEND_NAMES.get(compact.removesuffix("attention")) or _BACKEND_NAMES.get(compact) or printed.upper()


def _shard_progress(match: re.Match[str]) -> Fields:
    elapsed = _clock_s(match["elapsed"])
    return {"message": match["done"], "load_seconds": elapsed, "load_expected_s": elapsed + _clock_s(match["left"])}


PATTERNS: tuple[Pattern, ...] = (
    wording(
        ("vLLM server version",),
        K.VERSION,
        # "the embedded …": how servops 0.1's bundled engine named its default model
        r"vLLM server version (?P<v>\S+?),? serving model (?:the embedded )?(?P<m>\S+)",
        lambda m: {"version": m["v"], "model": m["m"]},
    ),
    wording(
        ("vLLM API server version",),
        K.VERSION,
        r"vLLM API server version (?P<v>[^\s,]+)",
        lambda m: {"version": m["v"]},
    ),
    wording(  # the ASCII-art banner of 0.32 (entrypoints/utils api_utils.py) replaced "vLLM API server version X"
        ("█  version ",),
        K.VERSION,
        r"█\s+version (?P<v>\d[\w.+-]*)\s*$",
        lambda m: {"version": m["v"]},
    ),
    wording(  # the engine's config line: 0.2-0.3 without a version, 0.4-0.6 "an LLM engine (v…)", then "a V0 …"
        # beside "a V1 …" (vllm/engine/llm_engine.py, vllm/v1/engine/core.py); its values fill the config
        ("Initializing a V1 LLM engine", "Initializing a V0 LLM engine", "Initializing an LLM engine"),
        K.VERSION,
        r"Initializing an? (?:V[01] )?LLM engine(?: \(v(?P<v>[^)]+)\))? with config: model='(?P<m>[^']*)'",
        lambda m: {"version": m["v"], "model": m["m"]},
    ),
    wording(("non-default args: ",), K.NON_DEFAULT_ARGS, r"non-default args: (?P<args>\{.*\})\s*$"),
    wording(("args: Namespace(",), K.NON_DEFAULT_ARGS, r"\bargs: (?P<args>Namespace\(.*\))\s*$"),
    wording(
        ("Chunked prefill is enabled",),
        K.CHUNKED_PREFILL,
        r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>[\d,]+)",
        lambda m: {"max_num_batched_tokens": to_int(m["n"])},
    ),
    wording(  # platforms/__init__.py: an out-of-tree platform (vllm-metal, vllm-ascend …) runs the model
        ("Platform plugin",),
        K.PLATFORM_PLUGIN,
        r"Platform plugin (?P<name>\S+) is activated",
        lambda m: {"message": m["name"]},
    ),
    wording(  # vLLM's CPU backend (utils/ompmultiprocessing.py): one line per worker of the binding block
        (", core ids=[",),
        K.CPU_THREADS_BIND,
        r"local_rank=(?P<rank>\d+), core ids=\[(?P<ids>[\d, ]*)\]",
        lambda m: {"cpu_cores": len([i for i in m["ids"].split(",") if i.strip()])},
    ),
    # --- startup sizing ---------------------------------------------------------------------
    wording(
        ("Model loading took",),
        K.MODEL_LOADING,
        rf"Model loading took (?P<gib>{NUM}) (?P<unit>GiB|GB)(?: memory)? and (?P<s>{NUM}) seconds",
        lambda m: {"weights_gib": to_gib(m["gib"], m["unit"]), "load_seconds": to_float(m["s"])},
    ),
    wording(  # vLLM 0.32's weight loader (model_loader/weight_utils.py): the checkpoint's filesystem, size and the RAM
        ("Filesystem type for checkpoints",),
        K.CHECKPOINT_FILESYSTEM,
        rf"Filesystem type for checkpoints: (?P<fs>[\w-]+)\. Checkpoint size: (?P<size>{NUM}) GiB\. Available RAM: "
        rf"(?P<ram>{NUM}) GiB",
        lambda m: {"message": m["fs"], "weights_gib": to_float(m["size"]), "free_gib": to_float(m["ram"])},
    ),
    wording(  # vllm/worker/model_runner.py 0.4-0.7 and V1's first runner: GiB, printed as "GB"
        ("Loading model weights took",),
        K.MODEL_LOADING,
        rf"Loading model weights took (?P<gib>{NUM}) (?P<unit>GiB|GB)\b",
        lambda m: {"weights_gib": to_gib(m["gib"], m["unit"])},
    ),
    wording(
        ("Available KV cache memory",),
        K.AVAILABLE_KV_MEMORY,
        rf"Available KV cache memory: (?P<gib>{NUM}) GiB",
        lambda m: {"available_kv_gib": to_float(m["gib"])},
    ),
    wording(  # 0.34's extensible KV cache (v1/worker/extensible_kv_cache.py): the pool measured after warmup and
        # CUDA graph capture, logged after "Available KV cache memory" (which is then the reservation's estimate)
        ("Extended KV cache to",),
        K.KV_CACHE_EXTENDED,
        rf"Extended KV cache to (?P<blocks>[\d,]+) blocks \((?P<gib>{NUM}) GiB\)",
        lambda m: {"num_gpu_blocks": to_int(m["blocks"]), "available_kv_gib": to_float(m["gib"])},
    ),
    wording(  # 0.34: the extensible KV cache turned off (v1/executor/abstract.py; config/vllm.py without IMEX)
        ("Disabling the extensible KV cache", "Extensible KV cache off"),
        K.EXTENSIBLE_KV_OFF,
        r"(?:Disabling the extensible KV cache: |Extensible KV cache off: )(?P<why>.+?)\.?\s*$",
        lambda m: {"message": m["why"]},
    ),
    wording(  # V0's memory profile (vllm/worker/worker.py 0.6-0.10), three lines under one prefix: the budget ...
        ("the current vLLM instance can use total_gpu_memory",),
        K.MEMORY_BUDGET,
        rf"can use total_gpu_memory \((?P<total>{NUM}) ?GiB\) x gpu_memory_utilization \((?P<util>{NUM})\) = "
        rf"(?P<req>{NUM}) ?GiB",
        lambda m: {
            "total_gib": to_float(m["total"]),
            "gpu_memory_utilization": to_float(m["util"]),
            "requested_gib": to_float(m["req"]),
        },
    ),
    wording(  # ... and what it holds: V0's form of V1's "Available KV cache memory", with the terms before it
        ("the rest of the memory reserved for KV Cache is",),
        K.AVAILABLE_KV_MEMORY,
        rf"model weights take (?P<w>{NUM}) ?GiB; non_torch_memory takes (?P<nt>{NUM}) ?GiB; PyTorch activation peak "
        rf"memory takes (?P<act>{NUM}) ?GiB; the rest of the memory reserved for KV Cache is (?P<kv>{NUM}) ?GiB",
        lambda m: {
            "weights_gib": to_float(m["w"]),
            "non_torch_gib": to_float(m["nt"]),
            "activation_peak_gib": to_float(m["act"]),
            "available_kv_gib": to_float(m["kv"]),
        },
    ),
    wording(  # v1/worker/gpu_worker.py (0.32): the budget after CUDA graphs were captured, with every term of it
        ("Desired GPU memory utilization is",),
        K.MEMORY_BUDGET,
        rf"Free memory on device \((?P<free>{NUM})/(?P<total>{NUM}) GiB\) on startup\. Desired GPU memory "
        rf"utilization is \((?P<util>{NUM}), (?P<req>{NUM}) GiB\)\.(?: Actual usage is {NUM} GiB for consumed memory "
        rf"\(weights \+ non-torch\), (?P<act>{NUM}) GiB for peak activation, and (?P<graphs>{NUM}) GiB for CUDAGraph)?",
        lambda m: {
            "free_gib": to_float(m["free"]),
            "total_gib": to_float(m["total"]),
            "gpu_memory_utilization": to_float(m["util"]),
            "requested_gib": to_float(m["req"]),
            "activation_peak_gib": to_float(m["act"]),
            "cudagraph_gib": to_float(m["graphs"]),
        },
    ),
    wording(  # v1/worker/gpu_worker.py with --kv-cache-memory: no profile, so no "Available KV cache memory" line
        ("memory for KV Cache as specified by kv_cache_memory_bytes",),
        K.AVAILABLE_KV_MEMORY,
        rf"reserved (?P<gib>{NUM}) GiB memory for KV Cache as specified by kv_cache_memory_bytes",
        lambda m: {"available_kv_gib": to_float(m["gib"])},
    ),
    wording(  # vLLM's CPU backend (v1/worker/cpu_worker.py): the KV space it was given or derived, per NUMA node
        ("GiB for KV cache on node",),
        K.AVAILABLE_KV_MEMORY,
        rf"(?:Explicitly|Auto) set \((?P<gib>{NUM})/{NUM}\) GiB for KV cache on node \d+",
        lambda m: {"available_kv_gib": to_float(m["gib"])},
    ),
    wording(
        (" KV cache size: ",),
        K.KV_CACHE_SIZE,
        r"(?P<dev>[A-Za-z][\w+ ]*?) KV cache size: (?P<tok>[\d,]+) tokens"
        r"(?:, Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x)?",
        lambda m: {
            "device": m["dev"].strip(),
            "kv_cache_tokens": to_int(m["tok"]),
            "max_model_len": to_int(m["len"]),
            "max_concurrency": to_float(m["conc"]),
        },
    ),
    wording(
        ("Maximum concurrency for",),
        K.MAX_CONCURRENCY,
        r"Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x",
        lambda m: {"max_model_len": to_int(m["len"]), "max_concurrency": to_float(m["conc"])},
    ),
    wording(  # V0's executor (`# GPU blocks: N, # CPU blocks: M`); alone in 0.6-0.7's V1 (`# GPU blocks: N`) and on
        # V0's CPU backend (`# CPU blocks: N`, the KV cache itself there)
        (" CPU blocks: ", "# GPU blocks: ", "# CPU blocks: "),
        K.V0_GPU_BLOCKS,
        r"# (?P<dev>\w+) blocks: (?P<n>\d+)(?:, # CPU blocks: \d+)?",
        lambda m: {"device": m["dev"], "num_gpu_blocks": int(m["n"])},
    ),
    wording(  # the API server's own count (v1/metrics/loggers.py 0.10-0.33): a log of that process alone has it
        ("vllm cache_config_info with initialization after num_gpu_blocks is",),
        K.V0_GPU_BLOCKS,
        r"vllm cache_config_info with initialization after num_gpu_blocks is: (?P<n>\d+)",
        lambda m: {"num_gpu_blocks": int(m["n"])},
    ),
    wording(  # the KV-cache planner grouping a hybrid model's layers (v1/core/kv_cache_utils.py 0.9-0.32,
        # kv_cache_planning.py 0.33 on): padding layers added so each group has as many layers
        ("padding layers, may waste at most",),
        K.KV_PADDING_LAYERS,
        rf"Add (?P<n>\d+) padding layers, may waste at most (?P<pct>{NUM})% KV cache memory",
        lambda m: {"padding_layers": int(m["n"]), "waste_share": to_float(m["pct"]) / 100},
    ),
    wording(  # --num-gpu-blocks-override replacing the profile's block count (V0's engine/llm_engine.py, V1's
        # v1/core/kv_cache_utils.py to 0.32; INFO)
        ("with num_gpu_blocks_override=",),
        K.KV_BLOCKS_OVERRIDDEN,
        r"Overriding num_gpu_blocks=(?P<profiled>\d+) with num_gpu_blocks_override=(?P<override>\d+)",
        lambda m: {"num_gpu_blocks": int(m["profiled"]), "num_gpu_blocks_override": int(m["override"])},
    ),
    wording(  # worker/model_runner.py: "… in 12 secs." (0.2.7 to 0.5.5), "…, took 0.52 GiB" added from 0.6
        ("Graph capturing finished",),
        K.CUDA_GRAPH_MEMORY,
        rf"Graph capturing finished in (?P<s>{NUM}) secs?(?:, took (?P<gib>{NUM}) GiB)?",
        lambda m: {"cudagraph_gib": to_float(m["gib"]), "capture_s": to_float(m["s"])},
    ),
    wording(  # v1/worker/gpu_model_runner.py (0.32): the profile's estimate, printed before the graphs are captured
        ("Estimated CUDA graph memory",),
        K.CUDA_GRAPH_MEMORY,
        rf"Estimated CUDA graph memory: (?P<est>{NUM}) GiB total",
        lambda m: {"cudagraph_estimated_gib": to_float(m["est"])},
    ),
    wording(
        ("CUDA graph pool memory",),
        K.CUDA_GRAPH_MEMORY,
        rf"CUDA graph pool memory: (?P<gib>{NUM}) GiB \(actual\)(?:, (?P<est>{NUM}) GiB \(estimated\))?",
        lambda m: {"cudagraph_gib": to_float(m["gib"]), "cudagraph_estimated_gib": to_float(m["est"])},
    ),
    wording(
        ("CUDA graph memory profiling is enabled",),
        K.CUDAGRAPH_PROFILING,
        rf"CUDA graph memory profiling is enabled.*?current --gpu-memory-utilization=(?P<cur>{NUM}) is equivalent "
        rf"to --gpu-memory-utilization=(?P<eq>{NUM})",
        lambda m: {
            "cudagraph_profiling": True,
            "gpu_memory_utilization": to_float(m["cur"]),
            "equivalent_utilization": to_float(m["eq"]),
        },
    ),
    wording(
        ("CUDA graph memory profiling is disabled",),
        K.CUDAGRAPH_PROFILING,
        r"CUDA graph memory profiling is disabled",
        lambda m: {"cudagraph_profiling": False},
    ),
    wording(
        ("Auto-fit max_model_len",),
        K.AUTO_FIT,
        r"Auto-fit max_model_len: reduced from (?P<a>[\d,]+) to (?P<b>[\d,]+) to fit in available KV cache memory"
        rf"(?: \((?P<gib>{NUM}) ?GiB\))?",
        lambda m: {
            "max_model_len": to_int(m["a"]),
            "estimated_max_model_len": to_int(m["b"]),
            "available_kv_gib": to_float(m["gib"]),
        },
    ),
    wording(  # the vLLM of mid-2024 (PR #5908) running Gemma 2's sliding-window layers globally, capped at the window
        ("capping the max length to the sliding window size",),
        K.SLIDING_WINDOW_CAPPED,
        r"capping the max length to the sliding window size \((?P<n>[\d,]+)\)",
        lambda m: {"max_model_len": to_int(m["n"])},
    ),
    wording(  # platforms/interface.py (0.32; models/config.py before): a hybrid model's block fits a Mamba page
        ("Setting attention block size to",),
        K.ATTENTION_BLOCK_SIZE,
        r"Setting attention block size to (?P<n>[\d,]+) tokens(?P<mamba> to ensure that attention page size is "
        r">= mamba page size)?",
        lambda m: {"block_size": to_int(m["n"]), "mamba_aligned": bool(m["mamba"])},
    ),
    wording(  # attention/selector.py (0.4-0.6), platforms/cuda.py (0.7-0.10): V0 fell back from FlashAttention to
        # XFormers; 0.4.0 and the FP8 KV line of 0.8-0.10 say "FlashAttention" without "-2"
        ("Cannot use FlashAttention",),
        K.ATTENTION_FALLBACK,
        r"Cannot use FlashAttention(?:-2)?(?: backend)? (?P<why>(?:for|due to|because) .*?)\.?"
        r"(?= `pip install| Make sure| Please install|\s*$)",
        lambda m: {"message": m["why"]},
    ),
    wording(  # the attention backend the selector chose (attention/selector.py 0.4-0.6, platforms/cuda.py 0.7-0.33),
        # by VLLM_ATTENTION_BACKEND's name for it: "Using Flash Attention backend on V1 engine." is FLASH_ATTN
        (" backend",),
        K.ATTENTION_BACKEND,
        # ("Using Transformers backend." is the model's implementation, not attention's)
        r"^Using (?:(?P<enum>[A-Z][A-Z0-9_]+) attention backend out of potential backends|(?!Transformers )"
        r"(?P<name>[A-Z]\w*(?: [A-Z]\w*){0,2}?) (?:[Aa]ttention )?backend(?: on V1 engine)?(?:\.|\s*$))",
        lambda m: {"message": attention_backend_name(m["enum"] or m["name"])},
    ),
    wording(  # model_loader's tqdm bar over the checkpoint's shards (safetensors or .pt/.bin)
        ("checkpoint shards:",),
        K.WEIGHT_LOAD_PROGRESS,
        r"Loading \w+ checkpoint shards:\s*\d+% Completed \| (?P<done>\d+/\d+) \[(?P<elapsed>[\d:]+)<(?P<left>[\d:]+)",
        _shard_progress,
    ),
    wording(  # Python's multiprocessing names the process whose target raised, before its traceback
        ("Process ApiServer_",),
        K.API_SERVER_PROCESS_FAILED,
        r"^Process (?P<name>ApiServer_\d+):\s*$",
        lambda m: {"message": m["name"]},
    ),
    wording(  # v1/engine/core_client.py: the API server's wait for the engine cores' ready message ran out
        ("Timed out waiting for engine", "Timed out waiting for new engine"),
        K.ENGINE_READY_TIMEOUT,
        r"Timed out waiting for (?:new )?engines? (?:to send ?initial message|core processes to start)"
        r"(?:.*?Waited (?P<s>\d+)s\b)?",
        lambda m: {"message": m.group(0), "timeout_ms": int(m["s"]) * 1000 if m["s"] else None},
    ),
    wording(  # v1/engine/core.py: the engine finished starting ("took 67.93 s" in 0.32, "seconds" before)
        ("init engine (profile, create kv cache, warmup model) took",),
        K.ENGINE_READY,
        # a paste may bold the figure (`took **34.11 seconds**`, vllm#20264)
        rf"init engine \(profile, create kv cache, warmup model\) took \**(?P<s>{NUM})\** ?\**s",
        lambda m: {"init_seconds": to_float(m["s"])},
    ),
    wording(  # vllm/compilation/monitor.py (V1): the whole of torch.compile's time at start-up
        ("torch.compile takes",),
        K.COMPILE_TOTAL,
        rf"torch\.compile takes (?P<s>{NUM}) s in total",
        lambda m: {"init_seconds": to_float(m["s"])},
    ),
    wording(  # the API server listens: openai/api_server.py "Starting vLLM API server on http%s://%s:%d" (0.7.3 to
        # 0.9.0), "Starting vLLM API server %d on %s" (0.9.1 to 0.17, one per API server process), "Starting vLLM
        # server on %s" (0.18 on; launchers/api_server/entry.py from 0.31)
        ("Starting vLLM API server", "Starting vLLM server on"),
        K.SERVER_LISTENING,
        r"Starting vLLM (?:API )?server (?:(?P<n>\d+) )?on (?P<url>\S+)",
        lambda m: {"listen_address": m["url"].rstrip(".")},
    ),
    wording(  # v1/engine/core_client.py (0.8.5): the API server got the engine core's ready message
        ("Core engine process",),
        K.ENGINE_READY,
        r"Core engine process \d+ ready",
    ),
    wording(  # uvicorn, under every release: the HTTP server runs (vLLM's routes answer from here)
        ("Application startup complete",),
        K.SERVER_LISTENING,
        r"^(?:INFO:\s+)?Application startup complete",
    ),
)
