"""OP-7.220: NVML answered "Not Supported" inside one of vLLM's processes.

Why a rule of its own: vLLM starts its engine core and workers as child processes, forked by default, and queries the
GPUs through NVML in them. On WSL, NVML is not compatible with fork: a forked child's NVML calls fail with
NVML_ERROR_NOT_SUPPORTED, which pynvml raises as NVMLError_NotSupported, even for the basic offline example
(vllm#32559, fixed by vllm PR #32749). From 0.15.0 vLLM starts them with spawn on WSL itself: the 0.15.0 wheel's
vllm/utils/system_utils.py gives "WSL is detected and NVML is not compatible with fork" as its reason to override
VLLM_WORKER_MULTIPROC_METHOD, and the 0.14.1 wheel's has no such reason. Elsewhere (a virtual GPU, a Jetson) NVML
may lack the query itself, which the same error says.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

SPAWN_ON_WSL_FROM = "0.15.0"  # vLLM's first release that starts its processes with spawn on WSL (PR #32749)


def _check(facts: Facts) -> list[Finding]:
    event = facts.first_event(LogEventKind.NVML_NOT_SUPPORTED)
    if event is None:
        return []
    return [
        RULE.finding(
            Severity.HIGH,
            "NVML answered Not Supported inside vLLM's process: on WSL, NVML is not compatible with the forked "
            "processes vLLM starts by default (spawn them instead)",
            summary="vLLM starts its engine core and workers as child processes, forked unless told otherwise, and "
            "queries the GPUs through NVML in them. Under WSL a forked child's NVML calls fail as not supported "
            f"(vllm#32559, even for the basic offline example); vLLM {SPAWN_ON_WSL_FROM} and later start them with "
            "spawn on WSL by themselves (vllm PR #32749). On a virtual GPU or a Jetson, NVML may lack the query "
            "itself.",
            evidence=[c.log_evidence(event, name="NVML error")],
            actions=[
                "Start vLLM's worker and engine processes with Python's spawn multiprocessing start method: "
                "`export VLLM_WORKER_MULTIPROC_METHOD=spawn` before the script or server (and guard a script's code "
                f"with `if __name__ == '__main__':`), or upgrade vLLM to {SPAWN_ON_WSL_FROM} or later, which does so "
                "on WSL (`pip install -U 'vllm>=0.15.0'`).",
                "Not on WSL: check that the driver supports the query (`nvidia-smi -q` prints N/A for what NVML "
                "does not support on this GPU).",
            ],
            confidence=0.7,
        )
    ]


RULE = Rule(
    code="OP-7.220",
    title="NVML answered Not Supported in vLLM's process (WSL's NVML and forked processes)",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="pynvml's `NVMLError_NotSupported` in any line (vLLM's vendored pynvml or nvidia-ml-py's).",
        why="On WSL, NVML fails in the processes vLLM forks; vLLM spawns them on WSL from 0.15.0 (vllm PR #32749).",
        example="`(EngineCore_DP0 pid=29657) ERROR 01-17 21:03:52 [core.py:935] vllm.third_party.pynvml."
        "NVMLError_NotSupported: Not Supported` running examples/offline_inference/basic/basic.py on WSL "
        "(vllm PR #32749).",
        fix="VLLM_WORKER_MULTIPROC_METHOD=spawn, or vLLM 0.15.0 or later.",
        limits="The text rarely says it is WSL; the action for another host (a query the GPU lacks) follows.",
        references=["https://github.com/vllm-project/vllm/pull/32749"],
    ),
)

RULES: list[Rule] = [RULE]
