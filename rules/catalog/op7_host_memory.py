"""OP-7.30: the host killed the server for memory (Kubernetes' OOMKilled, the kernel's OOM killer, Ray's memory
monitor). OP-7.54: the host refused it memory (PyTorch's CPU allocator, the OS's ENOMEM).

Why a rule of its own: an on-call engineer pastes `kubectl describe pod` or `kubectl get pods` as often as the
server's log, and a container killed for its memory limit leaves no Python traceback, only Kubernetes' reason
`OOMKilled` (exit code 137: SIGKILL), Docker's `"OOMKilled": true` or the kernel's `Out of memory: Killed process`.
It is host memory, never the GPU's, so the GPU fixes (`--gpu-memory-utilization`, `--max-num-seqs`) do nothing.
The kernel kills a container's process when the container's memory cgroup exceeds its limit (Kubernetes'
resources.limits.memory, `docker run --memory`), and a memory-backed emptyDir (`medium: Memory`, the usual /dev/shm
for vLLM) counts against that limit (Kubernetes' documentation of emptyDir and of memory limits). What vLLM itself
holds in host memory, from its source: the weights as they are read from disk, a multimodal processor cache in
each API server process and engine core (`--mm-processor-cache-gb`, 4 GiB each by default, vllm/config/multimodal.py,
0.32), a CPU weight offload (`--cpu-offload-gb`, 0.5 on) and a CPU KV offload (`--kv-offloading-size`, 0.11 on),
and in V0 engines a CPU swap space of 4 GiB per GPU by default (`--swap-space`, 0.4-0.17; pinned where it can be,
vllm/worker/cache_engine.py, 0.8.5). Under Ray (`--distributed-executor-backend ray`, or an RL framework's actors),
Ray's memory monitor acts first: the raylet kills the most recently scheduled task or actor once the node's memory
passes RAY_memory_usage_threshold, 0.95 by default, and says so in its own words (`ray.exceptions.OutOfMemoryError:
Task was killed due to the node running low on memory.`, `… which exceeds the memory usage threshold of 0.95`); its
Out-Of-Memory Prevention page documents the threshold and RAY_memory_monitor_refresh_ms=0 to turn it off.

OP-7.54: an allocation the host refused outright. Linux lets a process allocate more than is free (overcommit) and
kills later; it refuses at the allocation only when the request is an obvious overcommit under its heuristic mode
(vm.overcommit_memory=0: more than RAM and swap could hold), when strict accounting is on (mode 2: the commit limit is
swap plus vm.overcommit_ratio, 50 % by default, of RAM), or when the process has an address-space limit (`ulimit -v`):
the kernel's overcommit-accounting documentation. PyTorch's CPU allocator then says how much it asked for
(`DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes`), and Python's calls `[Errno 12] Cannot
allocate memory` (a fork of a large process under strict accounting among them).
"""

from __future__ import annotations

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import RAY_MEMORY_MONITOR, SHELL_SIGKILL, SYSTEMD_REPORTED, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

MM_PROCESSOR_CACHE_GIB = 4  # vLLM 0.32's default --mm-processor-cache-gb, per API server process and engine core
RAY_MEMORY_THRESHOLD = 0.95  # Ray's default RAY_memory_usage_threshold (its Out-Of-Memory Prevention page)
SHELL_CONFIDENCE = 0.6  # the shell saw SIGKILL; that the OOM killer sent it is the likeliest reading, not certain
_CONFIRM = (
    "Confirm it was memory: the kernel logs each kill (`dmesg -T | grep -i -E 'killed process|out of memory'`, "
    "`journalctl -k`); with no such line, something else sent SIGKILL (`kill -9`, or an orchestrator at the end of "
    "its grace period after SIGTERM)."
)


