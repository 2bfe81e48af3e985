"""The decoder layer's ops, each with its PyTorch twin: what the model calls.

The linear layers, RMSNorm (alone and fused with the residual add), the rotate-half rotary
embedding and SiLU-and-multiply, with vLLM's semantics. bfloat16 linear layers on the `cpu`
backend run natively (`servops_kernels.cpu_gemm`: float32 FMAs on widened bf16) on a CPU without bf16
arithmetic, where PyTorch's bf16 GEMM is a slow software path (above `cpu_gemm.WIDENED_ROWS_MAX` rows
the float32 copy the engine keeps there takes them), and for up to four rows on any CPU, where
reading the weights in place beats oneDNN; every other linear layer is oneDNN's GEMM, on weights
packed once for it where the engine packed them (`servops_kernels.cpu_prepack`), else `F.linear`. The
other ops: on the `cpu` backend (`servops_kernels.attention`) with
float32 or bfloat16 rows they run natively (`servops_kernels.cpu_layer_ops`, one pass each, in place where vLLM's
ops are); anywhere else, or where the library cannot be built, the twins below run. The twins
are HF's module code, operation for operation, which is what keeps greedy outputs
token-identical to HF `generate()`; the native ops are held to them by
tests/unit/servops_kernels/test_cpu_layer_ops.py.

Why: after the attention kernels went native, these passes (each a fresh allocation in
PyTorch) and the KV write were the largest CPU cost outside the GEMMs (BENCHMARKS.md, "CPU
layer ops").
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from servops_kernels import cpu_gemm, cpu_layer_ops, cpu_prepack
from servops_kernels.attention import backend_for


def linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, packed: torch.Tensor | None = None
) -> torch.Tensor:
    """`F.linear(x, weight, bias)` for x [T, K] (native for bf16 on the CPU backend, see above);
    `packed`, where the engine made one (`servops_kernels.cpu_prepack.pack(weight)`), takes the rows the
    native kernel does not."""
    if native_linear(x, weight, bias, packed):
        return cpu_gemm.linear(x, weight, bias)
    if packed is not None:
        return cpu_prepack.linear(x, packed, bias)
    return F.linear(x, weight, bias)


def native_linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, packed: torch.Tensor | None = None
) -> bool:
    """Whether `linear(x, weight, bias, packed)` runs the native bf16 kernel (the LM head then needs no slicing)."""
    return x.dtype == torch.bfloat16 and _native_gemm(x, weight, bias, packed is not None)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """HF's RMSNorm: weight * (x in float32 / sqrt(mean(x^2) + eps)) cast back to x's dtype."""
    if _native(x, weight):
        return cpu_layer_ops.rms_norm(x, weight, eps)
    dtype = x.dtype
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(dtype)


def fused_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(RMSNorm(residual + x), residual + x): the pre-norm layer's residual add and next norm.

    Natively both happen in place (x and residual are overwritten, as in vLLM); the twin
    returns new tensors. Use the returned pair either way.
    """
    if _native(x, residual, weight):
        cpu_layer_ops.fused_add_rms_norm(x, residual, weight, eps)
        return x, residual
    residual = residual + x
    return rms_norm(residual, weight, eps), residual


def rotary_embedding(
    qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, num_heads: int, num_kv_heads: int, head_dim: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Split a fused qkv projection [T, (H + 2 KVH) * D] into q [T, H, D], k and v [T, KVH, D],
    with q and k rotated (rotate-half RoPE, cos/sin [T, D] per token).

    Natively q and k are rotated in place and all three are views of `qkv`.
    """
    tokens = qkv.shape[0]
    q_size, kv_size = num_heads * head_dim, num_kv_heads * head_dim
    q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)
    q = q.view(tokens, num_heads, head_dim)
    k = k.view(tokens, num_kv_heads, head_dim)
    v = v.view(tokens, num_kv_heads, head_dim)
    if _native(qkv, cos, sin) and cos.stride() == sin.stride():
        cpu_layer_ops.rotary_embedding(qkv, num_heads + num_kv_heads, head_dim, cos, sin)  # q and k, in place
        return q, k, v
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (q * cos) + (_rotate_half(q) * sin), (k * cos) + (_rotate_half(k) * sin), v


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up for a fused gate/up projection [T, 2n] -> [T, n]."""
    if _native(gate_up):
        return cpu_layer_ops.silu_and_mul(gate_up)
    gate, up = gate_up.chunk(2, dim=-1)
    return F.silu(gate) * up


def argmax(logits: torch.Tensor) -> torch.Tensor:
    """`logits.argmax(-1)` for [B, V] logits (native for float32 rows on the CPU backend)."""
    if logits.dim() == 2 and _native(logits) and cpu_layer_ops.supports_argmax(logits):
        return cpu_layer_ops.argmax(logits)
    return logits.argmax(dim=-1)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _native(*tensors: torch.Tensor) -> bool:
    first = tensors[0]
    if (
        first.device.type != "cpu"
        or backend_for(first.device) != "cpu"
        or not cpu_layer_ops.available_or_warn(
            "native CPU layer ops", "RMSNorm, RoPE and SiLU use PyTorch, which is slower"
        )
    ):
        return False
    return cpu_layer_ops.supports_rows(*(t if t.dim() == 2 else t.view(1, -1) for t in tensors))


def _native_gemm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, copy: bool) -> bool:
    if x.device.type != "cpu" or backend_for(x.device) != "cpu" or not cpu_gemm.preferred(x.shape[0], copy):
        return False
    return cpu_gemm.available_or_warn(
        "native bfloat16 GEMM", "bf16 linear layers use PyTorch's software path, several times slower"
    ) and cpu_gemm.supports(x, weight, bias)
