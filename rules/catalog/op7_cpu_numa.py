"""OP-7.71: vLLM's CPU backend could not move its memory to the NUMA node of its threads: the container forbids it.

Why a rule of its own: on the CPU backend each worker binds its OpenMP threads to cores (VLLM_CPU_OMP_THREADS_BIND)
and then asks the kernel to move the process's pages to those cores' NUMA node with libnuma's numa_migrate_pages.
A container runtime's default capabilities and seccomp profile deny that call (and get_mempolicy / set_mempolicy):
errno 1, EPERM. Before vLLM PR #19241 (merged June 2025) the worker raised it as `RuntimeError: numa_migrate_pages
failed. errno: 1` and the engine died at start (vllm#10556, vLLM's CPU image with VLLM_CPU_OMP_THREADS_BIND set);
since then it is a warning and the server runs with memory possibly on a remote node. The bare `get_mempolicy:
Operation not permitted` is the same denial, which vLLM's CPU installation guide (PR #24017, vllm#24016) calls
harmless apart from NUMA placement; both are fixed by granting the container SYS_NICE and an unconfined seccomp
profile.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

_MIGRATE = re.compile(r"numa_migrate_pages failed\. errno: (?P<errno>\d+)")
EPERM = 1  # Linux's "Operation not permitted"
_GRANT = (
    "Grant the container what NUMA calls need: `docker run --cap-add SYS_NICE --security-opt seccomp=unconfined` "
    "(Kubernetes: `securityContext.capabilities.add: [SYS_NICE]` and `seccompProfile: {type: Unconfined}`), or run it "
    "privileged; vLLM's CPU installation guide gives the same."
)


def _check_cpu_numa(facts: Facts) -> list[Finding]:
    for event in facts.events_of(*c.RELAYED_TOO):
        migrate = _MIGRATE.search(event.message or event.raw)
        if migrate is not None:
            return [_migrate_refused(event, int(migrate["errno"]))]
    denied = facts.events_of(LogEventKind.NUMA_CALL_DENIED)
    return [_call_denied(denied[0])] if denied else []


def _call_denied(event: LogEvent) -> Finding:
    """libnuma's bare perror of a refused call: the same denial, which vLLM's CPU guide calls harmless apart from
    where the memory sits."""
    call = event.function or "a NUMA call"
    return RULE_CPU_NUMA.finding(
        Severity.LOW,
        f"the container denies NUMA memory-policy calls ({call}: Operation not permitted): the server runs, its "
        "memory possibly on a remote NUMA node",
        summary="libnuma printed a memory-policy call the kernel refused (vLLM's CPU backend makes them when it binds "
        "its threads; numactl does too). A container's default capabilities and seccomp profile deny "
        "get_mempolicy, set_mempolicy and migrate_pages; vLLM's CPU installation guide calls "
        "the line harmless except that memory is not bound to the NUMA node of the threads using it (vllm#24016, "
        "PR #24017), which costs speed on a host with more than one socket.",
        evidence=[c.log_evidence(event, name="NUMA call denied", value=call)],
        changes=[_grant_change()],
        actions=[
            _GRANT,
            "On a single-socket host (`lscpu | grep 'NUMA node(s)'` says 1) it changes nothing: ignore it.",
        ],
        confidence=0.85,
    )


def _migrate_refused(event: LogEvent, errno: int) -> Finding:
    """An error (a traceback's RuntimeError, an ERROR line) is vLLM before PR #19241 failing at start; a WARNING line
    is a later release that ran on."""
    denied = errno == EPERM
    reason = "EPERM: the container's capabilities or seccomp profile forbid it" if denied else f"errno {errno}"
    warned = (event.level or "").upper().startswith("WARN")
    return RULE_CPU_NUMA.finding(
        Severity.MEDIUM if warned else Severity.CRITICAL,
        f"vLLM's CPU worker could not move its memory to its threads' NUMA node (numa_migrate_pages, {reason})"
        + ("; a warning: the server runs, its memory possibly on a remote node" if warned else ""),
        summary="On the CPU backend each worker binds its OpenMP threads to cores (VLLM_CPU_OMP_THREADS_BIND) and "
        "moves the process's pages to those cores' NUMA node. "
        + (
            "A container is denied that system call by default (no SYS_NICE, the default seccomp profile); vLLM "
            "before PR #19241 (June 2025) raised the refusal and the engine died at start, later releases warn and "
            "run with memory possibly on a remote node."
            if denied
            else "The kernel refused the call; its errno says why (`errno -l` lists them)."
        ),
        evidence=[c.log_evidence(event, name="numa_migrate_pages", value=f"errno {errno}")],
        changes=[_grant_change()] if denied else [],
        actions=[
            _GRANT,
            "Or upgrade vLLM past PR #19241 (merged June 2025), which warns instead of failing; the memory may then "
            "sit on a remote NUMA node, slower on a multi-socket host.",
        ],
        confidence=0.8 if denied else 0.6,
    )


def _grant_change() -> ConfigChange:
    return ConfigChange(
        flag="container capabilities",
        proposed="--cap-add SYS_NICE --security-opt seccomp=unconfined",
        reason="lets the worker set and migrate its memory's NUMA policy",
        cost="the container may change scheduling priorities and make system calls the default profile blocks",
        kind="setting",
    )


RULE_CPU_NUMA = Rule(
    code="OP-7.71",
    title="the CPU backend's NUMA memory binding denied by the container",
    category=Category.STARTUP,
    check=_check_cpu_numa,
    needs=("events",),
    page=RulePage(
        checks="`numa_migrate_pages failed. errno: N` (vLLM's CPU worker binding its threads, an error before PR "
        "#19241 and a warning since), and libnuma's `get_mempolicy: Operation not permitted` (or set_mempolicy, "
        "mbind, migrate_pages, move_pages).",
        why="A container's default capabilities and seccomp profile deny the NUMA memory-policy system calls the "
        "CPU backend makes after binding its OpenMP threads to cores.",
        example="`RuntimeError: numa_migrate_pages failed. errno: 1` from vLLM's CPU image with "
        "VLLM_CPU_OMP_THREADS_BIND set (vllm#10556).",
        fix="`--cap-add SYS_NICE --security-opt seccomp=unconfined` (or the pod's securityContext), or privileged; a "
        "vLLM after PR #19241 only warns.",
        limits="Whether the refusal was fatal is read from the line's level: a WARNING is a release after PR #19241 "
        "that ran on, anything else the fatal one. libnuma's bare `get_mempolicy: Operation not permitted` is the "
        "same denial, read as a note: harmless per vLLM's guide except for where memory sits.",
        references=[
            "https://github.com/vllm-project/vllm/issues/10556",
            "https://github.com/vllm-project/vllm/pull/19241",
            "https://github.com/vllm-project/vllm/pull/24017",
            "https://github.com/vllm-project/vllm/issues/24016",
        ],
    ),
)

RULES: list[Rule] = [RULE_CPU_NUMA]
