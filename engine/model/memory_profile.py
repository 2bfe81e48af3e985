"""KV pool sizing, the way vLLM 0.33 does it, and its startup failures (exact texts).

    requested  = device_memory × gpu_memory_utilization
    available  = requested − weights − peak activation        ("Available KV cache memory")
    num_blocks = available // (block_size × kv_heads × 2 × head_dim × dtype bytes × layers)

Weights are measured (parameter bytes). Peak activation: on CUDA it is measured, as vLLM
does, as the peak allocation of a dummy forward over `max_num_batched_tokens` tokens. On
the CPU there is no allocator peak to read reliably while other work shares the process, so
it is estimated deterministically from the shapes of that same forward (see
`estimate_activation_bytes`): the same config always gives the same pool, which is what
tests and the advisor's memory math need.
"""

from __future__ import annotations

import dataclasses

import torch

from engine.core.errors import EngineStartupError
from engine.observability.logger import format_gib

DOCS_URL = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"


@dataclasses.dataclass
class KVBudget:
    requested_bytes: int
    weights_bytes: int
    activation_bytes: int
    available_bytes: int
    bytes_per_block: int
    num_blocks: int


def estimate_activation_bytes(hf_config, dtype: torch.dtype, num_tokens: int, num_seqs: int, max_model_len: int) -> int:
    """Peak transient bytes of one forward over `num_tokens` tokens, `num_seqs` of them sampled.

    Per token, in the model dtype: hidden state, residual and normed input (3·H), q/k/v and
    the attention output (2·Q + 2·KV), gate/up and the activated product (3·I). Prefill
    attention materialises float32 scores for every query token against at most
    `max_model_len` keys (heads × T × min(T, max_model_len)) and the gathered keys/values
    expanded to all heads (2 × T × heads × head_dim).
    Sampling holds float32 logits, probabilities and a sorted copy (3 × seqs × vocab × 4).
    """
    element = torch.empty((), dtype=dtype).element_size()
    hidden = hf_config.hidden_size
    heads = hf_config.num_attention_heads
    head_dim = getattr(hf_config, "head_dim", None) or hidden // heads
    q = heads * head_dim
    kv = hf_config.num_key_value_heads * head_dim
    inter = hf_config.intermediate_size
    per_token = (3 * hidden + 2 * q + 2 * kv + 3 * inter) * element
    attention = heads * num_tokens * min(num_tokens, max_model_len) * 4 + 2 * num_tokens * q * element
    sampling = 3 * min(num_seqs, num_tokens) * hf_config.vocab_size * 4
    return num_tokens * per_token + attention + sampling


def plan_kv_cache(
    requested_bytes: int,
    weights_bytes: int,
    activation_bytes: int,
    bytes_per_block: int,
    block_size: int,
    max_model_len: int,
    num_gpu_blocks_override: int | None = None,
) -> KVBudget:
    """Blocks for the KV pool, or vLLM's exact error when there is no room."""
    available = requested_bytes - weights_bytes - activation_bytes
    if available <= 0:
        raise EngineStartupError(
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine (this flag also controls CPU memory reservation on the CPU backend, "
            f"despite its name). See {DOCS_URL} for more details."
        )
    num_blocks = available // bytes_per_block
    if num_gpu_blocks_override is not None:
        num_blocks = num_gpu_blocks_override
        available = num_blocks * bytes_per_block
    check_enough_kv_cache_memory(available, bytes_per_block, block_size, max_model_len)
    return KVBudget(requested_bytes, weights_bytes, activation_bytes, available, bytes_per_block, num_blocks)


def check_enough_kv_cache_memory(available: int, bytes_per_block: int, block_size: int, max_model_len: int) -> None:
    needed = -(-max_model_len // block_size) * bytes_per_block
    if needed <= available:
        return
    estimated = (available // bytes_per_block) * block_size
    estimate = (
        f" Based on the available memory, the estimated maximum model length is {estimated}." if estimated > 0 else ""
    )
    raise EngineStartupError(
        f"To serve at least one request with the model's max seq len ({max_model_len}), "
        f"({format_gib(needed)} GiB KV cache is needed, which is larger than the available KV cache memory "
        f"({format_gib(available)} GiB).{estimate} Try increasing `gpu_memory_utilization` (which also controls "
        f"CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "
        f"See {DOCS_URL} for more details."
    )


def max_concurrency(num_blocks: int, block_size: int, max_model_len: int) -> float:
    return num_blocks / -(-max_model_len // block_size)
