"""OP-7.180: CUDA graph capture of a hybrid model outgrew its Mamba state cache."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding


def test_the_bare_assert_a_reporter_used_as_a_title_names_the_capture_size():
    # vllm#34094's title, verbatim: Qwen3-Coder-Next with TP on vLLM 0.15; vllm PR #34571 caps the capture sizes
    top = top_finding("assert num_cache_lines >= batch")
    assert top.rule == "OP-7.180" and "Mamba state cache" in top.title
    [change] = top.changes
    assert change.flag == "--max-cudagraph-capture-size" and change.proposed.isdigit()
    assert any("PR #34571" in action for action in top.actions)


def test_the_same_assert_on_an_engine_cores_error_lines_reads_the_same():
    # xorbitsai/inference#4745: its source line verbatim, and the AssertionError line Python prints under it; Qwen3.5
    # 9B under Xinference's vLLM engine (the thread confirms no cause)
    top = top_finding(
        "(EngineCore_DP0 pid=1427791) ERROR 03-30 17:26:53 [core.py:1100]     assert num_cache_lines >= batch",
        "(EngineCore_DP0 pid=1427791) ERROR 03-30 17:26:53 [core.py:1100] AssertionError",
    )
    assert top.rule == "OP-7.180"


def test_the_assert_as_a_tracebacks_failing_source_line_reads_the_same():
    """A whole traceback holds the assert as its last frame's source and a bare AssertionError under it; the frame is
    vLLM 0.32's (causal_conv1d.py line 1199, read in .venv-vllm)."""
    top = top_finding(
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/mamba/ops/causal_conv1d.py", '
        "line 1199, in causal_conv1d_update",
        "    assert num_cache_lines >= batch",
        "AssertionError",
    )
    assert top.rule == "OP-7.180"


def test_no_capture_size_is_proposed_where_it_would_not_be_lower_than_the_default():
    # --max-num-seqs 1024 (vLLM's default on large GPUs): the default largest capture size is 512 already
    top = top_finding("assert num_cache_lines >= batch", config=config(max_num_seqs=1024))
    assert top.rule == "OP-7.180" and top.changes == []
