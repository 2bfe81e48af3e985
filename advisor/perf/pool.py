"""The KV pool a change of its size gives the replay: `--kv-cache-memory-bytes`, and
`--gpu-memory-utilization` where the pool's GiB and the device's are known.

Why a flag of its own: on vLLM's CPU backend (and on CUDA when the operator sets it) the KV
space is given in bytes, not carved out of a device by `--gpu-memory-utilization`. Nothing
else is subtracted from it, so the pool's tokens scale with its bytes: vLLM divides the
space into blocks of `block_size` x the KV bytes of one token (advisor/memory/cpu_backend.py replays
that arithmetic). The replay needs the pool in blocks; this turns a byte size into them, from
the pool the server reported (its log's `KV cache size: N tokens`, or `--kv-cache-tokens`) and
the bytes it was given.

On a GPU the pool is what vLLM leaves of utilisation x device memory after weights, activations
and graphs; none of those moves with the share, so a change of the share moves the pool by the
same share of the device (`pool_tokens_for_share`: the arithmetic of OP-1.1 and OP-5.3, here
turned into the replay's blocks). That needs the pool in GiB per GPU (vLLM's `Available KV cache
memory: N GiB` line) and the device's size (the log, --gpu or --gpu-memory-gib): `DeviceShare`.

A preempting server is the case it serves: its pool is too small for the requests in flight,
and the model, replaying the measured load with a larger pool, predicts which size stops the
preemptions and what that does to the safe operating point (advisor/triage/forecast.py).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from advisor.collect.kv_space import CPU_KV_SPACE_ENV, parse_cpu_kvcache_space, parse_kv_cache_memory_bytes
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.memory.cpu_backend import CpuKvSpace
from advisor.perf.limits import POOL_BYTES_FLAG, SHARE_FLAG
from rules.catalog.common import DEFAULT_GPU_MEMORY_UTILIZATION, SAFE_MAX_GPU_MEMORY_UTILIZATION, kv_gib_at_share

# The sizes the model weighs besides the rule's: these multiples of the pool the server runs.
POOL_SEARCH_MULTIPLES = (2, 4, 8, 16)
# The shares it weighs: vLLM's default and up to the most the rules call safe, above the server's own.
SHARE_SEARCH_VALUES = (0.9, DEFAULT_GPU_MEMORY_UTILIZATION, SAFE_MAX_GPU_MEMORY_UTILIZATION)


class DeviceShare(BaseModel):
    """What turns a --gpu-memory-utilization into KV tokens: the pool per GPU and the GPU's size."""

    pool_gib: float = Field(gt=0, description="the KV pool per GPU the server reported (Available KV cache memory)")
    device_gib: float = Field(gt=0, description="one GPU's memory")


def _space(command: ServeCommand) -> CpuKvSpace | None:
    """The KV space `command` gives its server, as vLLM's CPU backend reads it (advisor/memory/cpu_backend.py);
    None when neither the variable nor the flag is set, or one does not parse."""
    gib, flag = command.env.get(CPU_KV_SPACE_ENV), command.value(POOL_BYTES_FLAG)
    try:
        space = CpuKvSpace(
            cpu_kvcache_space_gib=parse_cpu_kvcache_space(gib) if gib is not None else None,
            kv_cache_memory_bytes=parse_kv_cache_memory_bytes(flag) if flag is not None else None,
        )
    except ValueError:
        return None
    return space if gib is not None or flag is not None else None


def pool_bytes(command: ServeCommand) -> int | None:
    """The KV bytes `command` gives its server: VLLM_CPU_KVCACHE_SPACE (whole GiB, which wins over
    the flag in vLLM 0.32's platforms/cpu.py), else --kv-cache-memory-bytes; None when neither is set."""
    space = _space(command)
    return space.bytes if space else None


