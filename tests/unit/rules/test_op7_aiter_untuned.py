"""OP-7.212: AITER ran a GEMM shape without a tuned configuration, a note on speed."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm-project/vllm#39485, verbatim: a DeepSeek-R1 worker log full of these on a ROCm 7.2 build
UNTUNED = (
    "(Worker_TP3 pid=11841) [aiter] shape is M:72, N:512, K:7168, not found tuned config in "
    "/tmp/aiter_configs/a8w8_blockscale_tuned_gemm.csv, will use default config!"
)


def test_an_untuned_shape_is_a_low_note_that_points_at_the_real_failure():
    top = top_finding(UNTUNED)
    assert top.rule == "OP-7.212" and top.severity.value == "low"
    assert "M:72, N:512, K:7168" in top.title and "not an error" in top.title
    assert "a8w8_blockscale_tuned_gemm.csv" in top.summary and top.changes == []


def test_a_real_error_beside_it_comes_first():
    top = top_finding(UNTUNED, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert top.severity.value == "critical" and "out of memory" in top.title.lower()


def test_a_shape_line_with_the_dtypes_after_k_is_the_same_note():
    line = (
        "[aiter] shape is M:1, N:7168, K:2048, q_dtype_w:torch.float8_e4m3fn, not found tuned config in "
        "/tmp/aiter_configs/a8w8_bpreshuffle_tuned_gemm.csv, will use default config!"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.212" and "M:1, N:7168, K:2048" in top.title
