"""What the machine was doing when a live load overran: memory, stall pressure, and the state of
this test process's children and threads.

Why: the vLLM tier's heaviest situations have overrun on the CI box while vLLM itself kept its
usual throughput (its own log said so), so the cause lay outside vLLM: memory, CPU share, a child
stuck in the kernel or a thread of the test process. A failure message that carries this side of
the machine tells which, where a bare "still running after N s" told nothing.

Linux only, read from /proc; every reader degrades to "unknown" rather than failing the report.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from pathlib import Path

_PROC = Path("/proc")
_MEMINFO_KEYS = ("MemTotal", "MemAvailable", "Shmem", "Dirty")
_STATES = {
    "R": "runnable",
    "S": "sleeping",
    "D": "uninterruptible (kernel I/O or reclaim)",
    "Z": "zombie",
    "T": "stopped",
}


def snapshot(thread: threading.Thread | None = None) -> str:
    """Memory, pressure, load, affinity, the child processes and, when given, where `thread` is now."""
    lines = [
        f"memory: {_meminfo()}",
        f"pressure (some/full avg10 %): {_pressure()}",
        f"load average: {_read(_PROC / 'loadavg', 'unknown').split(' ')[:3]}; "
        f"{os.cpu_count()} CPUs, {_cpu_quota()}; this process may run on CPUs {sorted(os.sched_getaffinity(0))}; "
        f"its RSS {_rss_mib(os.getpid())} MiB",
        f"CPU topology: {cpu_topology()}",
        "children of the test process:",
        *(f"  {line}" for line in _children(os.getpid())),
    ]
    if thread is not None and thread.ident is not None:
        frame = sys._current_frames().get(thread.ident)
        if frame is not None:
            stack = "".join(traceback.format_stack(frame)[-6:])
            lines += [f"where '{thread.name}' is now:", stack.rstrip()]
    return "\n".join(lines)


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return default


def _meminfo() -> str:
    fields = {}
    for line in _read(_PROC / "meminfo").splitlines():
        key, _, rest = line.partition(":")
        if key in _MEMINFO_KEYS and rest.split():
            fields[key] = int(rest.split()[0]) // 1024
    return ", ".join(f"{key} {fields[key]} MiB" for key in _MEMINFO_KEYS if key in fields) or "unknown"


def _pressure() -> str:
    """Pressure stall information: the share of the last 10 s some (or all) tasks waited on a resource."""
    parts = []
    for resource in ("cpu", "memory", "io"):
        values = {}
        for line in _read(_PROC / "pressure" / resource).splitlines():
            kind, *pairs = line.split()
            values[kind] = dict(pair.split("=", 1) for pair in pairs).get("avg10", "?")
        if values:
            parts.append(f"{resource} {values.get('some', '?')}/{values.get('full', '?')}")
    return ", ".join(parts) or "unknown"


def _rss_mib(pid: int) -> int | str:
    for line in _read(_PROC / str(pid) / "status").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return "?"


def _children(pid: int, depth: int = 0) -> list[str]:
    """Each descendant: pid, state, age and CPU seconds, RSS, the kernel function it waits in, command."""
    lines = []
    for child in _child_pids(pid):
        fields = _stat_fields(child)
        if not fields:
            continue
        state, age_s = fields[0], _age_s(fields)
        command = _read(_PROC / str(child) / "cmdline").replace("\0", " ")[:140]
        wchan = _read(_PROC / str(child) / "wchan", "?") or "-"
        waited = cpu_wait_s(child)
        queued = f", waited {waited:.1f} s for a CPU" if waited is not None else ""
        lines.append(
            f"{'  ' * depth}pid {child} {_STATES.get(state, state)}, up {age_s:.0f} s, "
            f"CPU {_cpu_seconds(fields):.1f} s{queued}, {priority(child)}, RSS {_rss_mib(child)} MiB, "
            f"waits in {wchan}: {command}"
        )
        lines += _children(child, depth + 1)
    return lines or (["(none)"] if depth == 0 else [])


def _stat_fields(pid: int, task: Path | None = None) -> list[str]:
    """/proc/PID/stat's fields after the command name (which may hold spaces), or those of one
    thread's `task` folder; empty once it is gone."""
    return _read((task or _PROC / str(pid)) / "stat").rsplit(")", 1)[-1].split()


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds the process has used so far (None once it is gone)."""
    fields = _stat_fields(pid)
    return _cpu_seconds(fields) if fields else None


def cpu_wait_s(pid: int) -> float | None:
    """Seconds the process's live threads have spent runnable but waiting for a CPU (the run
    delay in /proc/PID/task/TID/schedstat; None without schedstats): beside its CPU seconds it
    tells a process starved of CPU (long wait) from one that slept or blocked (short wait)."""
    waits = []
    for task in (_PROC / str(pid) / "task").glob("*"):
        fields = _read(task / "schedstat").split()
        if len(fields) == 3 and fields[1].isdigit():
            waits.append(int(fields[1]) / 1e9)
    return sum(waits) if waits else None


def priority(pid: int) -> str:
    """Its nice value and, where the kernel groups sessions (autogroup), its session group's:
    with autogroup on, CPU time is shared between sessions first, so a process's own nice only
    ranks it inside its session."""
    fields = _stat_fields(pid)
    nice = f"nice {fields[16]}" if len(fields) > 16 else "nice ?"
    group = _read(_PROC / str(pid) / "autogroup")
    return f"{nice} ({group})" if group else nice


def starvation(pid: int) -> str:
    """One line on where a process's time went since it started: on a CPU, waiting for one, or
    neither (asleep or blocked, which its stack shows)."""
    fields = _stat_fields(pid)
    if not fields:
        return f"pid {pid} is gone"
    age_s = _age_s(fields)
    used_s, waited = _cpu_seconds(fields), cpu_wait_s(pid)
    if waited is None:
        return f"pid {pid}: CPU {used_s:.1f} s in its {age_s:.0f} s; no schedstats to say how long it waited for a CPU"
    asleep_s = max(0.0, age_s - used_s - waited)
    if waited >= asleep_s:
        cause = "mostly waiting for a CPU: starved by the processes that had them"
    else:
        cause = "mostly asleep or blocked, not kept from a CPU (its stack says on what)"
    return (
        f"pid {pid}: in its {age_s:.0f} s, CPU {used_s:.1f} s, waiting for a CPU {waited:.1f} s, "
        f"neither {asleep_s:.1f} s: {cause}"
    )


def _cpu_seconds(fields: list[str]) -> float:
    """User plus system CPU time from _stat_fields."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_pids(pid: int) -> list[int]:
    pids: list[int] = []
    for task in (_PROC / str(pid) / "task").glob("*"):
        pids += [int(p) for p in _read(task / "children").split()]
    return sorted(set(pids))


