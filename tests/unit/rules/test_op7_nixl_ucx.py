"""OP-7.109: NIXL's UCX backend failed (disaggregated prefill's KV transfer)."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

FAILED = "nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND"


def test_ucx_without_cuda_transports_is_named_with_the_one_ucx_to_keep():
    # LMCache/LMCache#605: UCX's warning, then vLLM's EngineCore failing to start on NIXL_ERR_BACKEND
    top = top_finding(
        "[1746690477.974497] [llm206:611  :0]     ucp_context.c:1268 UCX  WARN  transports 'cuda_ipc','cuda_copy' are "
        "not available, please use one or more of: mm, posix, self, shm, sm, sysv, tcp",
        FAILED,
    )
    assert top.rule == "OP-7.109" and "no CUDA transports" in top.title
    assert "ucx_info -d" in top.actions[0] and top.changes[0].flag == "UCX_LOG_LEVEL"


def test_an_older_ucx_is_named_with_both_versions():
    # sgl-project/sglang#5709: UCX's own warning before NIXL's backend failed
    top = top_finding(
        "[1745994234.385141] [iv-ydsu9xoq9sqbxys4g59z:711260:0]     ucp_context.c:1774 UCX  WARN  UCP version is "
        "incompatible, required: 1.18, actual: 1.12 (release 1)",
        FAILED,
    )
    assert top.rule == "OP-7.109" and "(required 1.18, loaded 1.12)" in top.title


def test_the_status_alone_points_at_ucxs_lines():
    # ai-dynamo/dynamo#1108: Dynamo's log of vLLM's engine, the status bare
    top = top_finding("2025-05-16T04:56:18.119Z ERROR engine.run_mp_engine: NIXL_ERR_BACKEND")
    assert top.rule == "OP-7.109" and top.title.endswith("UCX's own lines above it say why")


def test_nixls_own_version_check_pasted_alone_names_both_versions_and_the_image():
    # ai-dynamo/nixl#1023, verbatim: Dynamo's vLLM runtime image shipped UCX 1.16.0; rebuilding with 1.19.0 fixed it
    top = top_finding("UCP API version is incompatible: required >= 1.19, actual 1.16.0")
    assert top.rule == "OP-7.109" and "(required 1.19, loaded 1.16.0)" in top.title
    assert any("nixl#1023" in action for action in top.actions)
