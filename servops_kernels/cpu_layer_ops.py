"""Native CPU layer ops (csrc/layer_ops_cpu.cpp), called through ctypes.

The decoder layer's elementwise work in one pass each: the KV-cache write, RMSNorm (alone and
fused with the residual add), the rotate-half rotary embedding and SiLU-and-multiply, with
vLLM's names and in-place conventions. Same results as the PyTorch twins in
`servops_kernels.layer_ops` (bit for bit for the KV write, the rotary embedding and the residual
add; a few ulps for RMSNorm and SiLU). float32 or bfloat16 rows (the KV write: any dtype); in
bfloat16 the math is float32 on widened values, rounded to bf16 wherever the twin makes a bf16
tensor, so the results are the twins' again (RMSNorm and SiLU at most a rounding step apart).
Callers check `supports*` first; `servops_kernels.layer_ops` does, and falls back to the twins.

Compiled with `-ffp-contract=off`, so the compiler never fuses a product into a sum that
PyTorch rounds separately.
"""

from __future__ import annotations

import ctypes

import torch

from servops_kernels.cpu_build import NativeLibrary

ABI_VERSION = 3
EXTRA_FLAGS = ("-ffp-contract=off",)


_POINTER, _I32, _I64, _F32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_float
_NATIVE = NativeLibrary(
    "layer_ops_cpu.cpp",
    "servops_layer_ops_abi",
    ABI_VERSION,
    {
        "servops_reshape_and_cache": [_POINTER, _I64, _POINTER, _I64, _POINTER, _POINTER, _POINTER, _I32, _I64, _I32],
        "servops_rms_norm_f32": [_POINTER, _I64, _POINTER, _I64, _POINTER, _I32, _I32, _F32, _I32],
        "servops_fused_add_rms_norm_f32": [_POINTER, _I64, _POINTER, _I64, _POINTER, _I32, _I32, _F32, _I32],
        "servops_rotary_embedding_f32": [_POINTER, _I64, _I32, _I32, _POINTER, _POINTER, _I64, _I32, _I32],
        "servops_silu_and_mul_f32": [_POINTER, _I64, _POINTER, _I64, _I32, _I32, _I32],
        "servops_rms_norm_bf16": [_POINTER, _I64, _POINTER, _I64, _POINTER, _I32, _I32, _F32, _I32],
        "servops_fused_add_rms_norm_bf16": [_POINTER, _I64, _POINTER, _I64, _POINTER, _I32, _I32, _F32, _I32],
        "servops_rotary_embedding_bf16": [_POINTER, _I64, _I32, _I32, _POINTER, _POINTER, _I64, _I32, _I32],
        "servops_silu_and_mul_bf16": [_POINTER, _I64, _POINTER, _I64, _I32, _I32, _I32],
        "servops_argmax_f32": [_POINTER, _I64, _POINTER, _I32, _I32, _I32],
    },
    EXTRA_FLAGS,
)
library, available, unavailable_reason = _NATIVE.library, _NATIVE.available, _NATIVE.unavailable_reason
available_or_warn = _NATIVE.available_or_warn


def _rows_ok(tensor: torch.Tensor) -> bool:
    """CPU, 2-D, elements contiguous within a row (rows may be strided)."""
    return tensor.device.type == "cpu" and tensor.dim() == 2 and (tensor.stride(1) == 1 or tensor.shape[1] <= 1)


_ROW_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16"}


def supports_rows(*tensors: torch.Tensor) -> bool:
    """Whether the row-wise ops (norms, rotary, silu) can take these tensors natively: all of one
    dtype, float32 or bfloat16 (the engine's norm weights and cos/sin tables are in its dtype)."""
    dtype = tensors[0].dtype
    return dtype in _ROW_DTYPES and all(t.dtype == dtype and _rows_ok(t) for t in tensors) and available()


def _kernel(name: str, tensor: torch.Tensor):
    """The entry point `servops_<name>_<f32|bf16>` for the tensor's dtype."""
    return getattr(library(), f"servops_{name}_{_ROW_DTYPES[tensor.dtype]}")


