"""OP-5.24: a profile of the engine shows its time in the sampler's torch work, which CPU threads decide.

Why a rule of its own: the sampler's steps (penalties, top-k/top-p, logits processors) run many small
torch ops per engine step, and torch sizes its CPU thread pool from the CPUs it sees: in a container or
Kubernetes pod that is the node's count, not the pod's CPU limit, so each op spins dozens of threads over a
few real CPUs. vLLM itself says so: its multiprocess executor cut torch's threads "to avoid unnecessary CPU
contention" (0.5-0.27), and 0.32 warns that multi-threaded torch CPU ops "can degrade performance through
spin-wait contention and cgroup CPU-quota throttling". A person who pasted `py-spy top` has already measured
where the time goes. Source: vllm#9113 (88% in `apply_penalties` in a KServe pod; OMP_NUM_THREADS set to the
pod's CPUs fixed it).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

HOT_SHARE = 0.5  # the share of samples one function must hold to be where the time goes
# vLLM's sampling code across the versions: V0's sampler and its penalty helpers, V1's sample package.
_SAMPLER_CODE = re.compile(
    r"vllm/(?:v1/sample/|model_executor/layers/(?:sampler|utils|logits_processor)\.py|model_executor/sampling_metadata)"
)


def _check_sampler_hotspot(facts: Facts) -> list[Finding]:
    rows = [e for e in facts.events_of(LogEventKind.PROFILE_HOTSPOT) if e.own_share is not None]
    if not rows:
        return []
    hottest = max(rows, key=lambda e: e.own_share or 0.0)
    if (hottest.own_share or 0.0) < HOT_SHARE or not _SAMPLER_CODE.search(hottest.code_file or ""):
        return []
    return [_hotspot_finding(hottest)]


def _hotspot_finding(row: LogEvent) -> Finding:
    share = f"{row.own_share:.0%}"
    penalties = "penalt" in (row.function or "")
    return RULE_SAMPLER_HOTSPOT.finding(
        Severity.MEDIUM,
        f"the engine spends {share} of its time in {row.function} (the sampler's torch ops on the CPU side): "
        "check torch's CPU threads",
        summary=f"The profile puts {share} of the engine's samples in {row.function} ({row.code_file}), a few small "
        "torch ops per step that should take a sliver of it. Torch runs them over its CPU thread pool, sized from "
        "the CPUs it sees; in a container or pod that is the whole node, so the threads spin against each other "
        "and the CPU quota throttles them. vLLM's own executor limits torch's threads for this reason when it "
        "starts worker processes, which a single-GPU server does not.",
        evidence=[c.log_evidence(row, name="share of profile samples", value=round(row.own_share or 0.0, 3))],
        actions=[
            "Set OMP_NUM_THREADS in the server's environment to the CPUs it really has (in a pod, its CPU limit; "
            "`cat /sys/fs/cgroup/cpu.max` inside it gives quota and period) and restart it.",
            "Give the pod more CPUs if the limit is below a few per GPU."
            + (
                " Requests without presence/frequency/repetition penalties skip this step altogether."
                if penalties
                else ""
            ),
        ],
        confidence=0.6,
    )


RULE_SAMPLER_HOTSPOT = Rule(
    code="OP-5.24",
    title="a profile puts the engine's time in the sampler's CPU-side torch work",
    category=Category.SATURATION,
    check=_check_sampler_hotspot,
    needs=("events",),
    page=RulePage(
        checks=f"A pasted `py-spy top` whose hottest row holds at least {HOT_SHARE:.0%} of the samples in vLLM's "
        "sampling code (V0's sampler.py and layers/utils.py, V1's v1/sample/).",
        why="The sampler's torch ops are small; when they hold the engine's time, torch's CPU thread pool is "
        "oversubscribed (sized from the node's CPUs inside a container) or throttled by the CPU quota.",
        example="88% of samples in `apply_penalties (vllm/model_executor/layers/utils.py)` in a KServe pod with "
        "penalties in the requests; OMP_NUM_THREADS set to the pod's CPUs fixed it (vllm#9113).",
        fix="OMP_NUM_THREADS = the CPUs the server may use; more CPUs for the pod.",
        limits="py-spy's own time includes waiting inside native calls; a GPU that syncs in the sampler reads the "
        "same, so the thread count is the first thing to check, not a certainty. Other hot functions are left to "
        "the person who profiled.",
        references=["https://github.com/vllm-project/vllm/issues/9113"],
    ),
)

RULES: list[Rule] = [RULE_SAMPLER_HOTSPOT]