_HOLD_LESS = (
    "Or hold less in host memory: --mm-processor-cache-gb 0 for a multimodal model (its inputs are processed "
    "again), a smaller --cpu-offload-gb or --kv-offloading-size, --swap-space 0 on a V0 engine, and a sizeLimit on a "
    "memory-backed /dev/shm."
)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.HOST_OOM_KILLED)
    if not events:
        return []
    ray = [e for e in events if e.component == RAY_MEMORY_MONITOR]
    if ray and len(ray) == len(events):
        return [_ray_finding(next((e for e in ray if e.memory_threshold is not None), ray[0]))]
    events = [e for e in events if e.component != RAY_MEMORY_MONITOR]
    held = next((e for e in events if e.rss_gib is not None), None)
    # systemd's line names the unit, whose limit is the first thing to look at; the kernel's says what it held
    unit = next((e for e in events if e.component == SYSTEMD_REPORTED), None)
    return [_unit_finding(unit, held) if unit is not None else _finding(events[0], held)]


def _ray_finding(kill: LogEvent) -> Finding:
    """Ray's memory monitor killed a worker: the node's memory past Ray's threshold, before the kernel acted."""
    node = (
        f" ({kill.node_used_gb:g} of {kill.node_total_gb:g} GB, past its threshold {kill.memory_threshold:g})"
        if kill.node_used_gb is not None and kill.node_total_gb is not None and kill.memory_threshold is not None
        else ""
    )
    threshold = (
        f"this node's was {kill.memory_threshold:g}"
        if kill.memory_threshold is not None
        else f"{RAY_MEMORY_THRESHOLD:g} unless set"
    )
    return RULE.finding(
        Severity.CRITICAL,
        f"Ray's memory monitor killed a worker for the node's host memory{node}: host RAM, not the GPU's",
        summary="Ray's raylet kills the most recently scheduled task or actor when the node's memory use passes "
        f"RAY_memory_usage_threshold ({RAY_MEMORY_THRESHOLD:g} of it by default), before the kernel's OOM killer "
        "would. Everything on the node counts: vLLM's workers (a Ray actor per GPU), Ray's object store, and any "
        "other actor there (an RL framework's trainer beside its vLLM rollout). GPU memory flags change nothing.",
        evidence=[
            c.log_evidence(
                kill,
                name="killed for memory (Ray's memory monitor)",
                value=None if kill.rss_gib is None else f"the worker held {kill.rss_gib:g} GB",
            )
        ],
        actions=[
            "See what held the memory: the error's `Top 10 memory users`, or `ray logs raylet.out -ip <node>`; "
            "then give the node (or its container: resources.limits.memory, `docker run --memory`) more memory, or "
            "place fewer other actors on it.",
            _HOLD_LESS,
            f"Ray kills at RAY_memory_usage_threshold ({threshold}): where the node's use peaks briefly just past it, "
            "raise it (0.98) in the environment Ray starts with (`ray start`, the container's); "
            "RAY_memory_monitor_refresh_ms=0 disables the monitor and leaves the kernel's OOM killer at 100 %. On a "
            "node whose GPU shares its memory (DGX Spark's GB10, Jetson) vLLM's GPU share counts as node memory, so "
            "a model load can cross the threshold with nothing leaking (MiaAI-Lab/GLM-5.3-Flash-NVFP4-Dual-DGX-Spark "
            "PR #2 disables the monitor there).",
        ],
        confidence=0.85,
    )


