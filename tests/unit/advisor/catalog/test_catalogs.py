"""GPU and model catalogs: names resolve, shapes match the published configs and totals."""

import json

import pytest
import torch
from safetensors.torch import save_file

from advisor.catalog.gpus import GPU_CATALOG, gpu_from_memory, resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.errors import UserError
from tests.unit.advisor.data_paths import DATA_DIR

# Published totals: docs/reference.md §4.2 (Llama-3.1-70B, Mixtral "46.7B", DeepSeek-V3 "671B"),
# Meta/Qwen model cards (Llama-3.1-8B 8.03B, Qwen2.5-7B 7.61B), SmolLM2 "135M".
PUBLISHED_PARAMS = {
    "Llama-3.1-8B": (8_030_261_248, 0.0),
    "Llama-3.1-70B": (70_553_706_496, 0.0),
    "Qwen2.5-7B": (7.61e9, 0.005),
    "Qwen2.5-72B": (72.7e9, 0.005),
    "Mixtral-8x7B": (46.7e9, 0.005),
    "DeepSeek-V3": (671e9, 0.005),
    "SmolLM2-135M": (134.5e6, 0.005),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_parameter_count_matches_the_published_total(name):
    expected, tolerance = PUBLISHED_PARAMS[name]
    counted = resolve_model(name).param_count
    assert abs(counted - expected) <= tolerance * expected


@pytest.mark.parametrize(
    "alias",
    [
        "llama-3.1-8b",
        "LLAMA-3.1-8B",
        "meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Llama-3.1-8B",
        "Llama-3.1-8B-Instruct",
    ],
)
def test_model_names_are_case_insensitive_and_accept_hf_ids(alias):
    assert resolve_model(alias).name == "Llama-3.1-8B"


def test_deepseek_v3_is_mla_with_a_576_wide_latent_and_native_fp8():
    spec = resolve_model("deepseek-ai/DeepSeek-V3")
    assert (spec.attention, spec.head_dim, spec.num_key_value_heads) == ("mla", 576, 1)
    assert spec.native_quantization == "fp8"
    assert spec.max_position_embeddings == 163840


def test_only_mistral_v01_keeps_its_sliding_window():
    assert resolve_model("Mistral-7B-v0.1").sliding_window == 4096
    assert resolve_model("Mistral-7B").sliding_window is None
    assert resolve_model("Qwen2.5-7B").sliding_window is None  # use_sliding_window: false


def test_unknown_model_error_names_the_input_and_the_choices():
    with pytest.raises(UserError, match=r"--model 'Llama-9'.*Llama-3.1-8B"):
        resolve_model("Llama-9")


def test_a_hf_config_json_file_and_its_directory_both_resolve():
    from_dir = resolve_model(str(DATA_DIR / "smollm2-135m"))
    from_file = resolve_model(str(DATA_DIR / "smollm2-135m" / "config.json"))
    assert from_dir.param_count == from_file.param_count == resolve_model("SmolLM2-135M").param_count
    assert (from_dir.num_key_value_heads, from_dir.head_dim, from_dir.tie_word_embeddings) == (3, 64, True)


def test_model_dir_with_safetensors_counts_the_real_tensors(tmp_path):
    config = {
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 256,
        "max_position_embeddings": 512,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    save_file(
        {"embed": torch.zeros(256, 64), "extra": torch.zeros(10, dtype=torch.bfloat16)},
        str(tmp_path / "model.safetensors"),
    )
    spec = resolve_model(str(tmp_path))
    assert spec.param_count == 256 * 64 + 10
    assert spec.native_weight_bytes == 256 * 64 * 4 + 10 * 2


def test_config_without_layers_is_a_one_line_user_error(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 64}))
    with pytest.raises(UserError, match="num_hidden_layers"):
        resolve_model(str(tmp_path))


def test_directory_without_config_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no config.json"):
        resolve_model(str(tmp_path))


@pytest.mark.parametrize("name", ["h100", "H100 SXM", "h100-sxm-80gb", "H200", "a100", "l40s", "mi300x", "b200"])
def test_gpu_names_resolve_loosely(name):
    assert resolve_gpu(name).usable_gib > 20


def test_every_catalog_gpu_says_where_its_numbers_come_from():
    for gpu in GPU_CATALOG:
        assert gpu.sources and gpu.usable_source, gpu.name


def test_usable_memory_is_what_torch_reports_not_the_marketing_number():
    assert resolve_gpu("H100-SXM-80GB").usable_gib == pytest.approx(79.18)
    assert resolve_gpu("H200").usable_gib == pytest.approx(139.80)
    assert resolve_gpu("L4").usable_gib == pytest.approx(22.04)


def test_fp8_w8a8_follows_vllm_hardware_support():
    assert resolve_gpu("H100").fp8_w8a8 and resolve_gpu("L40S").fp8_w8a8 and resolve_gpu("MI300X").fp8_w8a8
    assert not resolve_gpu("A100").fp8_w8a8 and not resolve_gpu("A10G").fp8_w8a8


def test_unknown_gpu_points_to_gpu_memory_gib():
    with pytest.raises(UserError, match="--gpu-memory-gib"):
        resolve_gpu("H1000")


def test_gpu_from_memory_is_conservative_about_fp8_and_rejects_zero():
    gpu = gpu_from_memory(2.5)
    assert gpu.usable_gib == 2.5 and not gpu.fp8_w8a8
    with pytest.raises(UserError, match="--gpu-memory-gib"):
        gpu_from_memory(0)


@pytest.mark.parametrize(
    "quant, expected",
    [
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}},
            },
            "fp8",
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}},
            },
            "int4",
        ),
        ({"quant_method": "awq", "bits": 4}, "awq"),
        ({"quant_method": "gptq", "bits": 8}, "int8"),
    ],
)
def test_native_quantization_is_read_from_the_checkpoint_config(tmp_path, quant, expected):
    config = {
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "vocab_size": 256,
        "quantization_config": quant,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert resolve_model(str(tmp_path)).native_quantization == expected


def test_a_gguf_file_is_refused_with_where_to_find_the_hf_dir(tmp_path):
    gguf = tmp_path / "model.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(UserError, match="GGUF files are not read; pass the HF model dir"):
        resolve_model(str(gguf))


def test_the_bundled_engines_served_name_resolves_to_the_catalog_entry():
    assert resolve_model("SmolLM2-135M-Instruct").name == "SmolLM2-135M"


def test_the_llama_3_1_ids_before_the_hubs_rename_resolve_to_the_catalog_model():
    """2024 logs name `meta-llama/Meta-Llama-3.1-70B-Instruct`: the Hub now redirects it to Llama-3.1-70B-Instruct."""
    from advisor.catalog.models import resolve_model

    assert resolve_model("meta-llama/Meta-Llama-3.1-70B-Instruct").name == "Llama-3.1-70B"
    assert resolve_model("Meta-Llama-3.1-8B-Instruct").name == "Llama-3.1-8B"
