"""GGUF → HF conversion helpers (the full conversion is a slow integration test)."""

from __future__ import annotations

import numpy as np

from engine.model.default_model import _hf_name, _unpermute, gguf_path


def llama_cpp_permute(weights: np.ndarray, num_heads: int) -> np.ndarray:
    """What llama.cpp's convert_hf_to_gguf.py applies to q/k projection rows."""
    return (
        weights.reshape(num_heads, 2, weights.shape[0] // num_heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def test_unpermute_inverts_llama_cpps_rotary_permutation():
    rng = np.random.default_rng(0)
    for num_heads, head_dim in ((9, 64), (3, 64), (4, 16)):
        weights = rng.standard_normal((num_heads * head_dim, 32)).astype(np.float32)
        assert np.array_equal(_unpermute(llama_cpp_permute(weights, num_heads), num_heads), weights)


def test_gguf_tensor_names_map_to_hf_names():
    assert _hf_name("token_embd.weight") == "model.embed_tokens.weight"
    assert _hf_name("blk.7.attn_q.weight") == "model.layers.7.self_attn.q_proj.weight"
    assert _hf_name("blk.0.ffn_norm.weight") == "model.layers.0.post_attention_layernorm.weight"
    assert _hf_name("output_norm.weight") == "model.norm.weight"


def test_the_embedded_gguf_is_found_without_importing_its_package():
    path = gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
