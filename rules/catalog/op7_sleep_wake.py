"""OP-7.100: sleep mode's wake_up could not map vLLM's GPU memory back.

Why a rule of its own: with `--enable-sleep-mode`, vLLM allocates its weights and KV cache through its own allocator
(csrc/cumem_allocator.cpp over the CUDA driver's virtual memory calls), releases that memory at `/sleep` and creates
and maps it again at `/wake_up`. A driver call that fails there is printed in the allocator's own words, `CUDA Error:
<cuGetErrorString's words> at …/cumem_allocator.cpp:<line>`, wrapped by the engine as `Call to wake_up method failed:`,
which reaches an HTTP client as a 500. Out of memory is the common one and has one cause: while vLLM slept, something
else took the memory it had released (a trainer colocated with it, whose PyTorch cache grew into it; another vLLM
instance woken first), so there is no room to map it back (vllm PR #34602 reproduces it with another process
allocating most of the GPU; llm-d-incubation/llm-d-fast-model-actuation#746, two instances sharing a GPU).
`invalid argument` on a later sleep/wake cycle is a stale mapping from an earlier one that failed to unmap, a vLLM
bug (vllm PR #45565, issue #36651).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_sleep_wake(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.SLEEP_WAKE_FAILED)
    if not events:
        return []
    event = events[0]
    out_of_memory = (event.message or "").lower() == "out of memory"
    evidence = [c.log_evidence(event, name="vLLM's sleep-mode allocator", value=event.message)]
    if out_of_memory:
        return [
            RULE_SLEEP_WAKE.finding(
                Severity.CRITICAL,
                "sleep mode could not take vLLM's GPU memory back at wake_up: while it slept, another process (a "
                "colocated trainer, another vLLM instance) took the memory it had released",
                summary="With sleep mode vLLM releases its weights' and KV cache's GPU memory at /sleep and maps it "
                "again at /wake_up; the CUDA driver had no room for it, so the memory freed at sleep is now held "
                "elsewhere, and the engine stays asleep (or half awake) until it is freed.",
                evidence=evidence,
                actions=[
                    "Free the GPU before waking vLLM: in a trainer colocated with it, release PyTorch's cache "
                    "(`torch.cuda.empty_cache()`) and offload what training keeps on the GPU (parameters, optimizer "
                    "state); with several vLLM instances on one GPU, put the awake one to sleep first. `nvidia-smi` "
                    "just before the wake shows who holds the memory.",
                    "Or wake in parts (`/wake_up?tags=weights`, then `tags=kv_cache` once the trainer has freed "
                    "its memory), or give vLLM a smaller share (--gpu-memory-utilization) so both fit at once.",
                ],
                confidence=0.75,
            )
        ]
    return [
        RULE_SLEEP_WAKE.finding(
            Severity.CRITICAL,
            f"sleep mode's allocator failed a CUDA driver call ({event.message}) putting vLLM to sleep or waking it",
            summary="vLLM's sleep-mode allocator maps and unmaps its memory through the CUDA driver's virtual memory "
            "calls; `invalid argument` on a later cycle has been a mapping left over from an earlier cycle whose "
            "unmap failed, a vLLM bug.",
            evidence=evidence,
            actions=[
                "Read the first failure in the log (an earlier wake_up that ran out of memory leaves mappings behind); "
                "restart the server to clear them. The allocator's handling of a failed cycle is a known vLLM issue "
                "(issue #36651, PR #45565): upgrade to a release whose notes mention it.",
            ],
            confidence=0.55,
        )
    ]


RULE_SLEEP_WAKE = Rule(
    code="OP-7.100",
    title="sleep mode's wake_up could not map vLLM's memory back",
    category=Category.RELIABILITY,
    check=_check_sleep_wake,
    needs=("events",),
    page=RulePage(
        checks="vLLM's sleep-mode allocator: `CUDA Error: <words> at …/cumem_allocator.cpp:<line>` (under `Call to "
        "wake_up method failed:`, or in an HTTP 500's body).",
        why="Sleep mode gives the GPU memory back at /sleep and needs it again at /wake_up; whatever took it in "
        "between makes the wake fail.",
        example="`Call to wake_up method failed: CUDA Error: out of memory at <path>:163` from a second vLLM instance "
        "on the same GPU (llm-d-incubation/llm-d-fast-model-actuation#746).",
        fix="Free the GPU before waking (the trainer's cache, the other instance asleep), wake in parts, or a smaller "
        "--gpu-memory-utilization; for `invalid argument`, restart and upgrade.",
        limits="The allocator's words do not say who holds the memory: `nvidia-smi` at the moment of the wake does.",
        references=[
            "https://github.com/vllm-project/vllm/pull/34602",
            "https://github.com/vllm-project/vllm/pull/45565",
            "https://github.com/llm-d-incubation/llm-d-fast-model-actuation/issues/746",
        ],
    ),
)

RULES: list[Rule] = [RULE_SLEEP_WAKE]