def _unit_finding(kill: LogEvent, held: LogEvent | None) -> Finding:
    """systemd's journal: the OOM killer killed a process of the server's unit (its MemoryMax, or the host's RAM)."""
    unit = kill.message or "<unit>"
    holding = f", holding {held.rss_gib:.1f} GiB" if held is not None and held.rss_gib is not None else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"the OOM killer killed the server of systemd's unit {unit} for host memory{holding}: the unit's memory "
        "limit or the host's RAM, not the GPU's",
        summary="systemd says the kernel's OOM killer killed a process of the unit, which is how a vLLM server run "
        "as a service dies of host memory: no traceback, the unit failed with result 'oom-kill'. The kernel kills "
        "when the unit's cgroup passes its MemoryMax (or MemoryHigh keeps it reclaiming), or when the whole host "
        "runs out. GPU memory flags change nothing.",
        evidence=[
            c.log_evidence(kill, name="killed for memory (systemd)", value=unit),
            *(
                [c.log_evidence(held, name="anonymous memory it held", value=round(held.rss_gib or 0, 1))]
                if held
                else []
            ),
        ],
        actions=[
            f"See the unit's limit and its peak: `systemctl show {unit} -p MemoryMax -p MemoryHigh -p MemoryPeak`; "
            f"raise or remove the limit (`sudo systemctl edit {unit}`: MemoryMax= under [Service]) above the model's "
            "weights plus the buffers below, then restart it.",
            _HOLD_LESS,
            "If the unit has no limit, the host ran out: the kernel's line (`journalctl -k | grep -i 'killed "
            "process'`) names the process and what it held; stop what else runs there, or give the host more memory.",
        ],
        confidence=0.85,
    )


def _finding(kill: LogEvent, held: LogEvent | None) -> Finding:
    holding = f", holding {held.rss_gib:.1f} GiB" if held is not None and held.rss_gib is not None else ""
    shell = kill.component == SHELL_SIGKILL
    evidence = [c.log_evidence(kill, name="killed with SIGKILL" if shell else f"killed for memory ({kill.component})")]
    if held is not None and held is not kill:
        evidence.append(c.log_evidence(held, name="anonymous memory it held", value=round(held.rss_gib or 0, 1)))
    title = (
        "the server was killed with SIGKILL (the shell's `Killed`): most often the kernel's OOM killer, for host "
        "memory, not the GPU's"
        if shell
        else f"{kill.component} killed the server for host memory (OOMKilled{holding}): the container's memory "
        "limit, not the GPU's"
    )
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary="The kernel kills a container's process when the container's memory (its cgroup) exceeds its "
        "limit, or the host runs out: exit code 137 (SIGKILL) and no traceback. It is host RAM, so GPU memory "
        "flags change nothing. vLLM holds in host memory the weights as it reads them, a multimodal processor "
        f"cache in each API server process and engine core (--mm-processor-cache-gb, {MM_PROCESSOR_CACHE_GIB} GiB "
        "each by default), what --cpu-offload-gb and --kv-offloading-size move off the GPU, and in V0 engines "
        f"--swap-space ({vllm_defaults.SWAP_SPACE_GIB} GiB per GPU by default); a memory-backed /dev/shm (an "
        "emptyDir with medium: Memory) counts against the same limit.",
        evidence=evidence,
        actions=([_CONFIRM] if shell else [])
        + [
            "Raise the container's memory limit (resources.limits.memory in Kubernetes, `docker run --memory`) "
            "above the model's weights plus the buffers above; watch the pod's memory while it starts and serves "
            "(`kubectl top pod`, container_memory_working_set_bytes).",
            _HOLD_LESS,
            "If the node itself ran out (the kernel's `Out of memory` without `Memory cgroup`), other pods on it "
            "compete: give the pod a memory request equal to its limit (Guaranteed QoS) or a node of its own.",
        ],
        confidence=SHELL_CONFIDENCE if shell else 0.85,
    )


