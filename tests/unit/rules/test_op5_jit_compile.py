"""OP-5.63: a kernel was JIT-compiled while serving."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_kernel_compiled_after_warm_up_is_a_latency_spike_on_the_requests_in_that_step():
    # vllm PR #47546's problem, as noonghunna/club-3090#142's log shows it, verbatim
    top = top_finding(
        "(Worker_TP0 pid=119) WARNING 05-15 16:04:22 [jit_monitor.py:103] Triton kernel JIT compilation during "
        "inference: _zero_kv_blocks_kernel. This causes a latency spike; consider extending warmup to cover this "
        "shape/config."
    )
    assert top.rule == "OP-5.63"
    assert top.title.startswith("the Triton kernel _zero_kv_blocks_kernel was compiled while serving")
    assert top.changes == [] and "warm-up requests" in top.actions[0]


def test_the_rpc_timeout_a_compile_caused_stays_on_top():
    top = top_finding(
        "WARNING [jit_monitor.py:129] CuTeDSL JIT compilation during inference: W4A16FusedMoeKernel",
        "EngineCore ERROR TimeoutError: RPC call to sample_tokens timed out.",
    )
    assert top.rule == "HL-3"
