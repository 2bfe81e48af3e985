"""Llama-family decoder (Llama, Mistral, Qwen2, SmolLM2) over a paged KV cache.

Tokens of all scheduled requests are flattened into one `[num_tokens]` batch (no padding).
Each attention layer writes the new keys/values into its cache slots, then attends: decode
tokens (first `num_decodes` rows) with `paged_decode_attention`, prompt chunks with
`paged_prefill_attention`. q/k/v and gate/up projections are fused into one matmul each
(fewer, larger GEMMs are faster on CPU). RoPE inverse frequencies come from transformers'
own init functions, so every rope type they support (default, linear, dynamic, yarn,
llama3, longrope) matches Hugging Face exactly up to the original context length.
Numerics follow the HF modules (float32 RMSNorm, rotate-half RoPE) so greedy outputs are
token-identical in float32; the norms, RoPE and SiLU-and-multiply come from `servops_kernels.layer_ops`
(native on the CPU backend, PyTorch twins elsewhere), with vLLM's residual stream: each norm
adds the residual it is handed, in place where native.
"""

from __future__ import annotations

import dataclasses
import glob
import os

import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from torch import nn

from servops_kernels.attention import DecodePlan, paged_decode_attention, paged_prefill_attention, reshape_and_cache
from servops_kernels.layer_ops import (
    fused_add_rms_norm,
    linear,
    native_linear,
    rms_norm,
    rotary_embedding,
    silu_and_mul,
)

SUPPORTED_ARCHITECTURES = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM")
LM_HEAD_SLICE = 1024  # vocabulary rows per LM-head GEMM on a CPU (see compute_logits)


@dataclasses.dataclass
class AttentionMetadata:
    """Per-step tensors shared by every layer (vLLM's names)."""

    slot_mapping: torch.Tensor  # [T] long
    num_decodes: int  # the first num_decodes tokens are decodes, one per sequence
    block_tables: torch.Tensor  # [B, max_blocks] int32, decodes first
    context_lens: torch.Tensor  # [B] int32, tokens in cache after this step's write
    cu_seqlens_q_prefill: torch.Tensor  # [num_prefills + 1], offsets into the prefill tokens
    cos: torch.Tensor  # [T, head_dim]
    sin: torch.Tensor  # [T, head_dim]
    max_decode_context_len: int = 0  # host-side maxima, so the kernels need no device sync
    max_prefill_query_len: int = 0
    # how the step's prompt chunks split between dense SDPA and the paged kernel; None where every
    # chunk goes to the paged kernel (Triton always; the native CPU kernels without a long fresh chunk)
    prefill_split: PrefillSplit | None = None
    # the decode twin only: the decode batch's chunked gather, built once per step (servops_kernels.torch_decode)
    decode_plan: DecodePlan | None = None
    # rows after the step's tokens that only pad the batch to a GEMM row bucket (servops_kernels.cpu_prepack.
    # bucket_rows): slot -1, position 0; attention reads none of them and gives them zero rows
    num_padding: int = 0


@dataclasses.dataclass
class PrefillSplit:
    """Prompt chunks of one step, split between dense SDPA and the paged prefill kernel.

    A chunk attends to its prompt's cached prefix and to its own new keys. Dense: causal SDPA on
    the prefix's keys and values gathered from the cache followed by the chunk's own (as computed),
    with the queries padded in front by one zero row per prefix token, so one square causal call
    gives every chunk row exactly the keys up to its position (the padding rows are dropped; they
    cost prefix/(prefix + chunk) more work). Hence dense only where the prefix is no longer than
    the chunk: a fresh prompt (no prefix), one behind a prefix-cache hit on its chat template's
    system prompt, an early chunk of a chunked prefill. The rest (continued chunks behind long
    prefixes) goes to the paged kernel. Which chunks are long enough for dense is the backend's
    `servops_kernels.attention.dense_prefill_min_tokens`: every one where the paged kernel is the PyTorch
    twin (sending a whole step through it for one continued chunk, a padded gather of every
    chunk's context plus a padded mask, cost about a quarter of a mixed step on CPU); only long
    ones on the native CPU kernels, which beat per-chunk SDPA on a step of short prompts.
    """

    dense_spans: list[tuple[int, int]]  # (start, end) absolute token rows of the chunks attended dense
    # per dense span, the cache slots of its prompt's positions [0, prefix) (long), None without a prefix
    dense_prefix_slots: list[torch.Tensor | None] = dataclasses.field(default_factory=list)
    paged_rows: torch.Tensor | None = None  # [n] long: absolute token rows of the chunks sent to the kernel
    paged_block_tables: torch.Tensor | None = None  # their block tables, context lens, offsets
    paged_context_lens: torch.Tensor | None = None
    paged_cu_seqlens_q: torch.Tensor | None = None
    paged_max_query_len: int = 0


