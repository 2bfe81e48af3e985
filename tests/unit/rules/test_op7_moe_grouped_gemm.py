"""OP-7.187: the fused-MoE kernels' CUTLASS grouped GEMM will not initialize on this GPU."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_grouped_gemm_refusal_proposes_marlin_for_the_experts():
    # a DGX Spark guide (GB10, Nemotron-3-Nano NVFP4 on vLLM 0.18.1rc1), verbatim; forcing Marlin fixed it there
    top = top_finding("[TensorRT-LLM][ERROR] Failed to initialize cutlass TMA WS grouped gemm")
    assert top.rule == "OP-7.187"
    [change] = top.changes
    assert (change.flag, change.proposed) == ("--moe-backend", "marlin")
    assert "compute_cap" in top.actions[0]


def test_the_architecture_the_kernels_file_names_is_in_the_title():
    # NVIDIA/cutlass#3096's autotuner line as a write-up quotes it (4x RTX PRO 6000, SM120)
    top = top_finding(
        "[TensorRT-LLM][ERROR] Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal "
        "(cutlass_kernel_file_gemm_grouped_sm120_M128_BS_group2.generated.cu:60)"
    )
    assert top.rule == "OP-7.187" and "(sm120, as the kernel's file names it)" in top.title
