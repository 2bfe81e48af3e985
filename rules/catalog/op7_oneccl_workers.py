"""OP-7.103: oneCCL could not start the worker thread its collectives run on, so vLLM's XPU worker did not start.

Why a rule of its own: on Intel GPUs vLLM's worker warms oneCCL up at start with one all_reduce
(`XPUWorker.init_device`, vllm/v1/worker/xpu_worker.py), guarded only by whether torch has XCCL, not by the world
size: a single-GPU server needed a working oneCCL communicator to start (vllm-project/vllm#52386, v0.27.1 on an
Arc B390 under WSL2; vllm-project/vllm#10109, the offline example at one GPU, where the reporter got past it by
commenting the warm-up out). vllm-project/vllm PR #52389 skips the warm-up when the world size is 1. oneCCL then
stops with `oneCCL: exec.cpp:122 start_workers: EXCEPTION: failed to start worker # 0`; its own error line above it
says why the thread was refused (`error while creating worker thread #0 pthread_create returns 22` in
intel/torch-ccl#54), and `CCL_LOG_LEVEL=info` prints what it tried. With tensor parallelism the collectives are
needed, so the remedy is oneCCL's, not the warm-up's: a maintainer's answer in #10109 was to make oneCCL's
communication work first. OP-7.66 is oneCCL unable to open the GPUs' device files, a cause it names itself.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# errno values pthread_create returns (pthread_create(3)), as oneCCL prints them
_PTHREAD_CODES: dict[str, tuple[str, str]] = {
    "11": ("EAGAIN", "the process or container reached its limit of threads (`ulimit -u`, a pids cgroup limit)"),
    "22": (
        "EINVAL",
        "a thread attribute was refused; oneCCL starts the thread with the CPU and NUMA affinity it pins the worker "
        "to (CCL_WORKER_AFFINITY, or cores it chose outside the container's cpuset)",
    ),
    "1": ("EPERM", "the scheduling policy or priority asked for is not permitted here"),
}


def _check_oneccl_workers(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.ONECCL_WORKER_START)
    if not events:
        return []
    code = next((e.message for e in events if e.message), "")
    reason = _PTHREAD_CODES.get(code)
    parallel = c.tensor_parallel_size(facts) * c.pipeline_parallel_size(facts) > 1
    why = f" (pthread_create returned {code}, {reason[0]})" if reason else ""
    return [
        RULE_ONECCL_WORKERS.finding(
            Severity.CRITICAL,
            f"oneCCL (vLLM's collectives on Intel GPUs) could not start its worker thread{why}: vLLM's XPU worker "
            "runs a oneCCL all_reduce when it starts, so the engine did not start",
            summary="vLLM's XPU worker warms oneCCL up with one all_reduce while it initialises the device, and up "
            "to vllm PR #52389 it does so even on one GPU, where no collective is ever needed. oneCCL starts a worker "
            "thread for its collectives first; that thread was refused, so the warm-up, and the engine, failed.",
            evidence=[c.log_evidence(e, name="oneCCL", value=e.raw or e.message) for e in events[:2]],
            actions=_actions(reason, parallel),
            confidence=0.75,
        )
    ]


def _actions(reason: tuple[str, str] | None, parallel: bool) -> list[str]:
    """One GPU: the warm-up is the only collective, so a vLLM that skips it starts; more: oneCCL must work."""
    single = (
        "On one GPU (`--tensor-parallel-size 1`) no collective is needed: upgrade vLLM to a release with PR #52389, "
        "which skips the oneCCL warm-up when the world size is 1 (vllm#52386, reported on v0.27.1)."
    )
    multi = (
        "With tensor or pipeline parallelism oneCCL has to work: run with CCL_LOG_LEVEL=info and read its "
        "|CCL_ERROR| lines before the exception (vllm#10109's maintainer: make oneCCL's communication work first)."
    )
    unknown = "Its line `error while creating worker thread` says why."
    cause = f"pthread_create's {reason[0]}: {reason[1]}." if reason else unknown
    return [multi, single, cause] if parallel else [single, multi, cause]


RULE_ONECCL_WORKERS = Rule(
    code="OP-7.103",
    title="oneCCL could not start its worker thread (Intel GPUs)",
    category=Category.CONFIGURATION,
    check=_check_oneccl_workers,
    needs=("events",),
    page=RulePage(
        checks="oneCCL's `start_workers: EXCEPTION: failed to start worker # 0` and its `error while creating "
        "worker thread #0 pthread_create returns N`.",
        why="vLLM's XPU worker runs a oneCCL all_reduce at start, even on one GPU before vllm PR #52389; oneCCL "
        "needs its worker thread for it.",
        example="vllm#10109: the offline example on one Intel GPU stopped at `oneCCL: exec.cpp:122 start_workers`.",
        fix="On one GPU, a vLLM with PR #52389; with parallelism, oneCCL's own error "
        "(CCL_LOG_LEVEL=info), such as the affinity or thread limit pthread_create refused.",
        limits="Without oneCCL's own error line the reason the thread was refused is not in the text.",
        references=[
            "https://github.com/vllm-project/vllm/issues/52386",
            "https://github.com/vllm-project/vllm/pull/52389",
            "https://github.com/vllm-project/vllm/issues/10109",
            "https://github.com/intel/torch-ccl/issues/54",
        ],
    ),
)

RULES: list[Rule] = [RULE_ONECCL_WORKERS]
