"""OP-7.97: Triton's compiler failing on a vLLM kernel, read from LLVM's and MLIR's words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_triton_compile
from rules.evaluate import evaluate
from rules.facts import Facts


def _findings(lines: list[str]):
    return op7_triton_compile.RULE_TRITON_COMPILE.evaluate(Facts(events=parse_lines(lines).events))


def test_a_bfloat16_instruction_the_gpu_lacks_proposes_float16():
    # unsloth#5337: RDNA2 (gfx1032) has no native bf16 dot; the fix kept the dtype off bf16
    [finding] = _findings(["LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.fdot2.bf16.bf16"])
    assert "bfloat16 instruction (llvm.amdgcn.fdot2.bf16.bf16)" in finding.title
    assert (finding.changes[0].flag, finding.changes[0].proposed) == ("--dtype", "float16")


def test_a_warp_shuffle_names_a_gpu_triton_does_not_support():
    [finding] = _findings(["LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32"])
    assert "older than Volta" in finding.title and not finding.changes
    assert "Pascal" in finding.actions[0]


def test_a_pipeliner_error_names_the_kernel_from_the_dumped_module():
    # vllm#30872: LoRA's expand kernel on SM100
    lines = [
        "/x/vllm/lora/ops/triton_ops/kernel_utils.py:73:16: error: 'tt.elementwise_inline_asm' op pipeliner "
        "doesn't know how to predicate this op.",
        "LLVM ERROR: Fatal pipeliner error",
        "module {",
        "  tt.func public @_lora_expand_kernel(%arg0: !tt.ptr<bf16> {tt.divisibility = 16 : i32}",
    ]
    top = evaluate(Facts(events=parse_lines(lines).events)).findings[0]
    assert top.rule == "OP-7.97"
    assert top.title.startswith("Triton's compiler failed (")
    assert "on _lora_expand_kernel" in top.title and "Upgrade vLLM" in top.actions[1]


def test_host_memory_and_a_module_dump_alone():
    [oom] = _findings(["LLVM ERROR: out of memory"])
    assert "ran out of host memory" in oom.title
    assert _findings(["  tt.func public @_lora_expand_kernel(%arg0: !tt.ptr<bf16>"]) == []


def test_the_pre_ampere_layout_assertion_stays_op_7_81s():
    lines = [
        "python: /project/lib/Analysis/Allocation.cpp:43: std::pair<...> mlir::triton::getCvtOrder(...): Assertion "
        '`!(srcMmaLayout && dstMmaLayout) && "Unexpected mma -> mma layout conversion"\' failed.',
        "LLVM ERROR: Failed to translate TritonGPU to LLVM IR.",
    ]
    assert _findings(lines) == []
