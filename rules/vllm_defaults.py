"""vLLM's defaults for the flags a launch leaves out, by version and device: the one table.

Why one pure module: the advisor's memory model (advisor/catalog/vllm_versions.py), the rules
(rules/catalog/common.py) and the replay's scheduler limits (advisor/perf/limits.py) all ask what a
server runs with when `--max-num-seqs`, `--max-num-batched-tokens`, `--block-size` or
`--gpu-memory-utilization` is not given, and their separate copies disagreed (issue #46: an H100
server without the flag was replayed with 256 sequences while the rules assumed 1024). The rules may
not import the advisor, so the table lives here, and the advisor reads it.

A server is described by plain values:
- version: (major, minor, patch), or None when unknown. An unknown version reads as the newest
  release's batch tiers (those of 0.9-0.33 agree on every GPU below 160 GiB), and, for the memory
  share, as 0.90 (gpu_memory_utilization says why).
- device: "cuda" (vLLM's OpenAI API server on a GPU), "cpu" (vLLM's CPU backend, device_config=cpu)
  or "bundled" (this project's own engine, engine/core/config.py, which reports `0.33.0+servops.<ver>`).
- usable_gib: one GPU's total memory as vLLM reads it (`total_memory`, 79.18 GiB on an 80 GB H100);
  None when unknown, which reads as below every tier.
- gpu_name: the device's name, for the A100 exception (vLLM tests `"a100" in device_name`).
- gpu_arch: "hopper", "blackwell", ... for the MLA block size; None when unknown.
- world_size: TP x PP of one engine, by which the CPU backend scales its batch caps.

Sources: vllm/engine/arg_utils.py (the API server's batch defaults; read per release, as
docs/reference.md §4.3 tabulates them), vllm/config/cache.py (block size, memory share),
vllm/platforms/cpu.py (the CPU backend's block size). Each function names the ranges it encodes.
"""

from __future__ import annotations

from typing import Literal

Version = tuple[int, int, int]
Device = Literal["cuda", "cpu", "bundled"]
DEVICES: tuple[str, ...] = ("cuda", "cpu", "bundled")

