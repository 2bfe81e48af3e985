"""OP-7.86: AMD's AITER refusing a GPU or a shape (kyuz0/amd-r9700-vllm-toolboxes#18's and ROCm/aiter#3202's lines,
verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_aiter
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_an_arch_aiter_lacks_turns_aiter_off():
    line = (
        "(Worker_TP1 pid=5130) ERROR 08-10 19:58:01 [multiproc_executor.py:989] AssertionError: One of GPU archs of "
        "['gfx1201'] is invalid or not supported"
    )
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.86" and "do not support gfx1201" in top.title
    assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("VLLM_ROCM_USE_AITER", "0", "env")]


def test_a_moe_shape_ck_lacks_turns_only_aiters_moe_off():
    [finding] = op7_aiter.RULE_AITER.evaluate(
        _facts("RuntimeError: ck_moe_stage2 ... device_gemm does not support this GEMM problem")
    )
    assert finding.title.endswith("fused-MoE shape: turn AITER's MoE off, keep the rest")
    assert [(c.flag, c.proposed) for c in finding.changes] == [("VLLM_ROCM_USE_AITER_MOE", "0")]


def test_cks_refusal_in_its_full_words_is_the_same_shape_refusal():
    # ROCm/aiter#2191, verbatim: an MXFP4 MoE's intermediate size at TP 4 with no AITER config (the diagnosis)
    top = evaluate(
        _facts(
            "RuntimeError: wrong! device_gemm with the specified compilation parameters does not support this GEMM "
            "problem"
        )
    ).top
    assert top.rule == "OP-7.86" and "no instance for this GEMM's shape" in top.title


def test_an_mla_kernel_aiter_lacks_turns_only_its_mla_off():
    """vllm-project/vllm#51232 (the seventh probe), verbatim: no gfx950 assembly kernel for BF16 queries on an FP8
    KV cache."""
    line = (
        "[AITER] /app/aiter/aiter_meta/csrc/py_itfs_cu/asm_mla.cu:193 get_heuristic_kernel_mla: cannot get heuristic "
        "kernel! q_type:bf16 kv_type:fp8 gqa:16 ps:0 prefill:0 causal:0 qseqlen:1 lse:0 cprr:0"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.86" and top.title.endswith("MLA attention shape: turn AITER's MLA off, keep the rest")
    assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("VLLM_ROCM_USE_AITER_MLA", "0", "env")]


def test_aiters_mla_heads_assert_turns_its_mla_off_or_asks_for_a_tp_with_16_or_128_heads_per_rank():
    # ROCm/aiter#548, verbatim: DeepSeek R1 on 4 MI300X through vLLM V0 with AITER's MLA (128 heads, 32 per rank)
    top = evaluate(_facts("[rank0]: AssertionError: nhead=32 not supported")).top
    assert top.rule == "OP-7.86" and "MLA attention shape" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("VLLM_ROCM_USE_AITER_MLA", "0")]
    assert "16 or 128 query heads" in top.actions[0] and "TP 8 or TP 1" in top.actions[0]


def test_a_kernel_of_a_newer_instinct_gpu_is_vllms_selection_and_its_op_goes_off():
    # vllm PR #50817, verbatim: AITER's small-head MLA decode (CDNA4's) picked on an MI325X for Kimi-K3 at TP 8
    [finding] = evaluate(_facts("AssertionError: mla_gluon requires gfx950 (CDNA4), got gfx942")).findings[:1]
    assert finding.rule == "OP-7.86" and "newer Instinct GPU on gfx942" in finding.title
    [change] = finding.changes
    assert (change.flag, change.proposed) == (op7_aiter.AITER_MLA_ENV, "0")
    assert "PR #50817" in finding.actions[0]


def test_another_programs_arch_requirement_is_not_read_as_aiters():
    # a quantization's own requirement (Quark's OCP MX on MI350) names no AITER or Gluon kernel
    findings = evaluate(_facts("ValueError: Quark OCP MX quantization requires gfx950, got gfx90a")).findings
    assert all(f.rule != "OP-7.86" for f in findings)
