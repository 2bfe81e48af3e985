"""Built-in model catalog: trimmed copies of each model's HF config.json.

Why configs and not hand-typed totals: `advisor.catalog.models` parses these exactly as it parses
a downloaded config.json, and computes parameter counts from the shapes, so a catalog entry
cannot disagree with the real checkpoint's shape. Fields kept are the ones memory math and
the parameter counter read. Source of every entry: the HF config.json of the repo named
(as copied in AIC `model_configs/` and the HF repos; docs/reference.md §4.2 lists them).
"""

from __future__ import annotations

from typing import Any

_LLAMA3_ROPE = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}


def _llama(hidden: int, inter: int, layers: int, heads: int, kv: int, **extra: Any) -> dict[str, Any]:
    base = {
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": hidden // heads,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "rope_scaling": _LLAMA3_ROPE,
    }
    return {**base, **extra}


def _qwen(model_type: str, hidden: int, inter: int, layers: int, heads: int, kv: int, **extra: Any) -> dict[str, Any]:
    base = {
        "model_type": model_type,
        "hidden_size": hidden,
        "intermediate_size": inter,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "sliding_window": None,
        "use_sliding_window": False,
    }
    return {**base, **extra}


def _mistral(**extra: Any) -> dict[str, Any]:
    base = {
        "model_type": "mistral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 32768,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "sliding_window": None,
    }
    return {**base, **extra}


# name → (HF id, config). Names are matched case-insensitively, and HF ids work too.
MODEL_CATALOG: dict[str, tuple[str, dict[str, Any]]] = {
    "Llama-3.1-8B": ("meta-llama/Llama-3.1-8B-Instruct", _llama(4096, 14336, 32, 32, 8)),
    "Llama-3.1-70B": ("meta-llama/Llama-3.1-70B-Instruct", _llama(8192, 28672, 80, 64, 8)),
    "Llama-3.3-70B": ("meta-llama/Llama-3.3-70B-Instruct", _llama(8192, 28672, 80, 64, 8)),
    "Qwen2.5-7B": (
        "Qwen/Qwen2.5-7B-Instruct",
        _qwen("qwen2", 3584, 18944, 28, 28, 4, vocab_size=152064, max_position_embeddings=32768, sliding_window=131072),
    ),
    "Qwen2.5-72B": (
        "Qwen/Qwen2.5-72B-Instruct",
        _qwen("qwen2", 8192, 29568, 80, 64, 8, vocab_size=152064, max_position_embeddings=32768, sliding_window=131072),
    ),
    "Qwen2.5-32B": (
        "Qwen/Qwen2.5-32B-Instruct",
        _qwen("qwen2", 5120, 27648, 64, 40, 8, vocab_size=152064, max_position_embeddings=32768, sliding_window=131072),
    ),
    "Qwen3-4B": ("Qwen/Qwen3-4B", _qwen("qwen3", 2560, 9728, 36, 32, 8, tie_word_embeddings=True)),
    "Qwen3-8B": ("Qwen/Qwen3-8B", _qwen("qwen3", 4096, 12288, 36, 32, 8)),
    "Qwen3-30B-A3B": (
        "Qwen/Qwen3-30B-A3B",
        _qwen(
            "qwen3_moe",
            2048,
            6144,
            48,
            32,
            4,
            moe_intermediate_size=768,
            num_experts=128,
            num_experts_per_tok=8,
            decoder_sparse_step=1,
            mlp_only_layers=[],
        ),
    ),
    "Mistral-7B": ("mistralai/Mistral-7B-Instruct-v0.3", _mistral()),
    "Mistral-7B-v0.1": ("mistralai/Mistral-7B-v0.1", _mistral(vocab_size=32000, sliding_window=4096)),
    "Mixtral-8x7B": (
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        {**_mistral(vocab_size=32000), "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2},
    ),
    "DeepSeek-V3": (
        "deepseek-ai/DeepSeek-V3",
        {
            "model_type": "deepseek_v3",
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "moe_intermediate_size": 2048,
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "q_lora_rank": 1536,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "num_experts_per_tok": 8,
            "first_k_dense_replace": 3,
            "topk_method": "noaux_tc",
            "vocab_size": 129280,
            "max_position_embeddings": 163840,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096},
            "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
        },
    ),
    "SmolLM2-135M": (
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        {
            "model_type": "llama",
            "hidden_size": 576,
            "intermediate_size": 1536,
            "num_hidden_layers": 30,
            "num_attention_heads": 9,
            "num_key_value_heads": 3,
            "head_dim": 64,
            "vocab_size": 49152,
            "max_position_embeddings": 8192,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
        },
    ),
}