# The first release of each branch below (docs/reference.md §4.3).
V1_DEFAULT_FROM: Version = (0, 8, 0)  # V1 the default engine; before, V0's fixed 256 sequences
V0_REMOVED_FROM: Version = (0, 11, 0)  # V0's engine gone (VLLM_USE_V1=0 took it back 0.8-0.10; catalog: its lines end)
MEMORY_TIER_FROM: Version = (0, 8, 5)  # before: 1024 sequences on every GPU; from: by device memory
A100_EXCLUDED_FROM: Version = (0, 9, 0)  # A100 left out of the >=70 GiB tier (vLLM PR #17885)
LARGE_GPU_TIER_FROM: Version = (0, 28, 0)  # a >=160 GiB tier: 1024 sequences, 16384 tokens
UTILIZATION_0_92_FROM: Version = (0, 20, 0)  # 0.92 (CUDA graphs counted in the budget); 0.9 before
# The extensible KV cache (vllm/v1/worker/extensible_kv_cache.py, on by default on CUDA and ROCm): the KV cache is
# sized from the memory measured after warmup and CUDA graph capture, --gpu-memory-utilization left out means 1.0,
# and the startup check of free memory against the share is skipped (vllm/config/cache.py and v1/worker/utils.py)
EXTENSIBLE_KV_CACHE_FROM: Version = (0, 34, 0)
# CacheConfig.DEFAULT_BLOCK_SIZE went from 16 to 64 (vllm/config/cache.py); a backend may still prefer another
BLOCK_SIZE_64_FROM: Version = (0, 34, 0)
CPU_DEFAULTS_FROM: Version = (0, 32, 0)  # the release the CPU backend's defaults below were read from
# "Free memory on device … is less than desired GPU memory utilization": the startup check of the share (V1's
# gpu_worker.py from 0.9.1, v1/worker/utils.py from 0.14), which a share of 1.0 can never pass; 0.34 skips it while its
# extensible KV cache is on
FREE_MEMORY_CHECK_FROM: Version = (0, 9, 1)
# CacheConfig's check of --swap-space (its GiB per GPU, times the tensor-parallel size) against the host's RAM
# (psutil's total): above 70 % it raises "Too large swap space", above 40 % it warns "Possibly too large swap space"
# (vllm/config.py 0.4-0.10.0, vllm/config/cache.py 0.10.1-0.17, read in 0.6.6.post1's wheel)
SWAP_SPACE_GIB = 4  # --swap-space's default, GiB per GPU (0.4-0.17; V0's CPU blocks for preempted sequences)
SWAP_SPACE_REFUSED_ABOVE = 0.7
SWAP_SPACE_WARNED_ABOVE = 0.4
# A bitsandbytes pre-quantized checkpoint loads only through BitsAndBytesModelLoader (--load-format bitsandbytes).
# 0.5-0.8.1 (engine/arg_utils.py) refuse --quantization bitsandbytes without that load format and the reverse, and a
# checkpoint's own quantization_config never chose the loader; from 0.8.2 --quantization bitsandbytes sets the load
# format itself; from 0.8.4 the checkpoint's quantization_config does too ("bitsandbytes pre-quantized model need a
# specific model loader", EngineArgs.create_load_config). Read in the 0.6.4.post1, 0.8.2, 0.8.3 and 0.8.4 wheels.
BNB_QUANTIZATION_SETS_LOADER_FROM: Version = (0, 8, 2)
BNB_CHECKPOINT_SETS_LOADER_FROM: Version = (0, 8, 4)
# The names `from vllm import …` gives (vllm/__init__.py's __all__ in 0.32, less its version and typing aliases),
# plus LoRARequest (vllm/lora/request.py), which callers import beside them: a NameError for one of them means the
# caller's import of vLLM failed.
VLLM_TOP_LEVEL_NAMES = (
    "LLM",
    "SamplingParams",
    "LLMEngine",
    "AsyncLLMEngine",
    "EngineArgs",
    "AsyncEngineArgs",
    "ModelRegistry",
    "RequestOutput",
    "CompletionOutput",
    "PoolingParams",
    "TextPrompt",
    "TokensPrompt",
    "LoRARequest",
)

# The OpenAI API server's address: `--port` 8000 (vllm/entrypoints/launchers/cli_args.py, 0.32; the same default
# since the first releases), and no `--host` binds every interface (launchers/launcher.py: `(args.host or "", port)`).
API_SERVER_PORT = 8000
# The port data-parallel ranks reach the head node's coordinator on: --data-parallel-rpc-port (vllm/config/parallel.py,
# 0.32: `data_parallel_rpc_port: int = Field(default=29550, …)`).
DATA_PARALLEL_RPC_PORT = 29550
# How long the API server keeps an idle keep-alive connection open, in seconds: VLLM_HTTP_TIMEOUT_KEEP_ALIVE, given to
# uvicorn's timeout_keep_alive (vllm/envs.py and entrypoints/launchers/api_server/entry.py, 0.32).
HTTP_KEEP_ALIVE_S = 5
# VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE's default, MiB: the buffer FlashInfer's kernels plan their temporaries in
# (vllm/envs.py, 0.32: 394 * 1024 * 1024 bytes)
FLASHINFER_WORKSPACE_MIB = 394

