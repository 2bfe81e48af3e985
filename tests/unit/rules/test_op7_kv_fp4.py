"""OP-7.198: `module 'torch' has no attribute 'nvfp4'`, the NVFP4 KV cache on a path without one."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_nvfp4_dtype_torch_never_had_is_the_kv_cache_dtype_not_a_torch_to_upgrade():
    # vllm#43562, verbatim: RTX PRO 6000 (sm_120), --kv-cache-dtype nvfp4; the reporter served with fp8
    top = top_finding("AttributeError: module 'torch' has no attribute 'nvfp4'")
    assert top is not None and top.rule == "OP-7.198"
    change = top.changes[0]
    assert (change.flag, change.current, change.proposed) == ("--kv-cache-dtype", "nvfp4", "fp8")
    assert "No torch release has a dtype named nvfp4" in top.summary


def test_another_name_torch_lacks_is_still_a_torch_version_question():
    top = top_finding("AttributeError: module 'torch' has no attribute 'float8_e8m0fnu'")
    assert top is not None and top.rule != "OP-7.198"
