"""OP-7.100: sleep mode's wake_up could not map vLLM's GPU memory back; OP-7.163: a /sleep that freed nothing.

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

A /sleep that frees nothing (`Sleep mode freed 0.00 GiB memory, 63.15 GiB memory is still in use.`) is the
allocator's pool left empty: with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, PyTorch's own expandable
segments take the allocations that should have gone through vLLM's pool, so there is nothing for /sleep to release.
A maintainer called it a PyTorch bug (pytorch/pytorch#147851) on vllm PR #11743; vllm PR #14189 made vLLM refuse the
combination at start (`Expandable segments are not compatible with memory pool.`, vllm/device_allocator/cumem.py
0.8 to 0.20, in the message catalog), so the silent form belongs to 0.7 and to builds that carry the old allocator.
Without --enable-sleep-mode there is no /sleep to free anything (`Sleep mode is not enabled in the model config`).
vllm-ascend's NPU worker has the same limit with `PYTORCH_NPU_ALLOC_CONF` (a maintainer's answer on
modelscope/ms-swift#6636: `expandable_segments:False`).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity
from rules.signals import fmt


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


def _check_sleep_freed_nothing(facts: Facts) -> list[Finding]:
    empty = [e for e in facts.events_of(LogEventKind.SLEEP_FREED) if e.sleep_freed_gib is not None]
    empty = [e for e in empty if e.sleep_freed_gib < _NOTHING_GIB and (e.sleep_kept_gib or 0) >= _HELD_GIB]
    if not empty:
        return []
    event = empty[-1]
    npu = (event.code_file or "").startswith(_ASCEND_WORKER)
    variable = "PYTORCH_NPU_ALLOC_CONF" if npu else "PYTORCH_CUDA_ALLOC_CONF"
    return [
        RULE_SLEEP_FREED_NOTHING.finding(
            Severity.HIGH,
            f"sleep mode freed {fmt(event.sleep_freed_gib)} GiB and kept {fmt(event.sleep_kept_gib)} GiB in use: "
            f"vLLM's memory was not allocated through its sleep-mode pool ({variable}'s expandable_segments:True "
            "does that)",
            summary="Sleep mode can release only what vLLM's own allocator handed out. PyTorch's expandable "
            "segments take those allocations instead, so /sleep finds an empty pool and the "
            + (
                "NPU stays full (vllm-ascend's worker, whose allocator has the same limit)."
                if npu
                else "GPU stays "
                "full; vLLM 0.8 to 0.20 refuse the combination at start rather than sleep without effect."
            ),
            evidence=[
                c.log_evidence(event, "device memory freed by /sleep", event.sleep_freed_gib, _NOTHING_GIB, "<", "GiB")
            ],
            changes=[
                ConfigChange(
                    flag=variable,
                    current="expandable_segments:True",
                    proposed="expandable_segments:False",
                    reason="expandable segments bypass the pool sleep mode frees (pytorch/pytorch#147851)",
                    kind="env",
                )
            ],
            actions=[
                f"Start vLLM with expandable_segments:False in {variable} (check the image's and the launcher's "
                "environment as well as your own), then /sleep again and read the freed amount."
            ],
            confidence=0.65,
        )
    ]


# vllm-ascend's NPU worker (vllm_ascend/worker/worker_v1.py); vLLM's own are worker.py (V0) and gpu_worker.py (V1)
_ASCEND_WORKER = "worker_v1.py"
# "0.00 GiB" is what the worker prints for an empty pool; a sleep that keeps under a GiB in use freed what it had
_NOTHING_GIB = 0.01
_HELD_GIB = 1.0

RULE_SLEEP_FREED_NOTHING = Rule(
    code="OP-7.163",
    title="a /sleep freed no GPU memory",
    category=Category.RELIABILITY,
    check=_check_sleep_freed_nothing,
    needs=("events",),
    page=RulePage(
        checks="The worker's `Sleep mode freed X GiB memory, Y GiB memory is still in use.` with X at 0.00 and Y a "
        "GiB or more.",
        why="A colocated trainer counts on /sleep handing the GPU back; a sleep that frees nothing leaves it full.",
        example="`Sleep mode freed 0.00 GiB memory, 63.15 GiB memory is still in use.` with "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (vllm PR #11743).",
        fix="expandable_segments:False in PYTORCH_CUDA_ALLOC_CONF (PYTORCH_NPU_ALLOC_CONF on vllm-ascend), in the "
        "image's and the launcher's environment too.",
        limits="The line does not name the variable: another allocation path that bypasses the pool would read the "
        "same. vLLM 0.8 to 0.20 refuse expandable segments with sleep mode at start instead.",
        references=[
            "https://github.com/vllm-project/vllm/pull/11743",
            "https://github.com/pytorch/pytorch/issues/147851",
        ],
    ),
)

RULES: list[Rule] = [RULE_SLEEP_WAKE, RULE_SLEEP_FREED_NOTHING]
