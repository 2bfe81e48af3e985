"""OP-7.186: Triton may not run the ptxas it ships."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_ptxas_without_its_execute_bit_proposes_the_toolkits_through_tritons_variable():
    # haydeniw/dynamo#15, verbatim: a Dynamo worker pod in CUDA graph capture; TRITON_PTXAS_PATH was the workaround,
    # lost where it was not passed to the generated worker pods
    top = top_finding(
        "PermissionError: [Errno 13] Permission denied: "
        "'/opt/dynamo/venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas'"
    )
    assert top.rule == "OP-7.186" and "not executable" in top.title
    assert [(c.flag, c.kind) for c in top.changes] == [("TRITON_PTXAS_PATH", "env")]
    assert any("chmod +x" in action for action in top.actions)


def test_a_permission_denied_elsewhere_is_not_this():
    other = top_finding("PermissionError: [Errno 13] Permission denied: '/root/.cache/vllm'")
    assert getattr(other, "rule", None) != "OP-7.186"
