"""OP-7.189: vLLM's engine was created off the main thread, where Python refuses a signal handler."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding


def test_the_engine_built_in_tritons_python_backend_is_named_with_the_v0_stopgap():
    # vllm#12690, verbatim: Triton Inference Server's Python backend with VLLM_USE_V1=1
    top = top_finding(
        'pb_stub.cc:366] "Failed to initialize Python stub: ValueError: signal only works in main thread of the '
        "main interpreter"
    )
    assert top.rule == "OP-7.189" and "off the process's main thread" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == ("VLLM_USE_V1", "0", "env")
    assert "on the main thread" in top.actions[0]


def test_no_v0_stopgap_is_proposed_where_the_release_has_no_v0():
    top = top_finding(
        "ValueError: signal only works in main thread of the main interpreter", config=config(vllm_version="0.12.0")
    )
    assert top.rule == "OP-7.189" and top.changes == []


def test_on_07_where_v1_was_opt_in_the_v0_stopgap_is_still_proposed():
    top = top_finding(
        "ValueError: signal only works in main thread of the main interpreter", config=config(vllm_version="0.7.1")
    )
    assert [c.flag for c in top.changes] == ["VLLM_USE_V1"]
