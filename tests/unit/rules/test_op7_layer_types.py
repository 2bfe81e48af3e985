"""OP-7.215: a layer type in the model's config that the installed transformers does not know."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# coreweave/ml-containers PR #206, verbatim: GLM-5.2 on an image with transformers 5.9.0
GLM52 = (
    "huggingface_hub.errors.StrictDataclassClassValidationError: Class validation error for validator "
    "'validate_layer_type':",
    "    ValueError: The `layer_types` entries must be in ('full_attention', 'sliding_attention', ... 'moe')",
    "    but got ['deepseek_sparse_attention', ...]",
)


def test_a_layer_type_newer_than_transformers_upgrades_transformers():
    top = top_finding(*GLM52)
    assert top.rule == "OP-7.215" and "deepseek_sparse_attention" in top.title
    assert top.actions[0].startswith("Upgrade transformers") and "--hf-overrides" in top.actions[1]


def test_the_refused_kind_is_the_first_one_the_allowed_kinds_leave_out():
    # constructed in 5.x's words: the list starts with a kind transformers knows
    top = top_finding(
        "ValueError: The `layer_types` entries must be in ('full_attention', 'sliding_attention') but got "
        "['full_attention', 'full_attention', 'linear_attention']"
    )
    assert top.rule == "OP-7.215" and "layer type linear_attention" in top.title


def test_the_older_wording_without_the_refused_kinds_reads_the_same():
    # constructed in the words of transformers' layer_type_validation (4.5x), which names the allowed kinds only
    top = top_finding("ValueError: The `layer_types` entries must be in ('full_attention', 'sliding_attention')")
    assert top.rule == "OP-7.215" and "does not know a layer type the model's config names" in top.title
