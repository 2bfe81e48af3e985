"""OP-7.182: vllm-metal found no room for the KV cache in the Metal memory it may use."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# a notes page on running MLX models with vllm-metal, verbatim: the fraction had been lowered to 0.75
NOTES = (
    "ValueError: Paged attention: not enough Metal memory for KV cache. metal_limit=51.54GB, fraction=0.75, "
    "usable_metal=38.65GB, model_memory=21.64GB, overhead=1.08GB, kv_budget=-0.54GB. Mitigations: increase "
    "VLLM_METAL_MEMORY_FRACTION, use a smaller or more quantized model."
)


def test_a_lowered_fraction_is_raised_and_the_figures_named():
    top = top_finding(NOTES)
    assert top.rule == "OP-7.182" and "(the weights take 21.64 GB; the KV budget came to -0.54 GB)" in top.title
    assert [(c.flag, c.current, c.proposed, c.kind) for c in top.changes] == [
        ("VLLM_METAL_MEMORY_FRACTION", "0.75", "0.9", "env")
    ]


def test_a_fraction_already_high_proposes_no_higher_one():
    line = NOTES.replace("fraction=0.75", "fraction=0.98")
    top = top_finding(line)
    assert top.rule == "OP-7.182" and top.changes == []
    assert any("smaller or more quantized model" in action for action in top.actions)


def test_a_small_overhead_does_not_point_at_vllm_metals_regression_and_a_bare_line_does():
    assert not any("vllm-metal#585" in action for action in top_finding(NOTES).actions)  # overhead 1.08 GB
    # vllm-project/vllm-metal#585, verbatim: its cause was that regression (MLX_MAX_MB_PER_BUFFER, PR #578)
    bare = top_finding("ValueError: Paged attention: not enough Metal memory for KV cache.")
    assert any("vllm-metal#585" in action for action in bare.actions)
