"""OP-7.63: a CPU kernel without the model's dtype proposes the dtype the CPU runs."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_cpu_kernel_without_half_moves_the_model_to_bfloat16():
    # vllm#17225: vLLM's CPU build with PyTorch 2.7, a float16 model, the KV cache write
    top = top_finding("RuntimeError: \"reshape_and_cache_cpu_impl\" not implemented for 'Half'")
    assert top.rule == "OP-7.63" and "reshape_and_cache_cpu_impl has no float16 version" in top.title
    assert [(c.flag, c.current, c.proposed) for c in top.changes] == [("--dtype", "float16", "bfloat16")]
    # PyTorch's own CPU matmul without bfloat16 (older torch) moves to float32
    matmul = top_finding("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'BFloat16'")
    assert [(c.current, c.proposed) for c in matmul.changes] == [("bfloat16", "float32")]


def test_a_gpu_kernel_without_a_dtype_is_not_this_rule():
    top = top_finding("RuntimeError: \"index_select_cuda\" not implemented for 'Float8_e4m3fn'")
    assert top.rule != "OP-7.63"


def test_pytorchs_words_quoted_without_their_class_are_the_same_refusal_and_ipex_is_named():
    # vllm PR #18542, verbatim: the same error quoted in backticks; the PR moved IPEX from 2.6.0 to torch's 2.7.0
    top = top_finding("`\"reshape_and_cache_cpu_impl\" not implemented for 'Half'`")
    assert top.rule == "OP-7.63" and [(c.flag, c.proposed) for c in top.changes] == [("--dtype", "bfloat16")]
    assert any("IPEX 2.7.0 (vLLM PR #18542)" in action for action in top.actions)


def test_vllms_cpu_layer_norm_without_bfloat16_on_a_macos_build_offers_float16_there():
    # vllm PR #18249, verbatim: `vllm serve qwen/Qwen1.5-0.5B-Chat` on macOS's CPU build, whose kernels have no bfloat16
    line = "ERROR 05-16 11:28:20 [engine.py:161] RuntimeError: \"rms_norm_impl\" not implemented for 'BFloat16'"
    top = top_finding(line)
    assert top.rule == "OP-7.63" and "rms_norm_impl has no bfloat16 version" in top.title
    assert [(c.flag, c.current, c.proposed) for c in top.changes] == [("--dtype", "bfloat16", "float16")]
    assert "macOS (Apple silicon)" in top.actions[0] and "#18249" in top.actions[0]
    # PyTorch's own CPU kernels without bfloat16 keep float32, and no macOS claim
    other = top_finding("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'BFloat16'")
    assert [c.proposed for c in other.changes] == ["float32"] and not any("macOS" in a for a in other.actions)
