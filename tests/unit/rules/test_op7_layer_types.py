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


def test_the_refusal_alone_on_one_line_reads_the_same():
    # constructed: the same words on one line, as transformers 4.5x raised them without huggingface_hub's wrapper
    top = top_finding(
        "ValueError: The `layer_types` entries must be in ('full_attention', 'sliding_attention') but got "
        "['linear_attention', 'full_attention']"
    )
    assert top.rule == "OP-7.215" and "linear_attention" in top.title
