"""Backend choice for paged attention: what the engine calls.

Triton on CUDA. On a CPU, `cpu`: the native decode and prefill kernels
(servops_kernels/cpu_attention.py) and KV write (servops_kernels/cpu_layer_ops.py), built at first use; where
they cannot be built (no compiler, no AVX2/FMA), `torch`: the twins alone, with one warning
saying why. `SERVOPS_ATTENTION_BACKEND=cpu|torch|triton` forces one. Triton on a CPU runs only
under the Triton interpreter, which must be switched on (`TRITON_INTERPRET=1`) *before* the
kernel modules are imported, because `triton.jit` decides at decoration time whether to
compile or interpret; that is how the tests run it.

The functions here keep one signature whatever the backend (documented in
`servops_kernels.torch_ref`); the Triton modules are imported lazily, on the first call that needs
them, so a CPU-only process never pays for importing Triton.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from types import ModuleType

import torch

from servops_kernels import cpu_attention, cpu_gemm, cpu_layer_ops, torch_decode, torch_ref
from servops_kernels.errors import AttentionBackendError
from servops_kernels.torch_decode import DecodePlan

BACKENDS = ("cpu", "torch", "triton")
BACKEND_ENV = "SERVOPS_ATTENTION_BACKEND"


# (SERVOPS_ATTENTION_BACKEND as set, device type) -> the backend chosen for it. Why a cache: the model
# asks about 300 times a step (every layer's ops), and choosing builds a torch.device and checks the
# native libraries; what it depends on does not change within a process except the variable, which
# is part of the key.
_CHOSEN: dict[tuple[str, str], str] = {}


# The backend of the step being run, resolved once by `pinned_backend` (the model runner wraps each
# forward pass in it). Why: every layer's ops ask `backend_for` about 300 times a step, and each answer
# otherwise reads the environment (3.7 us a call measured, about 1 ms of a 47 ms decode step of 16
# sequences on the 2-core box). A context variable, so a pin holds only in the thread that set it.
_PINNED: ContextVar[tuple[str, str] | None] = ContextVar("servops_pinned_backend", default=None)


def _device_kind(device: torch.device | str) -> str:
    return device.type if isinstance(device, torch.device) else str(device)


@contextlib.contextmanager
def pinned_backend(device: torch.device | str) -> Iterator[str]:
    """Within the block, `backend_for` answers for `device`'s type without reading the environment
    again: the backend is chosen once per forward pass (a change of SERVOPS_ATTENTION_BACKEND takes
    effect from the next block)."""
    backend = backend_for(device)
    token = _PINNED.set((_device_kind(device), backend))
    try:
        yield backend
    finally:
        _PINNED.reset(token)


def backend_for(device: torch.device | str) -> str:
    """The backend to use on `device`, honouring SERVOPS_ATTENTION_BACKEND."""
    kind, pinned = _device_kind(device), _PINNED.get()
    if pinned is not None and pinned[0] == kind:
        return pinned[1]
    forced = os.environ.get(BACKEND_ENV, "").strip().lower()
    key = (forced, kind)
    chosen = _CHOSEN.get(key)
    if chosen is None:
        chosen = _CHOSEN[key] = _choose(forced, device)  # an error is raised, never cached
    return chosen


def _choose(forced: str, device: torch.device | str) -> str:
    if forced:
        if forced not in BACKENDS:
            raise AttentionBackendError(f"{BACKEND_ENV}={forced!r} is not a backend; use one of {', '.join(BACKENDS)}")
        if forced == "cpu":
            _check_native_cpu(device)
        return forced
    kind = torch.device(device).type
    if kind == "cuda" and _triton_importable():
        return "triton"
    if kind == "cpu" and cpu_attention.available_or_warn(
        "native CPU attention kernels", "attention uses the PyTorch twins, which are slower"
    ):
        return "cpu"
    return "torch"


def reshape_and_cache(key, value, k_cache, v_cache, slot_mapping) -> None:
    """Write new keys/values at their slots (negative slot = padding); see torch_ref."""
    backend = backend_for(key.device)
    if backend == "triton":
        return _triton_module("cache_write", key.device).reshape_and_cache(key, value, k_cache, v_cache, slot_mapping)
    if backend == "cpu" and cpu_layer_ops.supports_cache_write(key, value, k_cache, v_cache):
        return cpu_layer_ops.reshape_and_cache(key, value, k_cache, v_cache, slot_mapping)
    return torch_ref.reshape_and_cache(key, value, k_cache, v_cache, slot_mapping)


def paged_decode_attention(
    query,
    k_cache,
    v_cache,
    block_tables,
    context_lens,
    scale,
    *,
    max_context_len: int | None = None,
    plan: DecodePlan | None = None,
):
    """One query token per sequence over its paged KV -> [B, num_heads, head_dim].

    `max_context_len`, when the caller knows it, saves a device-to-host sync. `plan` (from
    `plan_decode`, torch backend only) carries the per-step gather shared by all layers.
    """
    backend = backend_for(query.device)
    if backend == "triton":
        return _triton_module("paged_decode", query.device).paged_decode_attention(
            query, k_cache, v_cache, block_tables, context_lens, scale, max_context_len=max_context_len
        )
    if backend == "cpu" and cpu_attention.supports(query, k_cache, v_cache):
        return cpu_attention.paged_decode_attention(query, k_cache, v_cache, block_tables, context_lens, scale)
    return torch_ref.paged_decode_attention(
        query, k_cache, v_cache, block_tables, context_lens, scale, max_context_len=max_context_len, plan=plan
    )


def plan_decode(block_tables, context_lens, k_cache) -> DecodePlan | None:
    """The decode gather plan for one step (built once, used by every layer), or None where
    the backend needs none (Triton and the native CPU kernel read the block tables themselves)."""
    backend = backend_for(k_cache.device)
    if backend == "triton" or (backend == "cpu" and cpu_attention.supports_cache(k_cache)):
        return None
    return torch_decode.plan_decode(block_tables, context_lens, k_cache)


def paged_prefill_attention(
    query, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale, *, max_query_len: int | None = None
):
    """Varlen query chunks over their paged prefix plus, causally, themselves -> [T, h, d].

    `max_query_len`, when the caller knows it, saves a device-to-host sync.
    """
    backend = backend_for(query.device)
    if backend == "triton":
        return _triton_module("paged_prefill", query.device).paged_prefill_attention(
            query, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale, max_query_len=max_query_len
        )
    if backend == "cpu" and cpu_attention.supports(query, k_cache, v_cache):
        return cpu_attention.paged_prefill_attention(
            query, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale
        )
    return torch_ref.paged_prefill_attention(
        query, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale, max_query_len=max_query_len
    )


# On the native CPU backend, a fresh prompt chunk (nothing cached before it) at least this long is
# attended with dense causal SDPA by the model; shorter ones go to the native paged kernel with the
# step's other chunks. Why a length: SDPA takes the keys as the projection computed them, where the
# paged kernel reads them back from the cache, and wins on one long chunk (one 530-token prompt in
# 0.58x the native time in bfloat16, 0.92x in float32; one prompt of 192-384 tokens 1.04-2.07x faster);
# but it runs chunk after chunk, while the native kernel spreads a whole step's chunks over the threads
# in one call, so a step of 14 prompts of 32-256 tokens was 1.02x (float32) and 1.18x (bfloat16)
# faster natively. Measured with `benchmarks/cpu_attention_ab.py --skip-engine` on the 2-core Intel
# box (AVX512-BF16; docs/kernels.md). Where the kernels run 8 lanes (AVX2, no AVX-512) the native kernel
# won on the long prompt too (1.43x SDPA float32, 1.47x bf16, AVX2-only AMD EPYC): no chunk goes dense there.
CPU_DENSE_PREFILL_MIN_TOKENS = 256


def dense_prefill_min_tokens(device: torch.device | str, dtype: torch.dtype, head_dim: int) -> int | None:
    """The fewest new tokens a prompt chunk needs for the caller to attend it itself with dense causal
    SDPA (its own q/k/v behind its cached prefix, where that prefix is no longer than the chunk:
    engine.model.llama.PrefillSplit), sending only the other chunks here; None to send every chunk here.

    None on Triton, whose kernel takes every chunk of a step in one launch, and on the native CPU
    kernel where a bf16 prefill runs on the AMX tiles (one 520-token prompt in 0.6-0.75x of the
    flash SDPA's time, `benchmarks/cpu_attention_ab.py`) or where it runs 8 lanes (no AVX-512: it
    beat SDPA on every chunk length measured); 1 where `paged_prefill_attention` would be the
    PyTorch twin, which gathers and masks, so any such chunk is cheaper dense;
    CPU_DENSE_PREFILL_MIN_TOKENS on the other native CPU paths.
    """
    backend = backend_for(device)
    if backend == "triton":
        return None
    if backend == "cpu" and cpu_attention.supports_layout(dtype, head_dim):
        native_wins = cpu_attention.prefill_on_amx(dtype, head_dim) or cpu_gemm.eight_lanes()
        return None if native_wins else CPU_DENSE_PREFILL_MIN_TOKENS
    return 1


def describe_prefill(device: torch.device | str, dtype: torch.dtype, head_dim: int) -> str:
    """One line for the start-up log: where prompt chunks are attended, and on which CPU units."""
    backend, least = backend_for(device), dense_prefill_min_tokens(device, dtype, head_dim)
    kernel = {"triton": "the Triton kernel", "cpu": "the native CPU kernel", "torch": "the PyTorch twin"}[backend]
    if backend == "cpu" and dtype == torch.bfloat16:
        units = {"amx": "the AMX tiles", "avx512-bf16": "AVX512-BF16", "avx2": "AVX2 float lanes"}
        kernel += f", bf16 on {units[cpu_attention.bf16_prefill_units(head_dim)]}"
    if least is None:
        return f"every prompt chunk on {kernel}"
    if least == 1:
        return f"fresh chunks on dense SDPA, chunks behind a cached prefix on {kernel}"
    return f"fresh chunks of {least}+ tokens on dense SDPA, the others on {kernel}"


def _check_native_cpu(device: torch.device | str) -> None:
    if torch.device(device).type != "cpu":
        raise AttentionBackendError(
            f"{BACKEND_ENV}=cpu runs on the CPU only, not on {torch.device(device).type}; "
            f"unset it or set {BACKEND_ENV}=triton"
        )
    if not cpu_attention.available():
        raise AttentionBackendError(
            f"{BACKEND_ENV}=cpu needs the native attention kernels, which cannot be built here "
            f"({cpu_attention.unavailable_reason()}); set {BACKEND_ENV}=torch"
        )


def _triton_importable() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def _triton_module(name: str, device: torch.device) -> ModuleType:
    """Import servops_kernels.<name> and check it can run on `device` (compiled on CUDA, else interpreted)."""
    try:
        module = importlib.import_module(f"{__package__}.{name}")
    except ImportError as exc:
        raise AttentionBackendError(
            f"{BACKEND_ENV}=triton needs the triton package ({exc}); install triton or set {BACKEND_ENV}=torch"
        ) from exc
    if torch.device(device).type != "cuda" and not module.INTERPRETED:
        raise AttentionBackendError(
            f"{BACKEND_ENV}=triton on {torch.device(device).type} needs TRITON_INTERPRET=1 in the environment "
            f"before Python starts (the kernels were loaded for a GPU); set it, or set {BACKEND_ENV}=torch"
        )
    return module