# vllm/engine/arg_utils.py, the OpenAI API server's batch defaults on CUDA, by device memory.
LARGE_GPU_GIB = 70  # `device_memory >= 70 * GiB_bytes`
HUGE_GPU_GIB = 160  # `device_memory >= 160 * GiB_bytes`, from 0.28
BASE_MAX_NUM_SEQS = 256  # below 70 GiB (or an A100, from 0.9); every GPU before 0.8 (V0)
LARGE_MAX_NUM_SEQS = 1024  # >=70 GiB; every GPU in 0.8.0-0.8.4
BASE_MAX_NUM_BATCHED_TOKENS = 2048
LARGE_MAX_NUM_BATCHED_TOKENS = 8192
HUGE_MAX_NUM_BATCHED_TOKENS = 16384
# vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE on CUDA (16 up to 0.33, 64 from 0.34); FlashMLA's block on
# Hopper/Blackwell.
CUDA_BLOCK_SIZE = 16
CUDA_BLOCK_SIZE_FROM_0_34 = 64
FLASHMLA_BLOCK_SIZE = 64
# vllm/entrypoints/openai/completion/protocol.py (0.32): CompletionRequest's max_tokens when a request leaves it out,
# OpenAI's legacy default; Chat Completions leaves the output uncapped below the context instead
COMPLETIONS_MAX_TOKENS = 16
# vllm/config/cache.py: the share of device memory vLLM may use.
GPU_MEMORY_UTILIZATION = 0.92  # 0.20 and later
GPU_MEMORY_UTILIZATION_BEFORE_0_20 = 0.90
# From 0.34 with the extensible KV cache: CacheConfig.resolved_gpu_memory_utilization, "1.0 with the extensible KV
# cache (sized from measured memory) and 0.92 otherwise"; a share below it only caps the instance.
GPU_MEMORY_UTILIZATION_EXTENSIBLE = 1.0

# vLLM's CPU backend with VLLM_CPU_KVCACHE_SPACE unset: a fixed 4 GiB of KV cache up to 0.13 (0.4-0.7 logged
# "Environment variable VLLM_CPU_KVCACHE_SPACE (GB) for CPU backend is not set, using 4 by default."), a share of
# the node's memory from 0.14 ("VLLM_CPU_KVCACHE_SPACE not set. Using N GiB for KV cache.", vLLM PR #29604, which
# names the 4 GiB default as too small for long-context models); vllm/platforms/cpu.py, advisor/catalog/
# vllm_messages.json holds both warnings with their versions.
CPU_KV_SPACE_UNSET_GIB = 4
CPU_KV_SPACE_SHARE_FROM: Version = (0, 14, 0)
# The variable's name, as vLLM's CPU backend reads it (whole GiB, `int(value)`).
CPU_KV_SPACE_ENV = "VLLM_CPU_KVCACHE_SPACE"

# vLLM's CPU backend, read from vLLM 0.32.0: engine/arg_utils.py, EngineArgs.get_batch_defaults,
# "cpu specific default values": the OpenAI server's defaults are these times world_size (TP x PP).
# They never appear in the log's `non-default args`, so triage must know them.
CPU_API_SERVER_MAX_NUM_SEQS = 128
CPU_API_SERVER_MAX_NUM_BATCHED_TOKENS = 2048
# platforms/cpu.py, CpuPlatform.check_and_update_config: a block size the user did not set becomes 128
# on the CPU backend (MLA gets 16 or, with AMX, keeps 128; DeepSeek-V4 256: not modelled).
CPU_DEFAULT_BLOCK_SIZE = 128

# VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS left unset (vllm/envs.py, 0.32): how long the engine waits for a model step;
# 0.8.5 hard-coded 40 s (vllm#17965, raised to 5 minutes by #18558, made a variable by #19544).
EXECUTE_MODEL_TIMEOUT_ENV = "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"
EXECUTE_MODEL_TIMEOUT_S = 300

# VLLM_ENGINE_READY_TIMEOUT_S left unset (vllm/envs.py, 0.14 to 0.32): how long an API server process waits for the
# engine cores' first message; before 0.14 the same wait was fixed at 600 s (core_client.py of 0.11.1, 0.12.0, 0.13.0).
ENGINE_READY_TIMEOUT_ENV = "VLLM_ENGINE_READY_TIMEOUT_S"
ENGINE_READY_TIMEOUT_S = 600
ENGINE_READY_TIMEOUT_ENV_SINCE = "0.14"

# --shutdown-timeout left unset (vllm/config/vllm.py, VllmConfig.shutdown_timeout, 0.32): how long a stopping server
# drains its in-flight requests; 0 aborts them at once (the `[shutdown]` lines' mode=abort).
SHUTDOWN_TIMEOUT_S = 0

MAX_LOGPROBS = 20  # --max-logprobs left out: ModelConfig.max_logprobs in 0.32 (vllm/config/model.py)
EARLY_MAX_LOGPROBS = 5  # the same in the first releases that had the flag ("Cannot request more than 5 logprobs")

