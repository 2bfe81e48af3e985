"""OP-7.101: vllm-ascend's kernels built for another Ascend SoC; OP-7.102: a compiler too old for vLLM's CPU build."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_default_build_on_an_atlas_300i_asks_for_the_310p_build():
    # vllm-ascend#2725, #5599: the default image (Ascend910B1) on an Atlas 300I (Ascend310P3)
    top = top_finding(
        "..[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison "
        "Ascend310P3. Please modify default socversion in run.sh or execute run.sh with socversion parameter."
    )
    assert top.rule == "OP-7.101" and "built for Ascend910B1, and this NPU is Ascend310P3" in top.title
    assert (top.changes[0].flag, top.changes[0].proposed, top.changes[0].kind) == ("SOC_VERSION", "Ascend310P3", "env")
    assert "-310p" in top.actions[0]


def test_an_old_compiler_refusing_the_cpu_builds_instructions():
    # vllm#17906 (aarch64) and vLLM PR #1028 (x86 AVX512-BF16)
    arm = top_finding("      cc1plus: error: invalid feature modifier in ‘-march=armv8.2-a+dotprod+fp16’")
    assert arm.rule == "OP-7.102" and arm.title.endswith("it does not know -march=armv8.2-a+dotprod+fp16")
    x86 = top_finding(
        "      /home/d/vllm/csrc/cpu/cpu_types.hpp:207:40: error: ‘_mm512_cvtpbh_ps’ was not declared in this scope; "
        "did you mean ‘_mm512_cvtph_ps’?"
    )
    assert x86.rule == "OP-7.102" and "12.3" in x86.actions[0]


def test_an_aclnn_operator_failing_is_cannns_refusal_named_by_its_operator():
    # vllm-ascend#1736 (seventh probe) and #6190: torch_npu's words for an aclnn operator that failed
    top = top_finding(
        "ERROR 07-08 19:23:04 [engine.py:458] RuntimeError: call aclnnQuantMatmulWeightNz failed, detail:E69999"
    )
    assert top.rule == "OP-7.80" and " in aclnnQuantMatmulWeightNz" in top.title
    inner = top_finding(
        "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current "
        "working operator name is aclnnRmsNorm."
    )
    assert inner.rule == "OP-7.80" and " in aclnnRmsNorm" in inner.title


def test_bfloat16_refused_by_an_ascend_operator_proposes_float16():
    # vllm-ascend#6490: CANN's parameter check listing the operator's dtypes, bfloat16 not among them
    top = top_finding(
        "AclNN_Parameter_Error(EZ1001): Io input dtype or format is not supported, get io input info is "
        "x(DT_BFLOAT16, ND) gamma(DT_BFLOAT16, ND) yOut(DT_BFLOAT16, ND) rstdOut(DT_FLOAT, ND) but supported list is:"
    )
    assert top.rule == "OP-7.80" and top.title.endswith("refused bfloat16 on this NPU: serve in float16")
    assert (top.changes[0].flag, top.changes[0].proposed) == ("--dtype", "float16")


def test_the_cpu_builds_own_compiler_version_check():
    # a contributor's notes on building vLLM's CPU backend (dev.to, verbatim): Ubuntu 22.04's GCC was too old, gcc-13
    # from the ubuntu-toolchain-r PPA fixed it
    top = top_finding("X86 backend requires gcc/g++ >= 12.3")
    assert top.rule == "OP-7.102" and top.title.endswith("which asks for gcc/g++ >= 12.3")
