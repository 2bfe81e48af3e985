"""OP-7.160: HIP could not export GPU memory to another process on a Radeon GPU, under ROCm's legacy IPC mode.

Why a rule of its own: vLLM's processes share GPU buffers through IPC handles (`hipIpcGetMemHandle`: tensor
parallelism's custom all-reduce, tensors handed between processes). vLLM's ROCm image sets
`HSA_ENABLE_IPC_MODE_LEGACY=1` (docker/Dockerfile.rocm, as ROCm/ATOM PR #2206 quotes it), the switch back to the IPC of
ROCm before 7.0, whose new IPC keeps memory pinned after hipFree (ROCm/hip#3886). On Radeon GPUs (RX 7900 XTX, gfx1100;
Radeon AI PRO R9700, gfx1201) the legacy mode makes every export fail: ROCr's `Failed to create memory for IPC, failed
with hsa_status: 4097` (HSA_STATUS_ERROR_INVALID_ARGUMENT), HIP's `IPC memory creation failed for memory: 0x…`, and
`hipIpcGetMemHandle` returning invalid argument; with the variable unset or 0 it succeeds on every GPU
(ROCm/rocm-systems#2209, a commenter's test on four R9700s inside vLLM's ROCm containers; not yet confirmed by AMD).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

LEGACY_IPC_ENV = "HSA_ENABLE_IPC_MODE_LEGACY"


def _ipc_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "HIP could not export GPU memory to vLLM's other processes (IPC): on Radeon GPUs ROCm's legacy IPC mode, "
        f"which vLLM's ROCm image turns on ({LEGACY_IPC_ENV}=1), fails every export",
        summary="Tensor parallelism shares GPU buffers between vLLM's worker processes through IPC handles. vLLM's "
        f"ROCm image sets {LEGACY_IPC_ENV}=1, the IPC of ROCm before 7.0, because the new one keeps memory pinned "
        "after it is freed (ROCm/hip#3886); on Radeon cards (gfx1100, gfx1201) the legacy mode refuses the export "
        "with an invalid argument (hsa_status 4097), and with it unset or 0 the export succeeds (ROCm/rocm-systems"
        "#2209, reproduced inside vLLM's ROCm containers).",
        evidence=[c.log_evidence(event, name="the IPC export HIP refused", value=found.group(0))],
        changes=[
            ConfigChange(
                flag=LEGACY_IPC_ENV,
                current="1",
                proposed="0",
                reason="ROCm's IPC of 7.0 and later exports memory on Radeon GPUs where the legacy mode fails",
                cost="memory exported once stays pinned after it is freed until the process exits (ROCm/hip#3886): "
                "a restart of the engine inside one process, or a KV connector registering buffers, leaks it",
                kind="env",
            )
        ],
        actions=[
            f"Run the container with `-e {LEGACY_IPC_ENV}=0` (Kubernetes: the container's env), and check that "
            "`env | grep HSA_` inside it shows the new value.",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-7.160",
    title="HIP's IPC export refused on Radeon GPUs under the legacy IPC mode",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.ROCM_IPC_EXPORT_FAILED, _ipc_finding),
    needs=("events",),
    page=RulePage(
        checks="ROCr's `Failed to create memory for IPC, failed with hsa_status: 4097`, HIP's `IPC memory creation "
        "failed for memory: 0x…` and `hipIpcGetMemHandle` returning invalid argument.",
        why=f"vLLM's ROCm image sets {LEGACY_IPC_ENV}=1; on Radeon GPUs that mode's IPC export fails.",
        example="ROCm/rocm-systems#2209: four Radeon AI PRO R9700s in vLLM's ROCm containers; the export worked with "
        "the variable unset or 0.",
        fix=f"{LEGACY_IPC_ENV}=0 in the container's environment.",
        limits="Reported by users, not yet confirmed by AMD; the words do not name the GPU.",
        references=[
            "https://github.com/ROCm/rocm-systems/issues/2209",
            "https://github.com/ROCm/hip/issues/3886",
        ],
    ),
)

RULES: list[Rule] = [RULE]
