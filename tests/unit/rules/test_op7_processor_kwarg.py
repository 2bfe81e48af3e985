"""OP-7.193: the processor warning that it ignores a keyword vLLM passed: spurious for Qwen2-VL's max_pixels."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_qwen2_vls_max_pixels_warning_is_spurious_and_how_to_see_it_applies():
    # vllm#14325, verbatim: vLLM's maintainer said max_pixels still works and the warning can be ignored
    top = top_finding("Keyword argument `max_pixels` is not a valid argument for this processor and will be ignored")
    assert top.rule == "OP-7.193" and top.severity.value == "info" and not top.changes
    assert "the warning was spurious there" in top.title and "vllm#14325" in top.summary
    assert "later transformers declare it" in top.summary  # the line names no model or transformers version


def test_another_keyword_is_named_without_claiming_it_applies():
    top = top_finding(
        "Keyword argument `do_pan_and_scan` is not a valid argument for this processor and will be ignored"
    )
    assert top.rule == "OP-7.193" and "spurious" not in top.title
    assert "preprocessor_config.json" in top.actions[0]