def pool_tokens_after(command: ServeCommand, tokens_before: int | None, text: str) -> int:
    """The pool's tokens with `--kv-cache-memory-bytes TEXT`: the reported pool scaled by the bytes."""
    try:
        after = parse_kv_cache_memory_bytes(text)
    except ValueError as exc:
        raise UserError(f"--change '{POOL_BYTES_FLAG} {text}': {exc}") from None
    if CPU_KV_SPACE_ENV in command.env:
        raise UserError(
            f"--change '{POOL_BYTES_FLAG} {text}': the server sets {CPU_KV_SPACE_ENV}="
            f"{command.env[CPU_KV_SPACE_ENV]}, which vLLM's CPU backend takes over the flag; change the "
            f"variable (whole GiB) instead, or drop it from --server-args and give the flag"
        )
    before = pool_bytes(command)
    if not before or not tokens_before:
        raise UserError(
            f"--change '{POOL_BYTES_FLAG} {text}': the model scales the pool the server reported by its bytes, "
            f"so it needs both: the server's {POOL_BYTES_FLAG} in --server-args and its pool in tokens "
            f"(--kv-cache-tokens, the 'KV cache size: N tokens' line of its log)"
        )
    return max(1, tokens_before * after // before)


def search_values(command: ServeCommand) -> list[str]:
    """The byte sizes the model weighs: POOL_SEARCH_MULTIPLES of the server's own (none when unknown)."""
    space = _space(command)
    if space is None or space.env():  # the variable wins over the flag: the flag is no lever
        return []
    return [str(space.bytes * m) for m in POOL_SEARCH_MULTIPLES]


def current_share(command: ServeCommand) -> float:
    """The --gpu-memory-utilization `command` runs, else vLLM's default (0.92 from vLLM 0.20 on)."""
    value = command.value(SHARE_FLAG)
    try:
        return float(value) if value is not None else DEFAULT_GPU_MEMORY_UTILIZATION
    except ValueError:
        raise UserError(f"--server-args: {SHARE_FLAG} {value!r} is not a number between 0 and 1") from None


def pool_tokens_for_share(
    command: ServeCommand, tokens_before: int | None, text: str, share: DeviceShare | None
) -> int:
    """The pool's tokens at `--gpu-memory-utilization TEXT`: the reported pool, grown or shrunk by the
    change of share times the device, in the pool's own tokens per GiB."""
    try:
        after = float(text)
    except ValueError:
        after = -1.0
    if not 0 < after <= 1:
        raise UserError(f"--change '{SHARE_FLAG} {text}': give a share of the device between 0 and 1, e.g. 0.92")
    if _space(command) is not None:
        raise UserError(
            f"--change '{SHARE_FLAG} {text}': the server gives its KV space in bytes ({POOL_BYTES_FLAG} or "
            f"{CPU_KV_SPACE_ENV}), which vLLM takes instead of the share; change that size instead"
        )
    if share is None or not tokens_before:
        raise UserError(share_inputs_missing(text))
    pool_after = kv_gib_at_share(share.pool_gib, share.device_gib, current_share(command), after)
    if pool_after <= 0:
        raise UserError(
            f"--change '{SHARE_FLAG} {text}': that share leaves no KV cache ({pool_after:.2f} GiB per GPU); "
            f"vLLM would not start"
        )
    return max(1, int(tokens_before * pool_after / share.pool_gib))


def share_inputs_missing(text: str) -> str:
    """What a --gpu-memory-utilization change needs that was not given, as the one-line error says it."""
    return (
        f"--change '{SHARE_FLAG} {text}': the model moves the pool by the share of the device, so it needs the "
        f"pool in tokens (--kv-cache-tokens, the log's 'KV cache size: N tokens'), in GiB per GPU "
        f"(--kv-cache-gib, the log's 'Available KV cache memory: N GiB') and the GPU's size (--gpu-memory-gib)"
    )


def share_search_values(command: ServeCommand, share: DeviceShare | None) -> list[str]:
    """The shares the model weighs: SHARE_SEARCH_VALUES above the server's own (none without a DeviceShare)."""
    if share is None or _space(command) is not None:  # a space given in bytes: the share is no lever
        return []
    current = current_share(command)
    return [f"{value:.2f}" for value in SHARE_SEARCH_VALUES if value > current]
