"""OP-2.5: torchao's float8 quantization asserted on a GPU without FP8 units."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vLLM PR #37033, verbatim: torchao's assertion as users of a torchao Float8 checkpoint met it below sm_89
REFUSAL = "Float8 dynamic activation quantization is only supported on CUDA>=8.9 and MI300+"


def test_the_assertion_alone_is_a_gpu_without_fp8_units_not_an_old_cuda():
    top = top_finding(REFUSAL)
    assert top.rule == "OP-2.5" and "compute capability 8.9" in top.title
    assert "not a CUDA toolkit version" in top.summary
    assert "--quantization fp8" in top.actions[0] and "compute_cap" in top.actions[1]


def test_the_same_words_in_a_traceback_read_the_same():
    assert top_finding(f"AssertionError: {REFUSAL}").rule == "OP-2.5"
    assert top_finding(f"[rank0]: AssertionError: {REFUSAL}").rule == "OP-2.5"
