"""Tiny random-weight Llama / Qwen2 / Mistral HF dirs for fast tests, built offline.

The tokenizer is byte-level BPE with no merges (every byte is a token) plus ChatML special
tokens and a chat template, built with `tokenizers` in milliseconds: no download, no
dependency on the converted default model. Weights are drawn with a larger std than HF's
default (0.02) so the random model's logits are peaked: greedy comparisons against HF are
then decided by clear margins, not by float noise between near-equal logits.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def build_byte_tokenizer(out_dir: str | Path):
    """Save a byte-level tokenizer (256 byte tokens + 3 specials) to `out_dir`; returns it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import PreTrainedTokenizerFast

    alphabet = ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet, key=lambda c: ord(c)))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        bos_token="<|im_start|>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(str(out_dir))
    return tokenizer


def build_tiny_model(
    out_dir: str | Path,
    arch: str = "llama",
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int = 128,
    max_position_embeddings: int = 512,
    tie_word_embeddings: bool = False,
    rope_scaling: dict | None = None,
    init_std: float = 0.2,
    seed: int = 0,
) -> Path:
    """Write config.json, model.safetensors and tokenizer files for a random model; returns the dir."""
    from transformers import (
        LlamaConfig,
        LlamaForCausalLM,
        MistralConfig,
        MistralForCausalLM,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_byte_tokenizer(out)
    classes = {
        "llama": (LlamaConfig, LlamaForCausalLM),
        "qwen2": (Qwen2Config, Qwen2ForCausalLM),
        "mistral": (MistralConfig, MistralForCausalLM),
    }
    config_cls, model_cls = classes[arch]
    kwargs = dict(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=tie_word_embeddings,
        initializer_range=init_std,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        rms_norm_eps=1e-6,
    )
    if rope_scaling:
        kwargs["rope_scaling"] = rope_scaling
    if arch == "mistral":
        kwargs["sliding_window"] = None
    config = config_cls(**kwargs)
    config.architectures = [model_cls.__name__]
    torch.manual_seed(seed)
    model = model_cls(config).to(torch.float32)
    with torch.no_grad():  # non-trivial norm weights, so a wrong norm would show
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.copy_(1.0 + 0.1 * torch.randn_like(param))
    model.save_pretrained(str(out))
    if os.environ.get("SERVOPS_DEBUG_TINY"):
        print(f"tiny {arch} model written to {out}")
    return out
