"""OP-7.37: the server ran out of file descriptors (`OSError: [Errno 24] Too many open files`).

Why a rule of its own: every client connection, every ZMQ socket between vLLM's processes and every file a model
loads holds a descriptor, so a busy server meets the process's open-files limit, and the error lands wherever the
next descriptor was wanted. vLLM raises its own soft limit to 65535 at start (`set_ulimit` in
vllm/utils/system_utils.py, 0.32) and warns when the hard limit does not allow it (`Found ulimit of N and failed to
automatically increase …`): the limit is the host's, the container runtime's or the service manager's to raise.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

VLLM_TARGET_LIMIT = 65535  # the soft limit vLLM's set_ulimit asks for at start
# A kept limit worth a warning before anything fails: each concurrent client connection holds a descriptor, so the
# shell's usual 1024 caps a server near a thousand connections; tens of thousands (a container's usual) do not.
FEW_DESCRIPTORS = 4096

_RAISE = (
    f"Raise the open-files limit where the server starts, to {VLLM_TARGET_LIMIT} or more: Docker `--ulimit "
    f"nofile={VLLM_TARGET_LIMIT}:{VLLM_TARGET_LIMIT}` (or the daemon's default-ulimits), systemd's "
    f"LimitNOFILE={VLLM_TARGET_LIMIT}, `ulimit -n {VLLM_TARGET_LIMIT}` in the shell that starts it (the hard "
    "limit, /etc/security/limits.conf, must allow it); on Kubernetes the container runtime's own limit applies "
    "(containerd's and CRI-O's service LimitNOFILE)."
)


def _check_fd_limit(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.FD_LIMIT)
    hit = next((e for e in events if e.fd_limit is None), None)  # the warning names the error too: not a hit
    kept = next((e for e in events if e.fd_limit is not None), None)
    if hit is not None:
        return [_ran_out(hit, kept)]
    if kept is not None and kept.fd_limit is not None and kept.fd_limit < FEW_DESCRIPTORS:
        return [_kept_low(kept)]
    return []


def _limit_words(kept: LogEvent | None) -> str:
    return (
        f" vLLM found a limit of {kept.fd_limit} at start and could not raise it to {VLLM_TARGET_LIMIT} (the hard "
        "limit is lower)."
        if kept is not None
        else ""
    )


def _ran_out(hit: LogEvent, kept: LogEvent | None) -> Finding:
    evidence = [c.log_evidence(hit, name="out of file descriptors")]
    if kept is not None:
        evidence.append(c.log_evidence(kept, name="the limit vLLM kept", value=kept.fd_limit))
    return RULE_FD_LIMIT.finding(
        Severity.HIGH,
        "the server ran out of file descriptors (Too many open files)"
        + (f": its limit stayed at {kept.fd_limit}" if kept is not None else ""),
        summary="The process hit its open-files limit: client connections, sockets between vLLM's processes and "
        "model files each hold a descriptor, so the error lands wherever the next one was wanted, not where they "
        f"went.{_limit_words(kept)}",
        evidence=evidence,
        actions=[
            _RAISE,
            "Count what holds them while it runs: `ls /proc/<pid>/fd | wc -l` against `grep 'open files' "
            "/proc/<pid>/limits`; thousands of sockets are client connections (a client that never closes them, "
            "or more concurrent streams than the limit).",
        ],
        confidence=0.8,
    )


def _kept_low(kept: LogEvent) -> Finding:
    return RULE_FD_LIMIT.finding(
        Severity.LOW,
        f"vLLM could not raise its open-files limit above {kept.fd_limit}: many connections will fail with Too many "
        "open files",
        summary=f"At start vLLM raises its soft open-files limit to {VLLM_TARGET_LIMIT}; the hard limit kept it at "
        f"{kept.fd_limit}. Nothing has failed yet: under many concurrent connections the server runs out of "
        "descriptors.",
        evidence=[c.log_evidence(kept, name="the limit vLLM kept", value=kept.fd_limit)],
        actions=[_RAISE],
        confidence=0.7,
    )


RULE_FD_LIMIT = Rule(
    code="OP-7.37",
    title="the server out of file descriptors",
    category=Category.RELIABILITY,
    check=_check_fd_limit,
    needs=("events",),
    page=RulePage(
        checks="`OSError: [Errno 24] Too many open files`; vLLM's start-up warning `Found ulimit of N and failed to "
        f"automatically increase …` (alone, with N below {FEW_DESCRIPTORS}: a low-severity warning).",
        why="Each client connection, socket between vLLM's processes and model file holds a descriptor; vLLM raises "
        f"its soft limit to {VLLM_TARGET_LIMIT} at start only as far as the hard limit allows.",
        example="`Found ulimit of 1024 and failed to automatically increase with error current limit exceeds maximum "
        "limit.` at start, `OSError: [Errno 24] Too many open files` under load.",
        fix=f"An open-files limit of {VLLM_TARGET_LIMIT} or more where the server starts (Docker --ulimit nofile, "
        "systemd LimitNOFILE, limits.conf, the container runtime's).",
        limits="The error names no file; what holds the descriptors is read from /proc while it runs.",
        references=["https://docs.docker.com/reference/cli/docker/container/run/#ulimit"],
    ),
)

RULES: list[Rule] = [RULE_FD_LIMIT]
