"""OP-7.78: PyTorch's dispatcher refusing a call to one of vLLM's compiled ops (vllm#48979's line, verbatim: a pull
request added an argument to topk_softmax, and the commenter's extension predated it)."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op7_compiled_ops
from rules.evaluate import evaluate
from rules.facts import Facts

TOPK = (
    "(EngineCore pid=240) ERROR 07-22 06:50:42 [core.py:1330] RuntimeError: _moe_C::topk_softmax() expected at most 6 "
    "argument(s) but received 7 argument(s). Declaration: _moe_C::topk_softmax(Tensor($0! -> ) topk_weights, "
    "Tensor($1! -> ) topk_indices, Tensor($2! -> ) token_expert_indices, Tensor gating_output, bool renormalize, "
    "Tensor? bias) -> ()"
)


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_the_threads_line_is_the_top_finding_and_names_the_op():
    top = evaluate(_facts(TOPK)).top
    assert top.rule == "OP-7.78"
    assert top.title.endswith("`_moe_C::topk_softmax()` expected at most 6 argument(s) but received 7 argument(s)")
    assert "vllm._C.__file__" in top.actions[0] and "--no-build-isolation" in top.actions[1]


# written in the dispatcher's words (aten/src/ATen/core/function_schema_inl.h), for ops vLLM registers
@pytest.mark.parametrize(
    ("line", "op"),
    [
        ("RuntimeError: No such operator _C::rms_norm", "_C::rms_norm"),
        (
            "RuntimeError: _C_cache_ops::reshape_and_cache() is missing value for argument 'k_scale'. Declaration: "
            "_C_cache_ops::reshape_and_cache(Tensor key, Tensor value) -> ()",
            "_C_cache_ops::reshape_and_cache",
        ),
    ],
)
def test_an_op_the_extension_lacks_or_an_argument_it_lacks_is_the_same_mismatch(line: str, op: str):
    [finding] = op7_compiled_ops.RULE_COMPILED_OPS.evaluate(_facts(line))
    assert f"`{op}()`" in finding.title


def test_pytorchs_own_ops_are_not_vllms():
    line = "RuntimeError: aten::add() expected at most 3 argument(s) but received 4 argument(s)"
    assert op7_compiled_ops.RULE_COMPILED_OPS.evaluate(_facts(line)) == []


def test_an_op_without_a_kernel_for_the_device_is_a_build_for_another_device():
    """vllm#13075 (a HIP-only `_C::rms_norm` called on CUDA) and vllm#25155 (`_C::onednn_mm` on an ARM CPU build),
    their lines cut to the parts read."""
    cuda = (
        "NotImplementedError: Could not run '_C::rms_norm' with arguments from the 'CUDA' backend. This could be "
        "because the operator doesn't exist for this backend. '_C::rms_norm' is only available for these backends: "
        "[HIP, Meta, BackendSelect, Python, AutogradCUDA]."
    )
    [finding] = op7_compiled_ops.RULE_COMPILED_OPS.evaluate(Facts(events=parse_lines([cuda]).events))
    assert "no CUDA kernel for `_C::rms_norm` (it registered it for HIP only)" in finding.title
    cpu = "NotImplementedError: Could not run '_C::onednn_mm' with arguments from the 'CPU' backend."
    [arm] = op7_compiled_ops.RULE_COMPILED_OPS.evaluate(Facts(events=parse_lines([cpu]).events))
    assert arm.title.endswith("built for another device, or one that leaves it out")


def test_torch_ops_namespace_without_the_op_is_an_extension_that_did_not_load_or_lacks_it():
    # vllm#5454, verbatim: a source install of vLLM 0.5.0 without its compiled extension (copying the .so fixed it)
    [finding] = op7_compiled_ops.RULE_COMPILED_OPS.evaluate(
        _facts("AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'")
    )
    assert finding.title.startswith("vLLM's compiled extension does not provide `_C::rms_norm()`: it did not load")
    assert finding.actions[0].startswith("If the extension did not load at all") and "vllm#5454" in finding.actions[0]


def test_the_vllm_namespace_of_ops_is_vllms_too():
    # ByteDance-Seed/FlexPrefill#17, verbatim: an older vLLM without flash_attn_with_kvcache (upgrading fixed it)
    [finding] = op7_compiled_ops.RULE_COMPILED_OPS.evaluate(
        _facts("[rank0]: AttributeError: '_OpNamespace' 'vllm' object has no attribute 'flash_attn_with_kvcache'")
    )
    assert "`vllm::flash_attn_with_kvcache()`" in finding.title


def test_vllms_flash_attention_extension_is_one_of_its_compiled_extensions():
    # OpenBMB/MiniCPM-V#800, verbatim: a fork's source checkout built with VLLM_USE_PRECOMPILED=1
    [finding] = op7_compiled_ops.RULE_COMPILED_OPS.evaluate(
        _facts("AttributeError: '_OpNamespace' '_vllm_fa2_C' object has no attribute 'varlen_fwd'")
    )
    assert "`_vllm_fa2_C::varlen_fwd()`" in finding.title
