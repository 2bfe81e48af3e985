"""OP-7.195: the paged-attention kernel's `Unsupported block size: N`, a size --block-size may have chosen."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding

# vllm PR #10938, verbatim: `--block-size 128` on CUDA, which the flag's help then listed as valid
REFUSED = "RuntimeError: Unsupported block size: 128"


def test_with_the_servers_block_size_the_change_is_made():
    top = top_finding(REFUSED, config=config(block_size=128))
    assert top is not None and top.rule == "OP-7.195" and "blocks of 128 tokens: --block-size 128" in top.title
    change = top.changes[0]
    assert (change.flag, change.current, change.proposed, change.kind) == ("--block-size", "128", "16", "flag")
    assert "8, 16 and 32" in top.summary


def test_the_line_alone_offers_the_change_other_kernels_say_the_same_of_their_own_blocks():
    top = top_finding(REFUSED)
    assert top is not None and top.rule == "OP-7.195" and top.title.startswith("a kernel refused a block size of 128")
    assert top.changes == [] and top.alternatives[0].proposed == "16"
    # a size of 16 refused is not answered with 16
    sixteen = top_finding("RuntimeError: Unsupported block size: 16")
    assert sixteen is not None and sixteen.alternatives[0].proposed == "32"


def test_other_words_about_block_sizes_are_not_the_kernels_check():
    for line in (
        "ValueError: Unsupported prefill cache block size 48",
        "ValueError: Unsupported block size: 64 for FP8 block quantization",
    ):
        top = top_finding(line)
        assert top is None or top.rule != "OP-7.195", line
