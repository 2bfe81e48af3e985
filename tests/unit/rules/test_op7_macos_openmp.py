"""OP-7.183: vLLM's CPU extension built with Apple clang 17 misses an OpenMP symbol."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_missing_kmpc_symbol_names_the_compiler_and_not_a_torch_mismatch():
    # vllm PR #16049, verbatim (quoting vllm#15941): the merged docs name Apple clang 17 and Xcode 16.1's tools
    top = top_finding(
        'the main reason is from here ImportError("dlopen(/Users/aiserver/AI/vllm/vllm/_C.abi3.so, 0x0002): symbol '
        "not found in flat namespace '___kmpc_dispatch_deinit'\")"
    )
    assert top.rule == "OP-7.183" and "Apple clang 17" in top.title
    assert "Xcode 16.1" in top.actions[0]
