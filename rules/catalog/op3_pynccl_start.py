"""OP-3.6: vLLM 0.4's NCCL wrapper never started; its 'comm' AttributeError is the teardown, not the cause.

Why a rule of its own: vLLM 0.4's wrapper around NCCL (`NCCLCommunicator`, vllm/model_executor/parallel_utils/
pynccl.py in 0.4.0, later vllm/distributed/device_communicators/pynccl.py) set `self.comm` only at the end of its
start: after it had set the device, broadcast NCCL's unique id to every rank with torch.distributed (itself an NCCL
collective) and only then called ncclCommInitRank. Its `__del__` destroys `self.comm` unconditionally. So when any
step before failed (the broadcast, across nodes or between GPUs NCCL cannot connect), Python tears the half-built
object down and prints `AttributeError: 'NCCLCommunicator' object has no attribute 'comm'` after the real error, and
on Ray workers that line is the one repeated across the cluster. vllm#4062 (TP on one machine: NCCL's `Failed to
find reverse path` under the broadcast) and vllm#4114 (two nodes of four V100s) were both reported by this line;
the NCCL error above it was the failure. Later releases renamed the wrapper PyNcclCommunicator; its name in
this line is what dates it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# Failures of NCCL (or of what its start needs) that name the cause this teardown follows: their rules answer.
CAUSES = (LogEventKind.NCCL_ERROR, LogEventKind.NCCL_SYSTEM_ERROR, LogEventKind.SHM_TOO_SMALL)


def _check_pynccl_start(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.PYNCCL_NEVER_STARTED)
    if not events or facts.events_of(*CAUSES):
        return []
    return [
        RULE.finding(
            Severity.HIGH,
            "vLLM's NCCL communicator never started: the 'comm' AttributeError is its teardown, the cause is earlier",
            summary="vLLM 0.4's NCCLCommunicator sets its `comm` only after NCCL's unique id has reached every rank "
            "(a torch.distributed broadcast over NCCL) and ncclCommInitRank succeeded; its `__del__` destroys `comm` "
            "regardless. This AttributeError therefore follows a start that failed before: the first error of the "
            "same worker, above it, is the one to read (vllm#4062: NCCL's 'Failed to find reverse path' under that "
            "broadcast).",
            evidence=[c.log_evidence(events[0], name="the wrapper's teardown")],
            changes=[
                ConfigChange(
                    flag="NCCL_DEBUG",
                    current=None,
                    proposed="INFO",
                    reason="NCCL then logs the transport, interface and peer it failed on during the start",
                    kind="env",
                )
            ],
            actions=[
                "Read the first traceback of the failing worker above this line (on Ray, the worker's own `ERROR … "
                "ray_utils.py` lines), not this AttributeError; rerun with NCCL_DEBUG=INFO if it holds no NCCL "
                "error.",
                "Check NCCL alone between the same GPUs before vLLM (vLLM's troubleshooting guide's test script, or "
                "nccl-tests): across nodes the interface (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME) and matching "
                "drivers; on one machine, NCCL_P2P_DISABLE=1 as a test when the GPUs' topology is the problem.",
            ],
            confidence=0.7,
        )
    ]


RULE = Rule(
    code="OP-3.6",
    title="vLLM's NCCL communicator never started (its teardown's AttributeError hides the cause)",
    category=Category.PARALLELISM,
    check=_check_pynccl_start,
    needs=("events",),
    page=RulePage(
        checks="`AttributeError: 'NCCLCommunicator' object has no attribute 'comm'` (vLLM 0.4's NCCL wrapper), "
        "silent beside an NCCL error, a system error or a /dev/shm too small, whose rules name the cause.",
        why="The line is the teardown of a communicator whose start failed; chasing it as a bug in vLLM misses the "
        "NCCL failure printed before it.",
        example="`(RayWorkerVllm pid=14289) AttributeError: 'NCCLCommunicator' object has no attribute 'comm'` from "
        "eight V100s on two nodes (vllm#4114).",
        fix="The first error above it; NCCL_DEBUG=INFO; NCCL tested alone between the same GPUs.",
        limits="The line alone does not say which step of the start failed; the earlier traceback does.",
        references=[
            "https://github.com/vllm-project/vllm/issues/4062",
            "https://github.com/vllm-project/vllm/issues/4114",
        ],
    ),
)

RULES: list[Rule] = [RULE]
