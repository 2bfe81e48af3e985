"""The terms of vLLM's per-GPU memory budget, each calibrated against a published measurement.

vLLM V1 (`gpu_worker.py::determine_available_memory`, docs/reference.md §4.1):

    requested    = total × gpu_memory_utilization
    available_kv = requested − weights − peak_activation − non_torch [− cudagraph, 0.20+]

This module computes each term on its own so that memory.py reads as the formula and each
constant sits next to its source (docs/reference.md §4.2, §4.1 unless noted). All functions are pure
and return bytes or GiB as their names say.
"""

from __future__ import annotations

import math

from advisor.catalog.models import ModelSpec
from advisor.catalog.vllm_versions import CUDAGRAPH_PROFILED_FROM, LOW_ACTIVATION_FROM, Version
from advisor.errors import UserError
from advisor.units import GIB

# --- weights ---------------------------------------------------------------------------

DTYPE_BYTES = {"bfloat16": 2.0, "float16": 2.0, "half": 2.0, "float32": 4.0, "float": 4.0}

# Bytes per weight of the quantized linear layers. fp8: 1 byte (+ block scales, negligible);
# checked: Llama-3.1-8B `--quantization fp8` → 8.49 GiB and Llama-3.3-70B FP8 → 67.72 GiB
# (docs/reference.md §4.1) are reproduced to 0.1 % when embeddings and lm_head stay 16-bit.
# int4 (AWQ/GPTQ/bnb): 4 bits + one fp16 scale and a 4-bit zero per group of 128 weights
# = 0.52 bytes (assumption from the formats' group size 128; not measured in the reference).
# mxfp4: 4 bits + an 8-bit scale per 32 = 0.53; nvfp4: 4 bits + an fp8 scale per 16 = 0.56
# (the formats' block sizes; not measured in the reference).
QUANT_WEIGHT_BYTES = {
    "fp8": 1.0,
    "fbgemm_fp8": 1.0,
    "modelopt": 1.0,
    "ptpc_fp8": 1.0,
    "int8": 1.0,
    "w8a8": 1.0,
    "experts_int8": 1.0,
    "awq": 0.52,
    "awq_marlin": 0.52,
    "gptq": 0.52,
    "gptq_marlin": 0.52,
    "bitsandbytes": 0.52,
    "marlin": 0.52,
    "int4": 0.52,
    "mxfp4": 0.53,
    "modelopt_fp4": 0.56,
    "nvfp4": 0.56,
}


def weight_bytes_per_param(dtype_bytes: float, quantization: str | None) -> float:
    """Linear-layer bytes per parameter under a `--quantization` method (None = dtype)."""
    if quantization is None:
        return dtype_bytes
    if quantization.lower() not in QUANT_WEIGHT_BYTES:
        raise UserError(
            f"--quantization {quantization!r}: not modelled; use one of {', '.join(QUANT_WEIGHT_BYTES)} "
            "(or leave it out for the checkpoint's own)"
        )
    return QUANT_WEIGHT_BYTES[quantization.lower()]


def weights_gib_per_gpu(
    model: ModelSpec,
    dtype_bytes: float,
    quantization: str | None,
    tp: int,
    pp: int,
    rope_cache: bool = True,
) -> float:
    """Weights one GPU holds: linear layers at the quantized width, embeddings at dtype width.

    Sharded evenly over TP×PP ranks (an approximation for PP, where the first and last stage
    also hold the embeddings). Plus one rotary cos/sin cache per process
    (max_position × rotary_dim × 2 bytes): it is what makes Llama-3.1-8B's 14.96 GiB of
    parameters load as the 14.99 GiB vLLM reports.
    """
    checkpoint_bytes = DTYPE_BYTES.get(model.torch_dtype or "")
    if model.native_weight_bytes is not None and quantization in (None, model.native_quantization):
        sharded = float(model.native_weight_bytes)
        if not model.native_quantization and checkpoint_bytes and checkpoint_bytes != dtype_bytes:
            sharded *= dtype_bytes / checkpoint_bytes  # cast at load: a float32 checkpoint run in bf16 halves
    else:
        linear = model.param_count - model.embedding_param_count
        sharded = linear * weight_bytes_per_param(dtype_bytes, quantization)
        sharded += model.embedding_param_count * dtype_bytes
    rotary_dim = model.qk_rope_head_dim or model.head_dim
    rope_bytes = model.max_position_embeddings * rotary_dim * 2 if rope_cache else 0
    return (sharded / (tp * pp) + rope_bytes) / GIB


