"""OP-7.116: vllm-ascend's compiled extension (vllm_ascend_C) did not load, so its NPU allocator and sleep mode are
missing.

Why a rule of its own: vllm-ascend's allocator (vllm_ascend/device_allocator/camem.py) imports the compiled
`vllm_ascend.vllm_ascend_C` and, when that fails, only logs `Failed to import vllm_ascend_C:<error>. Sleep mode will
be disabled.`; the first use of the allocator then stops on `assert camem_available, "camem allocator is not
available"` (enable_sleep_mode, RL frameworks that colocate training and rollout). The import's own error says which
of two faults it is. The extension was never built: vllm-ascend 0.7.3's setup.py compiles it only with
COMPILE_CUSTOM_KERNELS set (vllm-ascend#556, where its sleep mode's author advised `export COMPILE_CUSTOM_KERNELS=1`
and a reinstall), and an editable reinstall inside the image without building leaves `libvllm_ascend_kernels.so`
out (vllm-ascend#1114). Or it was built against another torch, torch_npu or CANN than the ones installed: the loader's
`undefined symbol` (vllm-ascend#3998).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

BUILD_ENV = "COMPILE_CUSTOM_KERNELS"
# The allocator's assertion, as the reader names it (from the exception line, or the `assert …` source line alone).
UNAVAILABLE = "AssertionError: camem allocator is not available"


def _check(facts: Facts) -> list[Finding]:
    asserted = [e for e in facts.events_of(LogEventKind.UNPLACED_ERROR) if e.message == UNAVAILABLE]
    events = facts.events_of(LogEventKind.ASCEND_EXTENSION_MISSING) + asserted
    if not events or facts.events_of(LogEventKind.EXTENSION_UNDEFINED_SYMBOL):
        return []  # an extension the loader refused for a symbol is a build for other versions: OP-7.6's
    said = next((e for e in events if e.kind == LogEventKind.ASCEND_EXTENSION_MISSING), None)  # the import's error
    reason = f"it is not there ({(said.message or '')[:160]})" if said else "the allocator's assertion says so"
    return [
        RULE.finding(
            Severity.CRITICAL,
            "vllm-ascend's compiled extension (vllm_ascend_C) did not load: its camem allocator, which sleep mode "
            "needs, is not available",
            summary=f"vllm-ascend's NPU allocator imports vllm_ascend_C and only warns when it cannot: {reason}. "
            "Sleep mode (enable_sleep_mode, colocated RL training) then fails on 'camem allocator is not "
            "available'.",
            evidence=[c.log_evidence(e, name="vllm_ascend_C", value=e.message) for e in events[:2]],
            changes=[
                ConfigChange(
                    flag=BUILD_ENV,
                    current=None,
                    proposed="1",
                    reason="set before reinstalling: vllm-ascend's setup.py builds vllm_ascend_C, and its kernels "
                    "library, only with it (0.7.3; vllm-ascend#556)",
                    cost="a build with the CANN toolkit at install time",
                    kind="env",
                )
            ],
            actions=[
                f"Reinstall vllm-ascend with its kernels built: `export {BUILD_ENV}=1` then `pip install -e . "
                "--no-build-isolation` from its source (or `pip install vllm-ascend` of the release), with the CANN "
                "toolkit's environment sourced; check with `python -c 'import vllm_ascend.vllm_ascend_C'`, whose "
                "error, if any, says what is still missing.",
                "Until then, run without enable_sleep_mode: only the allocator needs the extension.",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-7.116",
    title="vllm-ascend's compiled extension did not load (camem allocator unavailable)",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="vllm-ascend's `Failed to import vllm_ascend_C:<error>. Sleep mode will be disabled.` and its "
        "`camem allocator is not available` assertion (alone, or as the source line of a traceback).",
        why="The import's failure is only a warning; the start fails later on the allocator, far from the cause.",
        example='`[rank12]:     assert camem_available, "camem allocator is not available"` with enable_sleep_mode '
        "(vllm-ascend#556: COMPILE_CUSTOM_KERNELS=1 and a reinstall).",
        fix="vllm-ascend reinstalled with its kernels built (COMPILE_CUSTOM_KERNELS=1 for 0.7.3); sleep mode off "
        "meanwhile. An undefined symbol in the import's error is a build for other versions (OP-7.6).",
        limits="Without the import's warning, the assertion alone cannot tell a missing build from a mismatched one.",
        references=[
            "https://github.com/vllm-project/vllm-ascend/issues/556",
            "https://github.com/vllm-project/vllm-ascend/issues/3998",
        ],
    ),
)

RULES: list[Rule] = [RULE]
