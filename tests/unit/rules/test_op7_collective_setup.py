"""OP-7.88: a device's collectives refusing the launch's setup (HabanaAI/vllm-fork PR #170's, vllm-ascend#1955's and
OpenRLHF#957's lines, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_collective_setup
from rules.evaluate import evaluate
from rules.facts import Facts


def _findings(line: str):
    return op7_collective_setup.RULE_COLLECTIVE_SETUP.evaluate(Facts(events=parse_lines([line]).events))


def test_gaudis_graph_capture_of_a_collective_needs_lazy_collectives():
    line = "RuntimeError: collective nonSFG is not supported during hpu graph capturing"
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.88"
    assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("PT_HPU_ENABLE_LAZY_COLLECTIVES", "true", "env")]


def test_hccls_listen_names_the_address_and_the_ports_owner():
    line = (
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288][HcclSocket][Listen] "
        "socket type[1], listen on ip[192.168.20.160] and specific port[16666] fail. Please check the port status and "
        "whether the port is been using by other process."
    )
    [finding] = _findings(line)
    assert "could not listen on 192.168.20.160:16666" in finding.title
    assert finding.actions[0].startswith("`ss -ltnp | grep 16666`") and "HCCL_IF_BASE_PORT" in finding.actions[1]


def test_cuda_ipc_without_pidfd_open_turns_expandable_segments_off():
    line = (
        "RuntimeError: The kernel on this machine does not support the pidfd_open syscall needed to use IPC for CUDA "
        "tensors when expandable_segments:True is set. Consider using expandable_segments:False via "
        "torch.cuda.memory._set_allocator_settings('expandable_segments:False') for this allocation."
    )
    [finding] = _findings(line)
    assert [(c.flag, c.proposed) for c in finding.changes] == [("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False")]


def test_oneccls_transport_without_a_libfabric_provider():
    """llm-d/llm-d PR #2270's line, verbatim but for its indentation: FI_PROVIDER=tcp, as that PR did."""
    [finding] = _findings("oneCCL: atl_ofi_comm.cpp:232 init_transport: EXCEPTION: failed to initialize ATL")
    assert "libfabric found no provider" in finding.title
    assert [(c.flag, c.proposed) for c in finding.changes] == [("FI_PROVIDER", "tcp")]