# The bundled engine's EngineConfig defaults (engine/core/config.py, which imports torch, so they are
# restated here; tests/unit/advisor/perf/test_limits.py holds them equal to EngineConfig's).

BUNDLED_MAX_NUM_SEQS = 256
BUNDLED_CHUNKED_BUDGET = 2048  # with chunked prefill; without, max(max_model_len, 2048)
BUNDLED_BLOCK_SIZE = 16
BUNDLED_GPU_MEMORY_UTILIZATION = 0.92
# What the bundled engine appends to the vLLM version it reports (engine/api/server.py).
BUNDLED_VERSION_MARK = "+servops"


def _from(version: Version | None, first: Version) -> bool:
    """Whether `version` follows the branch that starts at `first`; an unknown version is the newest."""
    return version is None or version >= first


def _large(usable_gib: float | None, threshold: float) -> bool:
    return usable_gib is not None and usable_gib >= threshold


def is_a100(gpu_name: str | None) -> bool:
    """vLLM's A100 test in arg_utils.py: `"a100" in device_name.lower()` (PR #17885: larger
    batches cut A100 throughput)."""
    return "a100" in (gpu_name or "").lower()


def max_num_seqs(
    version: Version | None,
    device: Device = "cuda",
    usable_gib: float | None = None,
    gpu_name: str | None = None,
    world_size: int = 1,
) -> int:
    """`--max-num-seqs` left out (vllm/engine/arg_utils.py, OpenAI API server; docs/reference.md §4.3).

    cuda: 0.2-0.7 (V0): 256 on every GPU (`EngineArgs.max_num_seqs`; the V1 a 0.6-0.7 server could opt
    into with VLLM_USE_V1=1 took 1024: not modelled); 0.8.0-0.8.4: 1024 on every GPU; 0.8.5: 1024 on
    >= 70 GiB, else 256; 0.9.0-0.27: 1024 on >= 70 GiB except A100, else 256; 0.28-0.33: also 1024 on
    >= 160 GiB. cpu: 128 x world_size (read from 0.32; applied to every version). bundled: 256
    (engine/core/config.py), whatever its budget.
    """
    if device == "bundled":
        return BUNDLED_MAX_NUM_SEQS
    if device == "cpu":
        return CPU_API_SERVER_MAX_NUM_SEQS * max(1, world_size)
    if not _from(version, V1_DEFAULT_FROM):
        return BASE_MAX_NUM_SEQS
    if not _from(version, MEMORY_TIER_FROM):
        return LARGE_MAX_NUM_SEQS
    if not _large(usable_gib, LARGE_GPU_GIB):
        return BASE_MAX_NUM_SEQS
    if _from(version, LARGE_GPU_TIER_FROM) and _large(usable_gib, HUGE_GPU_GIB):
        return LARGE_MAX_NUM_SEQS
    if _from(version, A100_EXCLUDED_FROM) and is_a100(gpu_name):
        return BASE_MAX_NUM_SEQS
    return LARGE_MAX_NUM_SEQS


def max_num_batched_tokens(
    version: Version | None,
    device: Device = "cuda",
    usable_gib: float | None = None,
    gpu_name: str | None = None,
    world_size: int = 1,
    *,
    chunked_prefill: bool = True,
    max_model_len: int | None = None,
) -> int:
    """`--max-num-batched-tokens` left out (vllm/engine/arg_utils.py, OpenAI API server; §4.3).

    cuda: 2048; 8192 on >= 70 GiB (A100 excluded from 0.9); 16384 on >= 160 GiB from 0.28 (0.8.0
    looked for h100/h200 in the name instead: not modelled; 0.2-0.7's V0 took max(max_model_len, 2048) with
    chunked prefill off, its default, and 512 or 2048 with it on: not modelled either, read as these tiers).
    cpu: 2048 x world_size (read from 0.32).
    bundled: 2048 with chunked prefill, else max(max_model_len, 2048) (engine/core/config.py,
    resolve_max_model_len); chunked_prefill and max_model_len matter only there.
    """
    if device == "bundled":
        if chunked_prefill or max_model_len is None:
            return BUNDLED_CHUNKED_BUDGET
        return max(max_model_len, BUNDLED_CHUNKED_BUDGET)
    if device == "cpu":
        return CPU_API_SERVER_MAX_NUM_BATCHED_TOKENS * max(1, world_size)
    if _from(version, LARGE_GPU_TIER_FROM) and _large(usable_gib, HUGE_GPU_GIB):
        return HUGE_MAX_NUM_BATCHED_TOKENS
    if _large(usable_gib, LARGE_GPU_GIB) and not (_from(version, A100_EXCLUDED_FROM) and is_a100(gpu_name)):
        return LARGE_MAX_NUM_BATCHED_TOKENS
    return BASE_MAX_NUM_BATCHED_TOKENS


