"""The scheduler's limits a launch command sets, with each engine's defaults for flags left out.

Why per engine: the same `--max-num-seqs` left out means 256 on the bundled engine, 256 or 1024 on
vLLM's CUDA API server (by version and GPU memory), but 128 x TP x PP on vLLM's CPU backend; the block
size is 16 on CUDA and on the bundled engine, 128 on vLLM CPU. Every engine's defaults come from the one
table, rules/vllm_defaults.py (the bundled engine's as its "bundled" device), which the rules and the
memory model read too.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from rules import vllm_defaults

# The KV pool given in bytes (advisor/perf/pool.py turns a byte size into the replay's blocks).
POOL_BYTES_FLAG = "--kv-cache-memory-bytes"
# The KV pool carved out of a device share (advisor/perf/pool.py, with the pool's GiB and the device's).
SHARE_FLAG = "--gpu-memory-utilization"
MAX_MODEL_LEN_FLAG = "--max-model-len"
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
# GPUs (advisor/triage/layouts.py), never flag by flag: fewer GPUs per replica serve fewer requests each.
TENSOR_PARALLEL_FLAG = "--tensor-parallel-size"
# Pipeline stages: each holds a slice of the layers; vLLM's CPU defaults scale with them (limits_for). Priced
# with the tensor-parallel size as a layout of one replica's GPUs (advisor/perf/parallel.py).
PIPELINE_PARALLEL_FLAG = "--pipeline-parallel-size"
LAYOUT_FLAGS = frozenset({TENSOR_PARALLEL_FLAG, PIPELINE_PARALLEL_FLAG})
PREDICTED_FLAGS = (*MODELLED_FLAGS, TENSOR_PARALLEL_FLAG, PIPELINE_PARALLEL_FLAG)
BOOLEAN_FLAGS = ("--enable-prefix-caching", "--enable-chunked-prefill")

EngineKind = Literal["bundled", "vllm-cpu", "vllm-cuda"]
ENGINE_KINDS: tuple[str, ...] = ("bundled", "vllm-cpu", "vllm-cuda")
# Each engine's device in the defaults table (rules/vllm_defaults.py).
TABLE_DEVICE: dict[str, vllm_defaults.Device] = {"bundled": "bundled", "vllm-cpu": "cpu", "vllm-cuda": "cuda"}
DEFAULT_MAX_MODEL_LEN = 8192


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
    command: ServeCommand,
    engine: EngineKind,
    num_blocks: int | None = None,
    kv_tokens: int | None = None,
    *,
    version: vllm_defaults.Version | None = None,
    usable_gib: float | None = None,
    gpu_name: str | None = None,
) -> SchedulerLimits:
    """The limits `command` runs with on `engine` (flags first, then that engine's defaults).

    vLLM's CUDA defaults depend on the version and on one GPU's memory and name (rules/vllm_defaults.py):
    pass them where the caller knows them. Without `usable_gib` the GPU reads as below 70 GiB (256
    sequences, 2048 tokens); without `version`, as the newest release. vLLM's CPU defaults scale with the
    ranks of one engine (TP x PP, read from the command); the bundled engine's budget with chunked prefill.
    """
    device = TABLE_DEVICE[engine]
    world = 1
    if device == "cpu":  # TP x PP: vLLM's CPU backend scales its caps with them, no other engine reads them
        world = (_int(command, TENSOR_PARALLEL_FLAG) or 1) * (_int(command, PIPELINE_PARALLEL_FLAG) or 1)
    max_model_len = _int(command, "--max-model-len") or DEFAULT_MAX_MODEL_LEN
    chunked = command.value("--enable-chunked-prefill") != "false"
    server = {"usable_gib": usable_gib, "gpu_name": gpu_name, "world_size": world}
    seqs = vllm_defaults.max_num_seqs(version, device, **server)
    budget = vllm_defaults.max_num_batched_tokens(
        version, device, **server, chunked_prefill=chunked, max_model_len=max_model_len
    )
    block = _int(command, "--block-size") or vllm_defaults.block_size(device, version=version)
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
