"""OP-7.173: an assertion inside DeepGEMM's kernels proposes VLLM_USE_DEEP_GEMM=0."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_deepgemms_unknown_recipe_on_an_sm120_gpu_turns_deepgemm_off():
    # vllm#47169, verbatim: Qwen3.6-27B-FP8 on two RTX PRO 6000 (SM120), vLLM 0.24.0; VLLM_USE_DEEP_GEMM=0 avoided it
    top = top_finding(
        "RuntimeError: Assertion error (.../deepgemm-src/csrc/apis/../jit_kernels/impls/../heuristics/../../utils/"
        "layout.hpp:76): Unknown recipe"
    )
    assert top.rule == "OP-7.173" and top.title.startswith("DeepGEMM's kernels refused the call (Unknown recipe)")
    assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("VLLM_USE_DEEP_GEMM", "0", "env")]


def test_a_workers_deepgemm_assert_with_its_log_prefix_is_the_same_reading():
    # vllm#46726, verbatim: GLM 5.2 NVFP4's sparse indexer on RTX 6000 Pro (SM120) at TP 8
    top = top_finding(
        "(Worker_TP7 pid=620) ERROR 06-29 03:35:32 [multiproc_executor.py:1000] RuntimeError: Assertion error "
        "(/workspace/.deps/deepgemm-src/csrc/apis/attention.hpp:219): Unsupported architecture"
    )
    assert top.rule == "OP-7.173" and "Unsupported architecture" in top.title
    assert "sparse-attention indexer" in top.actions[1]


def test_another_librarys_assertion_error_is_not_deepgemms():
    top = top_finding("RuntimeError: Assertion error (/src/csrc/flash_api.cpp:10): head size")
    assert top is None or top.rule != "OP-7.173"


def test_a_shape_check_is_read_as_a_shape_deepgemm_did_not_expect():
    # vllm#40987, verbatim: DeepSeek-V4 with MTP and expert parallelism, while serving
    top = top_finding(
        "(Worker_DP2_EP2 pid=3835) ERROR 04-27 08:24:57 [multiproc_executor.py:971] RuntimeError: Assertion error "
        "(/workspace/.deps/deepgemm-src/csrc/apis/attention.hpp:200): context_lens.is_contiguous()"
    )
    assert top.rule == "OP-7.173" and top.title.endswith("a shape or layout DeepGEMM did not expect")


def test_the_jit_compilers_checks_name_the_nvcc_it_compiles_with_not_the_gpu():
    # vllm PR #49051 (NVCC 12.1 on an RTX 5090; 'NVCC version should be >= 12.3' followed) and vllm#24547 (a DeepGEMM
    # installed wrongly), verbatim, the second with the Markdown backticks it was pasted in
    for line in (
        "RuntimeError: Assertion error (.../jit/compiler.hpp:187):",
        '`RuntimeError: Assertion error (csrc/apis/../jit_kernels/impls/../../jit/compiler.hpp:178): false and "NVCC '
        'compilation failed"`',
    ):
        top = top_finding(line)
        assert top.rule == "OP-7.173" and "could not build or load its kernel at run time" in top.title, line
        assert "NVCC 12.3 or newer" in top.actions[0] and "CUDA_HOME" in top.actions[0]
        assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("VLLM_USE_DEEP_GEMM", "0", "env")]
    assert '(false and "NVCC compilation failed")' in top.title  # its own quotes kept, the paste's backtick gone
