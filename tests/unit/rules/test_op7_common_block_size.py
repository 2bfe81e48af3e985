"""OP-7.201: the KV cache's block size is not one the model's attention backend takes (vllm#48286, verbatim)."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm#48286: a DeepSeek-V3.2-style sparse-attention model on vLLM 0.24; the reporter's --block-size 64 avoided it
SPARSE = "ValueError: No common block size for 16 between kv_manager=[16] and backend=[64]"


def test_the_backends_own_size_is_proposed_for_block_size_ahead_of_the_catalogs_generic_reading():
    top = top_finding(SPARSE)
    assert top.rule == "OP-7.201" and "(the backend takes [64])" in top.title
    assert [(c.flag, c.current, c.proposed) for c in top.changes] == [("--block-size", "16", "64")]


def test_without_the_lists_vllms_own_reading_stays_first():
    top = top_finding("ValueError: No common block size for 16.")
    assert top.rule == "VC-1"


def test_a_backend_that_takes_multiples_names_its_multiple():
    top = top_finding("ValueError: No common block size for 16 between kv_manager=[16] and backend=[MultipleOf(64)]")
    assert top.rule == "OP-7.201" and [c.proposed for c in top.changes] == ["64"]
