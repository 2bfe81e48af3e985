"""OP-7.174: FlashInfer found no GPU architecture to compile for."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_flashinfers_sm75_words_name_both_causes_and_turn_the_sampler_off():
    # vllm PR #48956, verbatim as its author quoted it: an RTX 5090 (SM120) with a CUDA toolkit older than 12.9
    top = top_finding("RuntimeError: FlashInfer requires GPUs with sm75 or higher")
    assert top.rule == "OP-7.174" and "older than SM75" in top.title and "older than 12.9" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("VLLM_USE_FLASHINFER_SAMPLER", "0")]
    assert "PR #48956" in top.actions[0]
