"""OP-7.179: FlashInfer's attention kernels refused the model's head dimension (or its KV page)."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_flashinfers_head_dim_check_names_the_dimension_and_proposes_tritons_attention():
    # flashinfer-ai/flashinfer#4546, verbatim: Gemma 4 (head_dim 512 in its global layers) on an RTX 5090; FlashInfer
    # PR #4570 added the kernel
    top = top_finding(
        "Right now trying to start gemma 4 on vllm with flashinfer causes an error : `Invalid head_dim: 512, must be "
        "divisible by 16 and in range [16, 256]`"
    )
    assert top.rule == "OP-7.179" and "head dimension 512 (it takes multiples of 16 from 16 to 256)" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("--attention-backend", "TRITON_ATTN")]
    assert any("PR #4570" in action for action in top.actions)


def test_the_tensorrt_llm_kernels_check_reads_the_same_without_claiming_which_limit():
    # vllm#25811, verbatim: Qwen3-Next-80B on B200 with FlashInfer; the reporter found other backends ran it
    top = top_finding(
        "(EngineCore_DP0 pid=3339204) RuntimeError: Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128), got "
        "headDimPerCtaV=%d, headDimQk=%d, headDimV=%d, numTokensPerPage=%d256256256544"
    )
    assert top.rule == "OP-7.179" and "head dimension or KV page size" in top.title
    assert "head dimensions of 32 to 2048 and at most 128 tokens per KV page" in top.title


def test_the_prefill_finding_no_tile_that_fits_is_the_gpus_shared_memory_for_the_head_dimension():
    # vllm PR #49917, verbatim: Gemma 4 (head_dim 512) forced onto FLASHINFER on an RTX 3090; and sglang#4196's
    # FlashInfer error, verbatim, for DeepSeek-V2-Lite's MLA prefill on an L40
    for line in (
        "Unsupported max_mma_kv: 0",
        "RuntimeError: Error in function 'BatchPrefillWithRaggedKVCacheDispatched' at /usr/local/lib/python3.10/"
        "dist-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh:2215: Unsupported max_mma_kv: 0",
    ):
        top = top_finding(line)
        assert top.rule == "OP-7.179" and "no kernel tile for it fits this GPU's shared memory" in top.title, line
        assert "RTX 3090" in top.summary
        assert [(c.flag, c.proposed) for c in top.changes] == [("--attention-backend", "TRITON_ATTN")]
        assert not any("PR #4570" in action for action in top.actions)  # a newer kernel does not fit the memory