RULE = Rule(
    code="OP-7.30",
    title="the host killed the server for memory",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Kubernetes' `OOMKilled` (`kubectl describe pod`'s `Reason:`, `kubectl get pods`' status), Docker's "
        '`"OOMKilled": true`, the kernel\'s `[Memory cgroup] Out of memory: Killed process N (name) … anon-rss:…kB`, '
        "the shell's `Killed` (SIGKILL, most often the OOM killer's: asked to be confirmed in the kernel log), and "
        "Ray's memory monitor's `Task was killed due to the node running low on memory` / `… which exceeds the memory "
        "usage threshold of 0.95` / the raylet's `N Workers (tasks / actors) killed due to memory pressure (OOM)`; "
        "systemd's journal for a service (`<unit>.service: A process of this unit has been killed by the OOM killer`, "
        "`Failed with result 'oom-kill'`), with the unit's MemoryMax to look at.",
        why="A kill for host memory leaves no traceback and looks like a crash; its fix is the container's memory "
        "limit or what vLLM holds in host memory, never a GPU flag.",
        example="`kubectl describe pod` showing `Last State: Terminated, Reason: OOMKilled, Exit Code: 137` under a "
        "32Gi memory limit, the pod in CrashLoopBackOff.",
        fix="A larger memory limit; a smaller multimodal processor cache, CPU offload or V0 swap space; a bounded "
        "memory-backed /dev/shm; under Ray, the node's memory and what else runs there, or its threshold raised where "
        "the peak is brief.",
        limits="Says which limit was hit only as far as the kernel's words do (a cgroup's or the node's); does not "
        "read the limit's value from the pod spec.",
        references=[
            "https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/",
            "https://kubernetes.io/docs/concepts/storage/volumes/#emptydir",
            "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html",
        ],
    ),
)

# --- OP-7.54 the host refused an allocation ---------------------------------------------------------------------------


def _check_refused(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.HOST_ALLOC_REFUSED)
    if not events or facts.events_of(LogEventKind.HOST_OOM_KILLED):  # a kill says more than a refusal before it
        return []
    event = next((e for e in events if e.memory_gib is not None), events[0])
    asked = f" of {event.memory_gib:.1f} GiB" if event.memory_gib is not None else ""
    return [
        RULE_REFUSED.finding(
            Severity.CRITICAL,
            f"the host refused an allocation{asked} of host memory (ENOMEM): host RAM or its limits, not the GPU's",
            summary="Linux refuses an allocation outright only when it is an obvious overcommit (more than RAM and "
            "swap could hold), when strict accounting (vm.overcommit_memory=2) has reached its commit limit, or "
            "when the process has an address-space limit; GPU memory flags change nothing.",
            evidence=[c.log_evidence(event, name="host memory refused", value=event.message)],
            actions=[
                "Compare the request with the host: `free -g`; `cat /proc/sys/vm/overcommit_memory` (2 is strict: "
                "`grep Commit /proc/meminfo` shows CommitLimit, swap plus vm.overcommit_ratio, 50 % by default, of "
                "RAM) and `ulimit -v` (unlimited unless set) in the server's environment.",
                _HOLD_LESS,
                "A checkpoint in .bin or .pt files is read whole into host memory; safetensors files are mapped "
                "instead, so a safetensors copy of the model asks far less at load.",
            ],
            confidence=0.75,
        )
    ]


RULE_REFUSED = Rule(
    code="OP-7.54",
    title="the host refused the server memory (ENOMEM)",
    category=Category.STARTUP,
    check=_check_refused,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes`, Python's "
        "`[Errno 12] Cannot allocate memory`; a kill for memory in the same text is OP-7.30's instead.",
        why="Linux overcommits and kills later; a refusal at the allocation means an obvious overcommit, strict "
        "accounting at its commit limit, or an address-space limit, each a host setting or the host's size.",
        example="`RuntimeError: [enforce fail at alloc_cpu.cpp:117] … DefaultCPUAllocator: can't allocate memory: you "
        "tried to allocate 8589934592 bytes. Error code 12 (Cannot allocate memory)` while a checkpoint loads.",
        fix="A host (or limits) with the memory the request needs; less held in host memory (the multimodal cache, "
        "CPU offload, V0's swap space); safetensors rather than .bin checkpoints.",
        limits="Says how much one allocation asked when PyTorch prints it; what else held the host's memory is the "
        "host's to say.",
        references=["https://www.kernel.org/doc/html/latest/mm/overcommit-accounting.html"],
    ),
)

RULES: list[Rule] = [RULE, RULE_REFUSED]
