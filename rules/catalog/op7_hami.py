"""OP-7.110: HAMi's GPU-sharing library, preloaded into the pod, crashed vLLM's NCCL start ("Illegal device id").

Why a rule of its own: HAMi shares GPUs between Kubernetes pods by preloading its library (HAMi-core, libvgpu.so)
into every container it schedules; it hooks CUDA's allocation calls to enforce each pod's memory limit. Its
`cuMemCreate` hook reads the device of the current context only when the allocation is on a device, and otherwise
uses an uninitialised value (Project-HAMi/HAMi-core#187; HAMi-core PR #188 proposed initialising it, and a HAMi
maintainer answered that HAMi v2.8.1 fixed the illegal device id). NCCL allocates
host memory through cuMemCreate (a host-NUMA location) when it probes and uses cuMem host buffers at communicator
start (`ncclCuMemHostEnable`, misc/cudawrap.cc), so with tensor parallelism the hook logs `Illegal device id:
<garbage>` and the worker segfaults (Project-HAMi/HAMi#1764 on 8x H200, HAMi-core#169 with vLLM 0.18, HAMi#1853 with
HAMi 2.8.2). The crash is HAMi's, not vLLM's or the GPU's. NCCL_CUMEM_HOST_ENABLE=0 makes NCCL skip that probe and
use /dev/shm for its shared-memory transport instead (NCCL's maintainers describe the switch in NVIDIA/nccl#2106);
the other ways out are a HAMi-core with the fix, or GPUs given to the pod whole, without HAMi's library.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

CUMEM_HOST_ENV = "NCCL_CUMEM_HOST_ENABLE"


def _check_hami(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.HAMI_ILLEGAL_DEVICE)
    if not events:
        return []
    event = events[0]
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"HAMi's GPU-sharing library crashed the process at NCCL's start: 'Illegal device id: {event.message}'",
            summary="HAMi-core (libvgpu.so), which HAMi preloads into the pod to enforce its GPU memory limit, "
            "hooks CUDA's cuMemCreate and reads an uninitialised device id when the allocation is not on a device "
            "(HAMi-core#187). NCCL makes exactly such host allocations when a communicator starts, so a vLLM worker "
            "with tensor parallelism logs this line and segfaults. The fault is in HAMi's library, not vLLM's.",
            evidence=[c.log_evidence(event, name="the device id HAMi-core read", value=event.message)],
            changes=[
                ConfigChange(
                    flag=CUMEM_HOST_ENV,
                    current=None,
                    proposed="0",
                    reason="NCCL then skips the cuMem host allocation HAMi's hook mishandles and uses /dev/shm for "
                    "its shared-memory transport",
                    kind="env",
                )
            ],
            actions=[
                f"Set {CUMEM_HOST_ENV}=0 in the pod's environment: NCCL skips its cuMem host probe and buffers, the "
                "path HAMi's hook crashes on; keep /dev/shm large enough for NCCL's shared-memory transport.",
                "Or upgrade HAMi (its maintainers said v2.8.1 fixed the illegal device id, yet HAMi 2.8.2 still failed "
                "in Project-HAMi/HAMi#1853: check HAMi-core's cuMemCreate hook, HAMi-core#187), or give the pod whole "
                "GPUs without HAMi's library (no vGPU memory or core limit on it).",
            ],
            confidence=0.75,
        )
    ]


RULE = Rule(
    code="OP-7.110",
    title="HAMi's GPU-sharing library crashed the process at NCCL's start",
    category=Category.STARTUP,
    check=_check_hami,
    needs=("events",),
    page=RulePage(
        checks="HAMi-core's `[HAMI-core ERROR (pid:… multiprocess_memory_limit.c:…)]: Illegal device id: <n>`.",
        why="The worker dies inside HAMi's preloaded library during NCCL's start; vLLM's own log shows only the "
        "death, and the fix is in the pod's environment or HAMi, not in vLLM's flags.",
        example="`[HAMI-core ERROR (pid:2244 thread=133445224001088 multiprocess_memory_limit.c:1255)]: Illegal device "
        "id: 31069` from `vllm bench throughput -tp 2` on two HAMi GPU fractions (Project-HAMi/HAMi#1853).",
        fix=f"{CUMEM_HOST_ENV}=0 in the pod; a HAMi whose cuMemCreate hook initialises the device; or whole GPUs "
        "without HAMi's library.",
        limits="The environment variable is read from NCCL's behaviour and HAMi-core's code, not from a thread that "
        "confirmed it; the text does not say which HAMi release runs.",
        references=[
            "https://github.com/Project-HAMi/HAMi-core/issues/187",
            "https://github.com/Project-HAMi/HAMi/issues/1764",
            "https://github.com/NVIDIA/nccl/issues/2106",
        ],
    ),
)

RULES: list[Rule] = [RULE]
