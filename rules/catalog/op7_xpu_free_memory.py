"""OP-7.90: PyTorch cannot say how much memory an Intel GPU has free, and vLLM's XPU worker needs it.

Why a rule of its own: vLLM sizes the KV cache from the device's free memory, which on Intel GPUs PyTorch reads with
torch.xpu.mem_get_info through SYCL's free-memory query, answered by Level Zero's Sysman. Where that answer is missing
PyTorch refuses: `The device (Intel(R) Graphics [0x674c]) doesn't support querying the available free memory.`
(vllm PR #35273, a simulated device, where vLLM's XPU platform gained a fallback for it) or, from SYCL, `The device does
not have the ext_intel_free_memory aspect` (intel/torch-xpu-ops#1384: integrated GPUs such as Lunar Lake and Meteor
Lake do not report it). Sysman answers only when enabled (ZES_ENABLE_SYSMAN=1, intel/intel-extension-for-pytorch PR
#549), and on some kernels only to root or a process with CAP_PERFMON (oneapi-src/level-zero#133).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_xpu_free_memory(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.XPU_FREE_MEMORY_UNKNOWN)
    if not events:
        return []
    event = events[0]
    device = f" ({event.device})" if event.device else ""
    return [
        RULE_XPU_FREE_MEMORY.finding(
            Severity.CRITICAL,
            f"PyTorch cannot read the Intel GPU's free memory{device}, which vLLM needs to size its KV cache: "
            "Level Zero's Sysman is off, not permitted, or absent for this device",
            summary="vLLM's XPU worker asks torch.xpu.mem_get_info how much memory is free before it sizes the KV "
            "cache; PyTorch answers through SYCL's free-memory query, which Level Zero's Sysman serves, and refuses "
            "when the device or driver does not.",
            evidence=[c.log_evidence(event, name="PyTorch's refusal", value=event.message)],
            changes=[
                ConfigChange(
                    flag="ZES_ENABLE_SYSMAN",
                    current=None,
                    proposed="1",
                    reason="Level Zero answers the free-memory query only with Sysman enabled",
                    kind="env",
                )
            ],
            actions=[
                "If it still refuses: Sysman may need root or CAP_PERFMON for the process (`--cap-add PERFMON` in a "
                "container, oneapi-src/level-zero#133), and a current Intel GPU driver (compute-runtime).",
                "An integrated GPU (Lunar Lake, Meteor Lake) does not report free memory (intel/torch-xpu-ops#1384): "
                "a vLLM release whose XPU platform falls back when the query is missing (vllm PR #35273), or a "
                "discrete GPU.",
            ],
            confidence=0.65,
        )
    ]


RULE_XPU_FREE_MEMORY = Rule(
    code="OP-7.90",
    title="PyTorch cannot read an Intel GPU's free memory, which vLLM needs",
    category=Category.STARTUP,
    check=_check_xpu_free_memory,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `The device (…) doesn't support querying the available free memory.` and SYCL's `The "
        "device does not have the ext_intel_free_memory aspect`.",
        why="vLLM sizes the KV cache from torch.xpu.mem_get_info, which needs Level Zero's Sysman to answer.",
        example="`RuntimeError: The device (Intel(R) Graphics [0x674c]) doesn't support querying the available free "
        "memory.` at worker start (vllm PR #35273).",
        fix="ZES_ENABLE_SYSMAN=1 (and CAP_PERFMON where the kernel asks for it); on integrated GPUs, a vLLM whose XPU "
        "platform falls back.",
        limits="Whether the GPU is integrated or the driver lacks Sysman is not in the line.",
        references=[
            "https://github.com/vllm-project/vllm/pull/35273",
            "https://github.com/intel/torch-xpu-ops/issues/1384",
            "https://github.com/intel/intel-extension-for-pytorch/pull/549",
            "https://github.com/oneapi-src/level-zero/issues/133",
        ],
    ),
)

RULES: list[Rule] = [RULE_XPU_FREE_MEMORY]
