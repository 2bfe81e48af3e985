"""A Llama checkpoint with random weights of a named shape, for timing where real weights cannot go (not a test).

    python -m benchmarks.synthetic_model --shape llama-3.1-8b --out /tmp/llama8b
    python -m benchmarks.synthetic_model --shape smollm2-135m --tokenizer-from tok/ --out /tmp/smollm2

Why random weights: a GPU machine lent for benchmarks here cannot reach the network and takes at
most 64 MiB of files along; the embedded SmolLM2's GGUF alone is 98 MB, and no 8B checkpoint
exists on any of our machines. A forward pass costs the same whatever the weights' values, and
servops ramps force every output length (`min_tokens` + `ignore_eos`), so a ramp against this
checkpoint measures the engine's speed for that shape exactly; only the text is noise.

The tokenizer comes from `--tokenizer-from` (default: the embedded SmolLM2, converted if
needed). The vocabulary follows the tokenizer, so every sampled id detokenises: the 8B shape
keeps Llama-3.1-8B's body (32 layers, hidden 4096, 32 query / 8 KV heads, MLP 14336) with a
49,152-entry head instead of 128,256 (7.5 B parameters rather than 8.0 B). Weights are drawn as
GPT-2 initialises them (std 0.02; output projections scaled by 1/sqrt(2·layers) so the
residual stream stays bounded over depth), in bfloat16, on the GPU when there is one.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

import torch
from pydantic import BaseModel

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json")


class Shape(BaseModel):
    """The config.json fields that set a Llama's cost."""

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    rope_theta: float
    max_position_embeddings: int
    tie_word_embeddings: bool


# Each shape: its entry in the model catalog (advisor/catalog/model_configs.py, which holds the
# config.json figures of HuggingFaceTB/SmolLM2-135M-Instruct and meta-llama/Llama-3.1-8B-Instruct)
# and its RoPE base, which the catalog does not keep (memory and timing do not depend on it).
SHAPES = {"smollm2-135m": ("SmolLM2-135M", 100000.0), "llama-3.1-8b": ("Llama-3.1-8B", 500000.0)}


def shape_of(name: str) -> Shape:
    """The named shape, read from the model catalog."""
    from advisor.catalog.models import resolve_model

    catalog_name, rope_theta = SHAPES[name]
    spec = resolve_model(catalog_name)
    return Shape(
        **{field: getattr(spec, field) for field in Shape.model_fields if field != "rope_theta"},
        rope_theta=rope_theta,
    )


def tensor_shapes(shape: Shape, vocab: int) -> dict[str, tuple[int, ...]]:
    """Every weight's Hugging Face name and size."""
    head_dim = shape.hidden_size // shape.num_attention_heads
    hidden, inner = shape.hidden_size, shape.intermediate_size
    kv = shape.num_key_value_heads * head_dim
    sizes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (vocab, hidden), "model.norm.weight": (hidden,)}
    if not shape.tie_word_embeddings:
        sizes["lm_head.weight"] = (vocab, hidden)
    for i in range(shape.num_hidden_layers):
        p = f"model.layers.{i}."
        sizes |= {
            p + "self_attn.q_proj.weight": (hidden, hidden),
            p + "self_attn.k_proj.weight": (kv, hidden),
            p + "self_attn.v_proj.weight": (kv, hidden),
            p + "self_attn.o_proj.weight": (hidden, hidden),
            p + "mlp.gate_proj.weight": (inner, hidden),
            p + "mlp.up_proj.weight": (inner, hidden),
            p + "mlp.down_proj.weight": (hidden, inner),
            p + "input_layernorm.weight": (hidden,),
            p + "post_attention_layernorm.weight": (hidden,),
        }
    return sizes


def random_weights(shape: Shape, vocab: int, seed: int, device: torch.device) -> dict[str, torch.Tensor]:
    generator = torch.Generator(device=device).manual_seed(seed)
    residual_std = 0.02 / math.sqrt(2 * shape.num_hidden_layers)
    tensors = {}
    for name, size in tensor_shapes(shape, vocab).items():
        if name.endswith("norm.weight"):
            tensors[name] = torch.ones(size, dtype=torch.bfloat16)
            continue
        std = residual_std if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
        values = torch.randn(size, generator=generator, device=device, dtype=torch.float32) * std
        tensors[name] = values.to(torch.bfloat16).cpu()
    return tensors


def tokenizer_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    from engine.model.default_model import ensure_default_model

    return Path(ensure_default_model())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", required=True, choices=sorted(SHAPES), help="whose config.json to copy")
    parser.add_argument("--out", required=True, help="folder to write (config.json, model.safetensors, tokenizer)")
    parser.add_argument(
        "--tokenizer-from", default=None, help="folder with tokenizer.json (default: the embedded SmolLM2)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    args = parser.parse_args(argv)
    from safetensors.torch import save_file

    source = tokenizer_dir(args.tokenizer_from)
    if not (source / "tokenizer.json").is_file():
        print(f"synthetic_model: {source} has no tokenizer.json; pass --tokenizer-from DIR", file=sys.stderr)
        return 2
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(source / "tokenizer.json"))
    vocab = len(tokenizer)
    shape = shape_of(args.shape)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy(source / name, out / name)
    generation_file = out / "generation_config.json"
    generation = json.loads(generation_file.read_text()) if generation_file.is_file() else {}
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        **shape.model_dump(),
        "rms_norm_eps": 1e-5,
        "vocab_size": vocab,
        "bos_token_id": generation.get("bos_token_id", 1),
        "eos_token_id": generation.get("eos_token_id", 2),
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "torch_dtype": "bfloat16",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tensors = random_weights(shape, vocab, args.seed, device)
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    params = sum(t.numel() for t in tensors.values())
    print(f"synthetic_model: {args.shape} ({params / 1e9:.2f} B parameters, vocabulary {vocab}) written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