def _cpu_quota() -> str:
    """The cgroup's CPU limit (v2 cpu.max, else v1 cfs quota/period): a 2-CPU quota on a box that
    shows more CPUs makes every process share two."""
    v2 = _read(Path("/sys/fs/cgroup/cpu.max")).split()
    if len(v2) == 2:
        return "no cgroup CPU limit" if v2[0] == "max" else f"cgroup limit {int(v2[0]) / int(v2[1]):g} CPUs"
    quota = _read(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"))
    period = _read(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
    if quota.lstrip("-").isdigit() and period.isdigit() and int(quota) > 0:
        return f"cgroup limit {int(quota) / int(period):g} CPUs"
    return "no cgroup CPU limit"


def cpu_topology() -> str:
    """Each CPU's physical core and the CPU model: vLLM's CPU backend binds one logical CPU per
    physical core and reserves one for its scheduler, so two SMT siblings of one core bind
    differently from two cores (vllm/utils/ompmultiprocessing.py)."""
    cores = []
    for cpu in sorted(os.sched_getaffinity(0)):
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        siblings = _read(topology / "thread_siblings_list", "?")
        cores.append(f"cpu{cpu} core {_read(topology / 'core_id', '?')} (siblings {siblings})")
    models = [line.split(":", 1)[1].strip() for line in _read(_PROC / "cpuinfo").splitlines() if "model name" in line]
    model = models[0] if models else "unknown model"
    return f"{', '.join(cores)}; {model}"


def cpu_ticks() -> dict[str, int]:
    """The machine's CPU time so far by kind (/proc/stat, in clock ticks): differences over a window
    say whether the CPUs were busy, idle, waiting on I/O, or taken by the hypervisor (steal)."""
    first = _read(_PROC / "stat").splitlines()[:1]
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    values = first[0].split()[1:] if first else []
    return {name: int(value) for name, value in zip(names, values, strict=False)}


def process_cpu_seconds() -> dict[int, tuple[str, float]]:
    """CPU seconds used so far by this process and each of its descendants, with a short name:
    differences over a window say which of them had the CPUs."""
    used: dict[int, tuple[str, float]] = {}
    for current in process_tree(os.getpid()):
        fields = _stat_fields(current)
        if fields:
            words = _read(_PROC / str(current) / "cmdline").split("\0")
            name = " ".join(" ".join(word.rsplit("/", 1)[-1] for word in words[:4]).split())[:60] or "?"
            used[current] = (name, _cpu_seconds(fields))
    return used


def process_tree(pid: int) -> list[int]:
    """`pid` and every live descendant of it."""
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending += _child_pids(current)
    return tree


def thread_nices(pid: int) -> dict[int, int]:
    """The nice value of each live thread of a process (nice is per thread on Linux)."""
    nices = {}
    for task in (_PROC / str(pid) / "task").glob("*"):
        fields = _stat_fields(pid, task)
        if len(fields) > 16:
            nices[int(task.name)] = int(fields[16])
    return nices


def _age_s(fields: list[str]) -> float:
    """Seconds since the process started, from _stat_fields (its start time, in clock ticks after boot)."""
    return _uptime_s() - int(fields[19]) / os.sysconf("SC_CLK_TCK")


def _uptime_s() -> float:
    return float(_read(_PROC / "uptime", "0").split()[0])
