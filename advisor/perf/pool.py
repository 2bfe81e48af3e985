"""The KV pool a change of its byte size gives the replay: `--kv-cache-memory-bytes`.

Why a flag of its own: on vLLM's CPU backend (and on CUDA when the operator sets it) the KV
space is given in bytes, not carved out of a device by `--gpu-memory-utilization`. Nothing
else is subtracted from it, so the pool's tokens scale with its bytes: vLLM divides the
space into blocks of `block_size` x the KV bytes of one token (advisor/vllm_cpu.py replays
that arithmetic). The replay needs the pool in blocks; this turns a byte size into them, from
the pool the server reported (its log's `KV cache size: N tokens`, or `--kv-cache-tokens`) and
the bytes it was given.

A preempting server is the case it serves: its pool is too small for the requests in flight,
and the model, replaying the measured load with a larger pool, predicts which size stops the
preemptions and what that does to the safe operating point (advisor/triage_forecast.py).
"""

from __future__ import annotations

from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.perf.limits import POOL_BYTES_FLAG
from advisor.vllm_cpu import CpuKvSpace, parse_cpu_kvcache_space, parse_kv_cache_memory_bytes
from advisor.vllm_launch import CPU_KV_SPACE_ENV

# The sizes the model weighs besides the rule's: these multiples of the pool the server runs.
POOL_SEARCH_MULTIPLES = (2, 4, 8, 16)


def _space(command: ServeCommand) -> CpuKvSpace | None:
    """The KV space `command` gives its server, as vLLM's CPU backend reads it (advisor/vllm_cpu.py);
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
