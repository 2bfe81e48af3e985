"""OP-7.160: HIP's IPC export refused under the legacy IPC mode vLLM's ROCm image sets (Radeon GPUs)."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


@pytest.mark.parametrize(
    "line",
    [
        # ROCm/rocm-systems#2209, verbatim, the three lines of the chain (four R9700s in vLLM's ROCm containers)
        ":1:rocmemory.cpp :1043: Failed to create memory for IPC, failed with hsa_status: 4097",
        ":1:hip_memory.cpp:3354: IPC memory creation failed for memory: 0xbae00000",
        "hipIpcGetMemHandle -> 1 (invalid argument)",
    ],
)
def test_the_refused_export_proposes_the_new_ipc_mode_with_its_cost(line: str):
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.160"
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("HSA_ENABLE_IPC_MODE_LEGACY", "1", "0")
    assert "pinned" in change.cost


def test_other_hip_memory_errors_are_not_this():
    line = ":3:hip_memory.cpp :777 : 3852921767 us: hipMemGetInfo: Returned hipErrorInvalidValue :"
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top is None or top.rule != "OP-7.160"
