"""GGUF → HF conversion helpers (the full conversion is a slow integration test)."""

from __future__ import annotations

import threading
import time

import numpy as np

from engine.model import default_model
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


def test_callers_asking_at_once_wait_for_one_conversion_and_all_get_the_finished_dir(tmp_path, monkeypatch):
    """A clean machine's first vLLM tier started a background server beside its first fixture: both converted, and
    the later rename failed on the finished dir ([Errno 39]). The lock makes the second wait and find it done. The
    converter is replaced by a slow stand-in: what is under test is who converts, not the conversion."""
    monkeypatch.setenv("SERVOPS_CACHE_DIR", str(tmp_path))
    calls: list[str] = []

    def slow_convert(source, out_dir):
        calls.append(str(out_dir))
        time.sleep(0.3)
        (out_dir / "config.json").write_text("{}")

    monkeypatch.setattr(default_model, "convert_gguf", slow_convert)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(default_model.ensure_default_model())) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    out = tmp_path / "models" / default_model.DEFAULT_MODEL_NAME
    assert results == [out, out, out]
    assert len(calls) == 1 and (out / "config.json").is_file()
    assert [p.name for p in out.parent.iterdir() if p.is_dir()] == [default_model.DEFAULT_MODEL_NAME]