def block_size(
    device: Device = "cuda", gpu_arch: str | None = None, is_mla: bool = False, version: Version | None = None
) -> int:
    """`--block-size` left out. cuda: 16 up to 0.33 and 64 from 0.34 (vllm/config/cache.py
    CacheConfig.DEFAULT_BLOCK_SIZE; an unknown version reads as 16, the size of every release before), 64 for MLA
    on Hopper/Blackwell (FlashMLA); other backends' preferences are not modelled. cpu: 128 (vllm/platforms/cpu.py,
    read from 0.32). bundled: 16 (engine/core/config.py)."""
    if device == "bundled":
        return BUNDLED_BLOCK_SIZE
    if device == "cpu":
        return CPU_DEFAULT_BLOCK_SIZE
    if is_mla and gpu_arch in {"hopper", "blackwell"}:
        return FLASHMLA_BLOCK_SIZE
    return CUDA_BLOCK_SIZE_FROM_0_34 if version is not None and version >= BLOCK_SIZE_64_FROM else CUDA_BLOCK_SIZE


def gpu_memory_utilization(version: Version | None, device: Device = "cuda", extensible: bool | None = None) -> float:
    """`--gpu-memory-utilization` left out (vllm/config/cache.py): 0.9 up to 0.19, 0.92 from 0.20,
    which started counting CUDA-graph memory; from 0.34 on a GPU, 1.0 while the extensible KV cache is on (its
    default there; `extensible` True or False when the server's own lines or flags said, None when not known) and
    0.92 when it is off. An unknown version reads as 0.90, the default of most releases triage reads (0.8-0.19).
    bundled: 0.92 (engine/core/config.py)."""
    if device == "bundled":
        return BUNDLED_GPU_MEMORY_UTILIZATION
    extensible_on = extensible_kv_cache_default(version) if extensible is None else extensible
    if device == "cuda" and extensible_on:  # told by the log even when no version line came with it
        return GPU_MEMORY_UTILIZATION_EXTENSIBLE
    if version is not None and version >= UTILIZATION_0_92_FROM:
        return GPU_MEMORY_UTILIZATION
    return GPU_MEMORY_UTILIZATION_BEFORE_0_20


def extensible_kv_cache_default(version: Version | None) -> bool:
    """Whether a GPU server of `version` sizes its KV cache from measured memory unless told otherwise (0.34 on);
    an unknown version reads as a release before it."""
    return version is not None and version >= EXTENSIBLE_KV_CACHE_FROM


def cpu_batch_defaults(world_size: int = 1) -> dict[str, int]:
    """vLLM's CPU API-server defaults for one engine of `world_size` ranks (TP x PP): the batch caps scale
    with the ranks (vllm/engine/arg_utils.py get_batch_defaults, 0.32), the block size does not."""
    return {
        "max_num_seqs": max_num_seqs(None, "cpu", world_size=world_size),
        "max_num_batched_tokens": max_num_batched_tokens(None, "cpu", world_size=world_size),
        "block_size": block_size("cpu"),
    }


# The lowest NVIDIA compute capability vLLM's installation guide lists for its builds: "compute capability 7.0 or
# higher (e.g., V100, T4 …)" through 0.14 at least (docs/getting_started/installation/gpu.cuda.inc.md), "7.5 or higher
# (e.g., T4, RTX20xx …)" by 0.31 and in the 0.32 this table reads: V100 (7.0) is no longer listed.
MIN_CAPABILITY_0_14 = 70
MIN_CAPABILITY = 75