def supports_cache_write(key: torch.Tensor, value: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> bool:
    """key/value [T, kv_heads, head_dim] with each token's heads contiguous, into contiguous CPU caches."""
    return (
        all(
            rows.device.type == "cpu"
            and rows.dtype == k_cache.dtype == v_cache.dtype
            and rows.stride(-1) == 1
            and rows.stride(-2) == rows.shape[-1]
            for rows in (key, value)
        )
        and k_cache.is_contiguous()
        and v_cache.is_contiguous()
        and available()
    )


def reshape_and_cache(key, value, k_cache, v_cache, slot_mapping) -> None:
    """Write row t of key/value to cache slot slot_mapping[t]; a negative slot is padding
    (check `supports_cache_write` first)."""
    assert supports_cache_write(key, value, k_cache, v_cache), "call supports_cache_write() first"
    slots = slot_mapping.to(torch.int64).contiguous()
    num_tokens = key.shape[0]
    if num_tokens == 0:
        return
    row_bytes = key.shape[1] * key.shape[2] * key.element_size()
    if slots.numel() and int(slots.max()) >= k_cache.shape[0] * k_cache.shape[1]:
        raise ValueError(f"slot {int(slots.max())} is past the cache's {k_cache.shape[0] * k_cache.shape[1]} slots")
    library().servops_reshape_and_cache(
        key.data_ptr(),
        key.stride(0) * key.element_size(),
        value.data_ptr(),
        value.stride(0) * value.element_size(),
        k_cache.data_ptr(),
        v_cache.data_ptr(),
        slots.data_ptr(),
        num_tokens,
        row_bytes,
        torch.get_num_threads(),
    )


def _check_shapes(what: str, ok: bool) -> None:
    """The kernels trust their shapes and dtypes; a mismatch here would read or write out of bounds."""
    if not ok:
        raise ValueError(f"{what}: shapes do not match")


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """weight * x / sqrt(mean(x^2) + eps), row by row, into a new tensor."""
    _check_shapes("rms_norm", weight.numel() == x.shape[1] and weight.dtype == x.dtype)
    weight = weight.contiguous()
    out = torch.empty(x.shape, dtype=x.dtype)
    if x.shape[0]:
        _kernel("rms_norm", x)(
            x.data_ptr(),
            x.stride(0),
            out.data_ptr(),
            out.stride(0),
            weight.data_ptr(),
            x.shape[0],
            x.shape[1],
            float(eps),
            torch.get_num_threads(),
        )
    return out


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float) -> None:
    """In place, as vLLM's op: residual += x, then x = RMSNorm(residual) * weight."""
    _check_shapes(
        "fused_add_rms_norm",
        x.shape == residual.shape and weight.numel() == x.shape[1] and x.dtype == residual.dtype == weight.dtype,
    )
    weight = weight.contiguous()
    if x.shape[0]:
        _kernel("fused_add_rms_norm", x)(
            x.data_ptr(),
            x.stride(0),
            residual.data_ptr(),
            residual.stride(0),
            weight.data_ptr(),
            x.shape[0],
            x.shape[1],
            float(eps),
            torch.get_num_threads(),
        )


def rotary_embedding(rows: torch.Tensor, num_heads: int, head_dim: int, cos: torch.Tensor, sin: torch.Tensor) -> None:
    """In place: the first `num_heads` heads of every row (queries, then keys, of a fused
    qkv projection) rotated by their token's cos/sin rows [T, head_dim]."""
    _check_shapes(
        "rotary_embedding",
        rows.shape[1] >= num_heads * head_dim
        and head_dim % 2 == 0
        and cos.shape == sin.shape
        and cos.stride() == sin.stride()
        and rows.dtype == cos.dtype == sin.dtype
        and cos.shape[0] >= rows.shape[0]
        and cos.shape[1] >= head_dim,
    )
    if rows.shape[0]:
        _kernel("rotary_embedding", rows)(
            rows.data_ptr(),
            rows.stride(0),
            num_heads,
            head_dim,
            cos.data_ptr(),
            sin.data_ptr(),
            cos.stride(0),
            rows.shape[0],
            torch.get_num_threads(),
        )


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """[T, 2n] -> silu(gate_up[:, :n]) * gate_up[:, n:] in a new [T, n] tensor."""
    _check_shapes("silu_and_mul", gate_up.shape[1] % 2 == 0)
    half = gate_up.shape[1] // 2
    out = torch.empty(gate_up.shape[0], half, dtype=gate_up.dtype)
    if gate_up.shape[0]:
        _kernel("silu_and_mul", gate_up)(
            gate_up.data_ptr(),
            gate_up.stride(0),
            out.data_ptr(),
            out.stride(0),
            gate_up.shape[0],
            half,
            torch.get_num_threads(),
        )
    return out


def supports_argmax(logits: torch.Tensor) -> bool:
    """float32 CPU rows [B, V] with V >= 1, elements contiguous within a row."""
    return logits.dtype == torch.float32 and _rows_ok(logits) and logits.shape[1] >= 1 and available()


def argmax(logits: torch.Tensor) -> torch.Tensor:
    """Each row's first largest index (a NaN counting as largest), as `logits.argmax(-1)`: int64 [B].

    Why native: PyTorch's CPU argmax took 4 ms at two threads and 12 ms at one over 64 rows of a
    49k vocabulary, a tenth of a decode step there; one vectorised pass per row takes a fraction.
    """
    out = torch.empty(logits.shape[0], dtype=torch.int64)
    if logits.shape[0]:
        rows, cols, threads = logits.shape[0], logits.shape[1], torch.get_num_threads()
        library().servops_argmax_f32(logits.data_ptr(), logits.stride(0), out.data_ptr(), rows, cols, threads)
    return out
