"""OP-7.195: the paged-attention kernel's `Unsupported block size: N`, a size --block-size chose."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_block_size_the_kernel_has_no_variant_for_is_changed_to_one_it_has():
    # vllm PR #10938, verbatim: `--block-size 128` on CUDA, which the flag's help then listed as valid
    top = top_finding("RuntimeError: Unsupported block size: 128")
    assert top is not None and top.rule == "OP-7.195" and "block of 128 tokens" in top.title
    change = top.changes[0]
    assert (change.flag, change.current, change.proposed, change.kind) == ("--block-size", "128", "16", "flag")
    assert "8, 16 and 32" in top.summary


def test_other_words_about_block_sizes_are_not_the_kernels_check():
    top = top_finding("ValueError: Unsupported prefill cache block size 48")
    assert top is None or top.rule != "OP-7.195"