class Linear(nn.Linear):
    """nn.Linear (same parameters and names) whose product goes through `servops_kernels.layer_ops.linear`:
    natively in bfloat16 for few rows (every row on a CPU without bf16 arithmetic), else on the
    weight packed for oneDNN where the runner packed it (`packed`, not a parameter: no checkpoint
    holds it), else `F.linear`."""

    packed: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias, self.packed)


class RMSNorm(nn.Module):
    """HF's RMSNorm; given a residual, vLLM's fused form: (norm(x + residual), x + residual)."""

    def __init__(self, hidden_size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        if residual is None:
            return rms_norm(x, self.weight, self.eps)
        return fused_add_rms_norm(x, residual, self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, config, bias: bool) -> None:
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.num_heads
        self.q_size = self.num_heads * self.head_dim
        self.kv_size = self.num_kv_heads * self.head_dim
        self.scale = self.head_dim**-0.5
        self.qkv_proj = Linear(config.hidden_size, self.q_size + 2 * self.kv_size, bias=bias)
        self.o_proj = Linear(self.q_size, config.hidden_size, bias=getattr(config, "attention_bias", False) and bias)

    def forward(
        self, x: torch.Tensor, meta: AttentionMetadata, kv_cache: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        num_tokens = x.shape[0]
        real = num_tokens - meta.num_padding
        q, k, v = rotary_embedding(
            self.qkv_proj(x), meta.cos, meta.sin, self.num_heads, self.num_kv_heads, self.head_dim
        )
        k_cache, v_cache = kv_cache
        reshape_and_cache(k, v, k_cache, v_cache, meta.slot_mapping)
        nd = meta.num_decodes
        parts = []
        if nd:
            parts.append(
                paged_decode_attention(
                    q[:nd],
                    k_cache,
                    v_cache,
                    meta.block_tables[:nd],
                    meta.context_lens[:nd],
                    self.scale,
                    max_context_len=meta.max_decode_context_len,
                    plan=meta.decode_plan,
                )
            )
        if nd < real and meta.prefill_split is not None:
            parts.append(self._split_prefill(q, k, v, kv_cache, meta.prefill_split, nd, real))
        elif nd < real:
            parts.append(
                paged_prefill_attention(
                    q[nd:real],
                    k_cache,
                    v_cache,
                    meta.block_tables[nd:],
                    meta.cu_seqlens_q_prefill,
                    meta.context_lens[nd:],
                    self.scale,
                    max_query_len=meta.max_prefill_query_len,
                )
            )
        if meta.num_padding:
            parts.append(parts[0].new_zeros((meta.num_padding, *parts[0].shape[1:])))
        out = parts[0] if len(parts) == 1 else torch.cat(parts)
        return self.o_proj(out.reshape(num_tokens, self.q_size))

    def _split_prefill(self, q, k, v, kv_cache, split: PrefillSplit, num_decodes: int, num_tokens: int) -> torch.Tensor:
        """Prefill attention split between dense SDPA and the paged kernel: see PrefillSplit."""
        out = q.new_empty(num_tokens - num_decodes, self.num_heads, self.head_dim)
        k_cache, v_cache = kv_cache
        for (start, end), prefix in zip(split.dense_spans, split.dense_prefix_slots, strict=True):
            queries, keys, values = q[start:end], k[start:end], v[start:end]
            if prefix is not None:  # the cached prefix's keys and values, then zero query rows in front
                rows = (-1, self.num_kv_heads, self.head_dim)
                keys = torch.cat((k_cache.view(rows).index_select(0, prefix), keys))
                values = torch.cat((v_cache.view(rows).index_select(0, prefix), values))
                queries = torch.cat((queries.new_zeros(prefix.shape[0], self.num_heads, self.head_dim), queries))
            # 4-D inputs: with 3-D ones (or GQA) PyTorch's CPU SDPA drops to its math kernel,
            # measured 2.9x slower than the flash kernel on SmolLM2's 9/3 heads
            attended = F.scaled_dot_product_attention(
                queries[None].transpose(1, 2),
                keys[None].transpose(1, 2),
                values[None].transpose(1, 2),
                is_causal=True,
                scale=self.scale,
                enable_gqa=self.num_heads != self.num_kv_heads,
            )[0].transpose(0, 1)
            out[start - num_decodes : end - num_decodes] = attended[attended.shape[0] - (end - start) :]
        if split.paged_rows is not None:
            cached = paged_prefill_attention(
                q.index_select(0, split.paged_rows),
                k_cache,
                v_cache,
                split.paged_block_tables,
                split.paged_cu_seqlens_q,
                split.paged_context_lens,
                self.scale,
                max_query_len=split.paged_max_query_len,
            )
            out.index_copy_(0, split.paged_rows - num_decodes, cached)
        return out


class MLP(nn.Module):
    def __init__(self, config) -> None:
        super().__init__()
        bias = getattr(config, "mlp_bias", False)
        self.intermediate_size = config.intermediate_size
        self.gate_up_proj = Linear(config.hidden_size, 2 * config.intermediate_size, bias=bias)
        self.down_proj = Linear(config.intermediate_size, config.hidden_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(silu_and_mul(self.gate_up_proj(x)))


class DecoderLayer(nn.Module):
    def __init__(self, config, qkv_bias: bool) -> None:
        super().__init__()
        self.self_attn = Attention(config, qkv_bias)
        self.mlp = MLP(config)
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(
        self, h: torch.Tensor, residual: torch.Tensor | None, meta: AttentionMetadata, kv_cache
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """vLLM's residual stream: returns (this layer's MLP output, the residual before it);
        the next norm adds them. The sums are HF's `h = h + sublayer(norm(h))`, bit for bit."""
        if residual is None:
            residual, h = h, self.input_layernorm(h)
        else:
            h, residual = self.input_layernorm(h, residual)
        h = self.self_attn(h, meta, kv_cache)
        h, residual = self.post_attention_layernorm(h, residual)
        return self.mlp(h), residual


class LlamaForCausalLM(nn.Module):
    def __init__(self, config) -> None:
        super().__init__()
        self.config = config
        arch = (getattr(config, "architectures", None) or ["LlamaForCausalLM"])[0]
        qkv_bias = arch == "Qwen2ForCausalLM" or bool(getattr(config, "attention_bias", False))
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(config, qkv_bias) for _ in range(config.num_hidden_layers)])
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.tie_word_embeddings = bool(getattr(config, "tie_word_embeddings", False))
        self.lm_head = (
            None if self.tie_word_embeddings else nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        )
        self.head_dim = self.layers[0].self_attn.head_dim
        self.num_kv_heads = config.num_key_value_heads
        self.head_packed: torch.Tensor | None = None  # the LM head's weight packed for oneDNN (see Linear)

    def forward(self, input_ids: torch.Tensor, meta: AttentionMetadata, kv_caches: list) -> torch.Tensor:
        h, residual = self.embed_tokens(input_ids), None
        for layer, kv_cache in zip(self.layers, kv_caches, strict=False):
            h, residual = layer(h, residual, meta, kv_cache)
        return self.norm(h, residual)[0]

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits [rows, vocab] in float32.

        On a CPU the vocabulary goes through in slices of LM_HEAD_SLICE rows of the weight,
        each GEMM writing straight into its columns of one output: a 1,024 x 576 float32
        slice (2.4 MB) stays in cache across the batch's rows, where one GEMM over the whole
        113 MB head streams it from memory. Measured 1.26-1.34x on SmolLM2's head at 16-240
        rows, bit-identical (BENCHMARKS.md, "CPU layer ops"). Where the native bf16 kernel
        takes the rows (servops_kernels.layer_ops.native_linear), or the runner packed the head for
        oneDNN (`head_packed`, servops_kernels.cpu_prepack), the whole head is one call.
        """
        weight = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        if hidden.device.type != "cpu" or hidden.shape[0] == 0:
            return F.linear(hidden, weight).float()
        if native_linear(hidden, weight) or self.head_packed is not None:
            # native: reads the weight in place, one pass, no slices; packed: oneDNN's blocked
            # layout already keeps its tiles in cache (1.7-2.3x the slices at 8-64 rows)
            return linear(hidden, weight, None, self.head_packed).float()
        out = torch.empty(hidden.shape[0], weight.shape[0], dtype=hidden.dtype)
        for start in range(0, weight.shape[0], LM_HEAD_SLICE):
            end = start + LM_HEAD_SLICE
            torch.mm(hidden, weight[start:end].t(), out=out[:, start:end])
        return out.float()

    # ---- weights -------------------------------------------------------------------
    def load_weights(self, model_dir: str) -> None:
        """Load HF safetensors names (q/k/v, gate/up separate) into the fused modules."""
        files = sorted(glob.glob(os.path.join(model_dir, "*.safetensors")))
        if not files:
            raise FileNotFoundError(f"no *.safetensors files in {model_dir}")
        hf: dict[str, torch.Tensor] = {}
        for path in files:
            hf.update(load_file(path))
        hf = {k.removeprefix("model."): v for k, v in hf.items()}
        own: dict[str, torch.Tensor] = {}
        for i in range(len(self.layers)):
            p = f"layers.{i}."
            for suffix in ("weight", "bias"):
                parts = [hf.get(f"{p}self_attn.{n}_proj.{suffix}") for n in "qkv"]
                if parts[0] is not None:
                    own[f"{p}self_attn.qkv_proj.{suffix}"] = torch.cat(parts)
                parts = [hf.get(f"{p}mlp.{n}_proj.{suffix}") for n in ("gate", "up")]
                if parts[0] is not None:
                    own[f"{p}mlp.gate_up_proj.{suffix}"] = torch.cat(parts)
            for name in (
                "self_attn.o_proj.weight",
                "self_attn.o_proj.bias",
                "mlp.down_proj.weight",
                "mlp.down_proj.bias",
                "input_layernorm.weight",
                "post_attention_layernorm.weight",
            ):
                if p + name in hf:
                    own[p + name] = hf[p + name]
        own["embed_tokens.weight"] = hf["embed_tokens.weight"]
        own["norm.weight"] = hf["norm.weight"]
        if self.lm_head is not None:
            own["lm_head.weight"] = hf.get("lm_head.weight", hf["embed_tokens.weight"])
        missing, unexpected = self.load_state_dict(own, strict=False, assign=False)
        if missing:
            raise ValueError(f"checkpoint in {model_dir} lacks weights: {', '.join(missing[:5])}")


def rope_cos_sin(config, max_positions: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables [max_positions, head_dim] in float32, computed as HF's rotary embedding does."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    params = getattr(config, "rope_parameters", None) or {"rope_type": "default"}
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type == "default":
        base = params.get("rope_theta", getattr(config, "rope_theta", 10000.0))
        dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
        attention_scaling = 1.0
    else:
        inv_freq, attention_scaling = ROPE_INIT_FUNCTIONS[rope_type](config, torch.device("cpu"))
    positions = torch.arange(max_positions, dtype=torch.float32)
    freqs = positions[:, None] * inv_freq.float()[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * attention_scaling).to(device), (emb.sin() * attention_scaling).to(device)
