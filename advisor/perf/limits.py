"""The scheduler's limits a launch command sets, with each engine's defaults for flags left out.

Why per engine: the same `--max-num-seqs` left out means 256 on the bundled engine and on
vLLM's CUDA API server, but 128 on vLLM's CPU backend (vLLM 0.32 `arg_utils.py`, CPU
platform defaults); the block size is 16 on CUDA and on the bundled engine, 128 on vLLM CPU.
vLLM's CPU defaults come from advisor/versions.py; the bundled engine's are restated here
because engine/core/config.py imports torch, and a unit test holds them equal to EngineConfig's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.versions import cpu_batch_defaults

# The KV pool given in bytes (advisor/perf/pool.py turns a byte size into the replay's blocks).
POOL_BYTES_FLAG = "--kv-cache-memory-bytes"
# The KV pool carved out of a device share (advisor/perf/pool.py, with the pool's GiB and the device's).
SHARE_FLAG = "--gpu-memory-utilization"
# Flags whose effect the replay models (scheduling, KV pool in blocks or bytes, caching, chunking).
MODELLED_FLAGS = (
    "--max-num-seqs",
    "--max-num-batched-tokens",
    "--max-model-len",
    "--block-size",
    "--num-gpu-blocks-override",
    POOL_BYTES_FLAG,
    SHARE_FLAG,
    "--enable-prefix-caching",
    "--enable-chunked-prefill",
)
# The tensor-parallel size: it changes the step cost and the pool per replica, which takes the model and
# the GPU (advisor/perf/parallel.py). `servops predict` answers it; triage weighs it as a layout of the
# GPUs (advisor/layout_choice.py), never flag by flag: fewer GPUs per replica serve fewer requests each.
TENSOR_PARALLEL_FLAG = "--tensor-parallel-size"
# Pipeline stages: each holds a slice of the layers; vLLM's CPU defaults scale with them (limits_for). Priced
# with the tensor-parallel size as a layout of one replica's GPUs (advisor/perf/parallel.py).
PIPELINE_PARALLEL_FLAG = "--pipeline-parallel-size"
LAYOUT_FLAGS = frozenset({TENSOR_PARALLEL_FLAG, PIPELINE_PARALLEL_FLAG})
PREDICTED_FLAGS = (*MODELLED_FLAGS, TENSOR_PARALLEL_FLAG, PIPELINE_PARALLEL_FLAG)
BOOLEAN_FLAGS = ("--enable-prefix-caching", "--enable-chunked-prefill")

EngineKind = Literal["bundled", "vllm-cpu", "vllm-cuda"]
ENGINE_KINDS: tuple[str, ...] = ("bundled", "vllm-cpu", "vllm-cuda")
# vLLM's CUDA API server below 70 GiB of device memory (advisor/versions.py has the tiers).
VLLM_CUDA_MAX_NUM_SEQS = 256
VLLM_CUDA_MAX_NUM_BATCHED_TOKENS = 2048
VLLM_CUDA_BLOCK_SIZE = 16
DEFAULT_MAX_MODEL_LEN = 8192

# The bundled engine's EngineConfig defaults (tests/unit/advisor/test_perf_limits.py checks them).
BUNDLED_MAX_NUM_SEQS = 256
BUNDLED_BLOCK_SIZE = 16
BUNDLED_CHUNKED_BUDGET = 2048


class SchedulerLimits(BaseModel):
    """What the scheduler replay needs from a launch."""

    max_num_seqs: int = Field(ge=1)
    max_num_batched_tokens: int = Field(ge=1)
    max_model_len: int = Field(ge=1)
    block_size: int = Field(ge=1)
    num_blocks: int | None = Field(default=None, ge=1, description="KV blocks; None: as many as the load needs")
    enable_prefix_caching: bool = True
    enable_chunked_prefill: bool = True

    @property
    def kv_tokens(self) -> int | None:
        return self.num_blocks * self.block_size if self.num_blocks else None


def engine_kind(command: ServeCommand, given: str | None = None) -> EngineKind:
    """The engine whose defaults apply: as given, else read from the command (the bundled engine's
    `servops serve`/`python -m engine`, vLLM's CPU backend by its KV env or `--device cpu`)."""
    if given:
        if given not in ENGINE_KINDS:
            raise UserError(f"--engine {given!r}: choose one of {', '.join(ENGINE_KINDS)}")
        return given  # type: ignore[return-value]
    program = tuple(command.program)
    if program[-2:] == ("engine", "serve") or program[:1] == ("servops",):
        return "bundled"
    if "VLLM_CPU_KVCACHE_SPACE" in command.env or command.value("--device") == "cpu":
        return "vllm-cpu"
    return "vllm-cuda"


def limits_for(
    command: ServeCommand, engine: EngineKind, num_blocks: int | None = None, kv_tokens: int | None = None
) -> SchedulerLimits:
    """The limits `command` runs with on `engine` (flags first, then that engine's defaults)."""
    if engine == "vllm-cpu":  # its defaults scale with the ranks of one engine (TP x PP, vllm/engine/arg_utils.py)
        world = (_int(command, TENSOR_PARALLEL_FLAG) or 1) * (_int(command, PIPELINE_PARALLEL_FLAG) or 1)
        cpu = cpu_batch_defaults(world)
        seqs, budget, block = cpu["max_num_seqs"], cpu["max_num_batched_tokens"], cpu["block_size"]
    elif engine == "vllm-cuda":
        seqs, budget, block = VLLM_CUDA_MAX_NUM_SEQS, VLLM_CUDA_MAX_NUM_BATCHED_TOKENS, VLLM_CUDA_BLOCK_SIZE
    else:
        seqs, budget, block = BUNDLED_MAX_NUM_SEQS, None, BUNDLED_BLOCK_SIZE
    max_model_len = _int(command, "--max-model-len") or DEFAULT_MAX_MODEL_LEN
    chunked = command.value("--enable-chunked-prefill") != "false"
    if budget is None:  # the bundled engine: 2048 with chunked prefill, else max(max_model_len, 2048)
        budget = BUNDLED_CHUNKED_BUDGET if chunked else max(max_model_len, BUNDLED_CHUNKED_BUDGET)
    block = _int(command, "--block-size") or block
    if kv_tokens and not num_blocks:
        num_blocks = max(1, kv_tokens // block)
    return SchedulerLimits(
        max_num_seqs=_int(command, "--max-num-seqs") or seqs,
        max_num_batched_tokens=_int(command, "--max-num-batched-tokens") or budget,
        max_model_len=max_model_len,
        block_size=block,
        num_blocks=num_blocks,
        enable_prefix_caching=command.value("--enable-prefix-caching") != "false",
        enable_chunked_prefill=chunked,
    )


def _int(command: ServeCommand, flag: str) -> int | None:
    text = command.value(flag)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UserError(f"{flag} {text!r}: give a whole number") from None
    if value < 1:
        raise UserError(f"{flag} {value}: must be at least 1")
    return value
