"""OP-7.180: CUDA graph capture of a hybrid model outgrew its Mamba state cache."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_bare_assert_a_reporter_used_as_a_title_names_the_capture_size():
    # vllm#34094's title, verbatim: Qwen3-Coder-Next with TP on vLLM 0.15; vllm PR #34571 caps the capture sizes
    top = top_finding("assert num_cache_lines >= batch")
    assert top.rule == "OP-7.180" and "Mamba state cache" in top.title
    [change] = top.changes
    assert change.flag == "--max-cudagraph-capture-size" and change.proposed.isdigit()
    assert any("PR #34571" in action for action in top.actions)


def test_the_same_assert_inside_an_engine_cores_traceback_reads_the_same():
    # xorbitsai/inference#4745: its source line verbatim, and the AssertionError line Python prints under it; Qwen3.5
    # 9B under Xinference's vLLM engine (the thread confirms no cause)
    top = top_finding(
        "(EngineCore_DP0 pid=1427791) ERROR 03-30 17:26:53 [core.py:1100]     assert num_cache_lines >= batch",
        "(EngineCore_DP0 pid=1427791) ERROR 03-30 17:26:53 [core.py:1100] AssertionError",
    )
    assert top.rule == "OP-7.180"
