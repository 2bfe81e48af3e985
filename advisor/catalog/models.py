"""ModelSpec: the shape of a model that memory math needs, from a HF config.json, a model
dir, or a built-in catalog.

Why one path for all three: catalog entries *are* trimmed HF config.json dicts (copied from
the configs named in docs/reference.md §4.2), so a catalog model and a downloaded one go through
the same parser and parameter counter. Parameter counts are computed from the shapes
(checked in tests against the published totals: Llama-3.1-8B 8,030,261,248, DeepSeek-V3
671,026,419,200, …); a model dir with safetensors files uses their headers instead, which
the reference found accurate to 0.84 % against vLLM's loaded weights.

Public names: `ModelSpec`, `resolve_model(name_or_path)`, `spec_from_config(dict)`,
`MODEL_CATALOG` (name → (hf_id, config)).
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from advisor.catalog.model_configs import MODEL_CATALOG
from advisor.errors import UserError
from rules.catalog.common import tp_divides_heads


class ModelSpec(BaseModel):
    """Everything memory math and planning read about a model; units in the names."""

    model_config = ConfigDict(frozen=True)

    name: str
    hf_id: str | None
    model_type: str
    attention: Literal["gqa", "mla"]
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int  # for MLA: 1 (the single latent "head")
    head_dim: int  # for MLA: kv_lora_rank + qk_rope_head_dim (576 for DeepSeek-V3)
    hidden_size: int
    intermediate_size: int  # dense MLP width (MoE: the per-expert width)
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    sliding_window: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    num_experts: int = 0
    num_experts_per_tok: int = 0
    param_count: int
    embedding_param_count: int  # embed_tokens + untied lm_head: kept 16-bit by runtime fp8
    torch_dtype: str = "bfloat16"
    native_quantization: str | None = None  # fp8, awq, gptq, ... from quantization_config
    native_weight_bytes: int | None = None  # exact checkpoint bytes (safetensors), if known
    source_path: str | None = None  # the config.json or model dir it was read from, if any

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0


SHOWN_NAME_CHARS = 120  # of a model name an error repeats: a pasted launch can make any text the model word


def _path_kind(path: Path) -> str | None:
    """ "dir", "file" or None; a name the file system refuses to look up (too long, a NUL) is no path."""
    try:
        return "dir" if path.is_dir() else "file" if path.is_file() else None
    except (OSError, ValueError):
        return None


def resolve_model(name_or_path: str) -> ModelSpec:
    """A catalog name or HF id (case-insensitive), a config.json path, or a model dir."""
    path = Path(name_or_path).expanduser()
    kind = _path_kind(path)
    if kind == "dir":
        return _spec_from_dir(path).model_copy(update={"source_path": str(path)})
    if kind == "file" and path.suffix == ".gguf":
        raise UserError(
            f"--model {name_or_path!r}: GGUF files are not read; pass the HF model dir it was converted "
            "to (the bundled engine keeps its default in ~/.cache/servops/models/) or a catalog name"
        )
    if kind == "file":
        spec = spec_from_config(_read_json(path), name=path.parent.name or path.name)
        return spec.model_copy(update={"source_path": str(path.parent)})
    key = _normalise(_RENAMED_ON_THE_HUB.sub(r"\1", name_or_path))
    for name, (hf_id, config) in MODEL_CATALOG.items():
        names = {_normalise(name), _normalise(hf_id), _normalise(hf_id.split("/")[-1])}
        names |= {n.removesuffix("instruct") for n in names}
        if key in names or key.removesuffix("instruct") in names:
            return spec_from_config(config, name=name, hf_id=hf_id)
    choices = ", ".join(MODEL_CATALOG)
    shown = name_or_path if len(name_or_path) <= SHOWN_NAME_CHARS else name_or_path[:SHOWN_NAME_CHARS] + "…"
    raise UserError(
        f"--model {shown!r}: not a catalog model, config.json or model dir; "
        f"choose one of {choices}, or pass a path to a HF config.json"
    )


def spec_from_config(config: dict[str, Any], name: str, hf_id: str | None = None) -> ModelSpec:
    """Parse a HF config.json dict. Missing required fields become one-line UserErrors."""
    text_config = config.get("text_config")
    if isinstance(text_config, dict) and "num_hidden_layers" not in config:
        config = {**config, **text_config}  # multimodal wrappers keep the LM in text_config
    layers = _required(config, "num_hidden_layers", name)
    heads = _required(config, "num_attention_heads", name)
    hidden = _required(config, "hidden_size", name)
    vocab = _required(config, "vocab_size", name)
    kv_heads = int(config.get("num_key_value_heads") or heads)
    head_dim = int(config.get("head_dim") or hidden // heads)
    is_mla = config.get("kv_lora_rank") is not None
    window = config.get("sliding_window")
    if config.get("use_sliding_window") is False or not isinstance(window, int):
        window = None  # Qwen2/3 configs carry a window they do not use
    quant = config.get("quantization_config") or {}
    experts = int(config.get("num_local_experts") or config.get("n_routed_experts") or config.get("num_experts") or 0)
    if is_mla:
        kv_lora, rope = int(config["kv_lora_rank"]), int(config["qk_rope_head_dim"])
    return ModelSpec(
        name=name,
        hf_id=hf_id or config.get("_name_or_path") or None,
        model_type=str(config.get("model_type", "unknown")),
        attention="mla" if is_mla else "gqa",
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=1 if is_mla else kv_heads,
        head_dim=(kv_lora + rope) if is_mla else head_dim,
        hidden_size=hidden,
        intermediate_size=int(config.get("moe_intermediate_size") or config.get("intermediate_size") or 4 * hidden)
        if experts
        else int(config.get("intermediate_size") or 4 * hidden),
        vocab_size=vocab,
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        max_position_embeddings=int(config.get("max_position_embeddings") or 2048),
        sliding_window=window,
        kv_lora_rank=kv_lora if is_mla else None,
        qk_rope_head_dim=rope if is_mla else None,
        num_experts=experts,
        num_experts_per_tok=int(config.get("num_experts_per_tok") or 0),
        param_count=count_parameters(config),
        embedding_param_count=vocab * hidden * (1 if config.get("tie_word_embeddings") else 2),
        torch_dtype=str(config.get("torch_dtype") or config.get("dtype") or "bfloat16"),
        native_quantization=_native_quantization(quant),
    )


def count_parameters(config: dict[str, Any]) -> int:
    """Parameters from the config shapes: Llama/Qwen2/Qwen3/Mistral, Mixtral/Qwen-MoE, DeepSeek MLA."""
    hidden, vocab = int(config["hidden_size"]), int(config["vocab_size"])
    layers = int(config["num_hidden_layers"])
    total = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2) + hidden  # + final norm
    for layer in range(layers):
        total += _attention_params(config) + 2 * hidden + _mlp_params(config, layer)
    return total


def _attention_params(config: dict[str, Any]) -> int:
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    if config.get("kv_lora_rank") is not None:  # DeepSeek MLA projections
        q_lora = config.get("q_lora_rank")
        nope, rope = int(config["qk_nope_head_dim"]), int(config["qk_rope_head_dim"])
        v_dim, kv_lora = int(config["v_head_dim"]), int(config["kv_lora_rank"])
        q_out = heads * (nope + rope)
        q = hidden * q_out if q_lora is None else hidden * q_lora + q_lora + q_lora * q_out
        kv = hidden * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v_dim)
        return q + kv + heads * v_dim * hidden
    kv_heads = int(config.get("num_key_value_heads") or heads)
    head_dim = int(config.get("head_dim") or hidden // heads)
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    params = hidden * q_out + 2 * hidden * kv_out + q_out * hidden
    if config.get("attention_bias") or config.get("model_type") == "qwen2":
        params += q_out + 2 * kv_out  # Qwen2 always has q/k/v biases
    if config.get("model_type", "").startswith("qwen3"):
        params += 2 * head_dim  # q_norm, k_norm
    return params


def _mlp_params(config: dict[str, Any], layer: int) -> int:
    hidden = int(config["hidden_size"])
    dense = 3 * hidden * int(config.get("intermediate_size") or 4 * hidden)
    if config.get("n_routed_experts"):  # DeepSeek: dense first layers, then routed + shared
        if layer < int(config.get("first_k_dense_replace", 0)):
            return dense
        experts = int(config["n_routed_experts"])
        width = int(config["moe_intermediate_size"])
        shared = int(config.get("n_shared_experts") or 0)
        bias = experts if config.get("topk_method") == "noaux_tc" else 0
        return (experts + shared) * 3 * hidden * width + experts * hidden + bias
    if config.get("num_local_experts"):  # Mixtral
        experts = int(config["num_local_experts"])
        return experts * dense + experts * hidden
    if config.get("num_experts"):  # Qwen2/3-MoE
        if layer in set(config.get("mlp_only_layers") or []):
            return dense
        experts = int(config["num_experts"])
        width = int(config["moe_intermediate_size"])
        shared = int(config.get("shared_expert_intermediate_size") or 0)
        shared_params = 3 * hidden * shared + hidden if shared else 0
        return experts * 3 * hidden * width + experts * hidden + shared_params
    return dense


def _native_quantization(quant: Any) -> str | None:
    """The checkpoint's weight format as a `--quantization`-style name memory math knows.

    compressed-tensors and GPTQ/AWQ say their width in the config: 8-bit float → fp8,
    8-bit int → int8, 4-bit → int4 (AWQ/GPTQ keep their names).
    """
    if not isinstance(quant, dict) or not quant.get("quant_method"):
        return None
    method = str(quant["quant_method"]).lower()
    if method == "compressed-tensors":
        weights = next(iter((quant.get("config_groups") or {}).values()), {}).get("weights") or {}
        bits, kind = weights.get("num_bits", 8), weights.get("type", "int")
        return "fp8" if bits == 8 and kind == "float" else "int8" if bits == 8 else "int4"
    if method in {"gptq", "awq"} and quant.get("bits", 4) == 8:
        return "int8"
    return method


def _spec_from_dir(path: Path) -> ModelSpec:
    config_path = path / "config.json"
    if not config_path.is_file():
        raise UserError(f"--model {str(path)!r}: directory has no config.json; pass a HF model dir")
    spec = spec_from_config(_read_json(config_path), name=path.name)
    counted = _safetensors_totals(path)
    if counted is None:
        return spec
    params, weight_bytes = counted
    return spec.model_copy(update={"param_count": params, "native_weight_bytes": weight_bytes})


_DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "BOOL": 1,
}


def _safetensors_totals(path: Path) -> tuple[int, int] | None:
    """(parameters, bytes) summed over the safetensors headers; None if there are none."""
    files = sorted(path.glob("*.safetensors"))
    if not files:
        return None
    params = weight_bytes = 0
    for file in files:
        with file.open("rb") as handle:
            head = handle.read(8)
            header_len = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
            try:
                if not 0 < header_len <= 100_000_000:
                    raise ValueError(header_len)
                header = json.loads(handle.read(header_len))
                if not isinstance(header, dict):
                    raise ValueError(type(header))
            except ValueError:  # UnicodeDecodeError and JSONDecodeError too
                raise UserError(f"--model {str(file)!r}: safetensors header is corrupt; re-download the file") from None
        for key, tensor in header.items():
            if key == "__metadata__":
                continue
            numel = math.prod(tensor["shape"])
            params += numel
            weight_bytes += numel * _DTYPE_BYTES.get(tensor["dtype"], 2)
    return params, weight_bytes


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"--model {str(path)!r}: binary, not JSON; pass a HF config.json or the model folder") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"--model {str(path)!r}: cannot read as JSON ({exc}); pass a HF config.json") from None
    if not isinstance(data, dict):
        raise UserError(f"--model {str(path)!r}: expected a JSON object (a HF config.json)")
    return data


def _required(config: dict[str, Any], key: str, name: str) -> int:
    value = config.get(key)
    if not isinstance(value, int) or value <= 0:
        raise UserError(f"--model {name!r}: config.json lacks a positive integer {key!r}; pass a decoder LM config")
    return value


# meta-llama renamed its Llama 3.1 repositories on the Hub in 2024 (`Meta-Llama-3.1-8B-Instruct` became
# `Llama-3.1-8B-Instruct`; the old ids redirect): logs of that year name the model the old way.
_RENAMED_ON_THE_HUB = re.compile(r"(?i)\bmeta-(llama-3\.1-)")


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", name.lower())


def active_params(model: ModelSpec) -> float:
    """Parameters one token passes through: all of a dense model; for MoE the routed share of the experts."""
    if not model.is_moe or not model.num_experts:
        return float(model.param_count)
    expert = 3 * model.hidden_size * model.intermediate_size * model.num_hidden_layers
    inactive = expert * (model.num_experts - model.num_experts_per_tok)
    return float(max(model.param_count - inactive, model.param_count * 0.05))


def valid_tp(model: ModelSpec, tp: int) -> bool:
    """Whether vLLM accepts this tensor-parallel size for the model: TP must divide the attention heads
    (and the KV heads, or be divisible by them when KV heads are replicated); MLA keeps one latent KV."""
    return tp_divides_heads(model.num_attention_heads, model.num_key_value_heads, tp, mla=model.attention == "mla")