# --- KV cache --------------------------------------------------------------------------


def kv_bytes_per_token_per_gpu(model: ModelSpec, kv_dtype_bytes: float, tp: int, pp: int) -> int:
    """KV bytes one GPU stores per token, all its layers (vLLM `kv_cache_interface.py`).

    GQA: 2 (K and V) × layers/PP × max(1, kv_heads/TP) × head_dim × bytes — KV heads are
    replicated, not split, when kv_heads < TP. MLA: coef 1 × layers/PP × (kv_lora_rank +
    qk_rope_head_dim) × bytes — one latent per token, held whole on every TP rank.
    """
    layers = math.ceil(model.num_hidden_layers / pp)
    if model.attention == "mla":
        return int(layers * model.head_dim * kv_dtype_bytes)
    heads = max(1, model.num_key_value_heads // tp)
    return int(2 * layers * heads * model.head_dim * kv_dtype_bytes)


def blocks_per_request(model: ModelSpec, max_model_len: int, block_size: int, max_num_batched_tokens: int) -> int:
    """Blocks one request of `max_model_len` tokens needs (vLLM `max_memory_usage_bytes`).

    Full attention: ceil(L / block). Sliding window (Mistral v0.1): the window plus one
    prefill chunk, + 1 block, never more than full attention would need.
    """
    full = math.ceil(max_model_len / block_size)
    if model.sliding_window is None:
        return full
    tokens = min(model.sliding_window - 1 + max_num_batched_tokens, max_model_len)
    return min(full, math.ceil(tokens / block_size) + 1)


# --- peak activation of the profiling pass ----------------------------------------------

# activation = A × T × (hidden + ffn_active) × 2 B  +  B × S × vocab × 4 B
#   T = max_num_batched_tokens (tokens in the dummy forward), S = max_num_seqs (dummy
#   sampler requests, fp32 logits). A, B: least-squares fit to vLLM 0.19.0 on H100
#   (T 8192, S 1024): Llama-3.1-8B 1.89 GiB (model 1.87), Qwen2.5-7B 2.21 (2.23),
#   Mixtral 1.21 (1.21); Qwen3-8B 2.21 is under-predicted (2.07, −6 %).
ACTIVATION_TOKEN_COEF = 1.73
ACTIVATION_LOGITS_COEF = 2.82
# Older vLLM (before LOW_ACTIVATION_FROM) measured 4.76 GiB for Llama-3.1-8B on H100 at
# util 0.90 (llm-d empirical doc, the 51.38 GiB KV line): 4.76 / 1.866 = 2.551.
OLD_ACTIVATION_FACTOR = 2.551
# Peak falls with PP: Llama-8B 1.89 → 1.10 (PP2), 1.05 (PP4). Ratios used per stage count.
PP_ACTIVATION_FACTOR = {1: 1.0, 2: 0.582, 3: 0.57}
PP_ACTIVATION_FACTOR_4_PLUS = 0.556


def activation_gib(
    model: ModelSpec, max_num_batched_tokens: int, max_num_seqs: int, pp: int, version: Version
) -> float:
    """Peak activation of vLLM's profiling run; does not change with TP or max_model_len."""
    ffn = model.intermediate_size
    if model.is_moe:
        ffn = model.intermediate_size * max(1, model.num_experts_per_tok)
    tokens_term = ACTIVATION_TOKEN_COEF * max_num_batched_tokens * (model.hidden_size + ffn) * 2
    logits_term = ACTIVATION_LOGITS_COEF * max_num_seqs * model.vocab_size * 4
    peak = (tokens_term + logits_term) / GIB
    if version < LOW_ACTIVATION_FROM:
        peak *= OLD_ACTIVATION_FACTOR
    return peak * PP_ACTIVATION_FACTOR.get(pp, PP_ACTIVATION_FACTOR_4_PLUS)


def engine_cpu_activation_gib(
    model: ModelSpec, dtype_bytes: float, tokens: int, seqs: int, max_model_len: int
) -> float:
    """The bundled engine's deterministic CPU estimate (engine/model/memory_profile.py
    `estimate_activation_bytes`, its documented contract): per-token hidden/q/k/v/MLP buffers,
    fp32 attention scores of one T-token prefill chunk against at most max_model_len keys,
    and fp32 logits/probs/sorted copy."""
    q_width = model.num_attention_heads * model.head_dim
    kv_width = model.num_key_value_heads * model.head_dim
    per_token = (3 * model.hidden_size + 2 * q_width + 2 * kv_width + 3 * model.intermediate_size) * dtype_bytes
    attention = model.num_attention_heads * tokens * min(tokens, max_model_len) * 4 + 2 * tokens * q_width * dtype_bytes
    sampling = 3 * min(seqs, tokens) * model.vocab_size * 4
    return (tokens * per_token + attention + sampling) / GIB


# --- non-torch memory (CUDA context, cuBLAS, NCCL buffers) -------------------------------

NON_TORCH_TP1_OLD_GIB = 0.13  # older vLLM, Llama-3.1-8B H100 (the 51.38 GiB KV line)
NON_TORCH_TP1_GIB = 0.20  # mid-range of the measured 0.13–0.27 GiB at TP 1
NON_TORCH_TP_GIB = 2.1  # ~2.1 GiB per GPU at TP ≥ 2 (NCCL buffers)
NON_TORCH_PP_GIB = 0.07  # ~0.07 GiB at PP ≥ 2 (TP 1)


def non_torch_gib(tp: int, pp: int, version: Version) -> float:
    """Memory outside torch's allocator; dominated by NCCL buffers once TP > 1."""
    if tp >= 2:
        return NON_TORCH_TP_GIB
    if pp >= 2:
        return NON_TORCH_PP_GIB
    return NON_TORCH_TP1_OLD_GIB if version < LOW_ACTIVATION_FROM else NON_TORCH_TP1_GIB


# --- CUDA-graph pool (subtracted from the KV budget from 0.20) ----------------------------

# Estimate: K × layers/PP × capture size × hidden × 2 B, capture size = min(2 × max_num_seqs,
# 512) (vLLM's default largest capture size). K = 8 puts Llama-3.1-8B at 1.0 GiB, the mean of
# the measured 0.51–1.85 GiB (v0.19.0); capped at the measured maximum 1.85 GiB.
CUDAGRAPH_COEF = 8
CUDAGRAPH_MAX_CAPTURE = 512
CUDAGRAPH_CAP_GIB = 1.85


def cudagraph_gib(model: ModelSpec, max_num_seqs: int, pp: int, enforce_eager: bool, version: Version) -> float:
    """CUDA-graph memory vLLM subtracts before sizing KV; 0 before 0.20 or with --enforce-eager."""
    if enforce_eager or version < CUDAGRAPH_PROFILED_FROM:
        return 0.0
    layers = math.ceil(model.num_hidden_layers / pp)
    capture = min(2 * max_num_seqs, CUDAGRAPH_MAX_CAPTURE)
    estimate = CUDAGRAPH_COEF * layers * capture * model.hidden_size * 2 / GIB
    return min(estimate, CUDAGRAPH_CAP_GIB)
