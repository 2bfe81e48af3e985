"""OP-7.101: vllm-ascend's compiled kernels were built for another Ascend SoC than the device's.
OP-7.143: vllm-ascend does not know the device's SoC at all.

Why a rule of its own: vllm-ascend compiles its custom kernels for one Ascend SoC (the SOC_VERSION of its build,
detected with `npu-smi info` or set by hand: Ascend910B1 for Atlas A2, Ascend310P3 for Atlas 300I, …), and the
kernel package checks the device when it loads: `the socversion Ascend910B1 of bin package does not match the
current device socverison Ascend310P3`, after the weights have loaded. Its advice (`modify default socversion in
run.sh`) speaks to the package's build script, which a user of an image or a wheel never sees (vllm-ascend#5599: "I
could not find the relevant run.sh"). The way out is a build for the device: vllm-ascend publishes 310P images
(`quay.io/ascend/vllm-ascend:<version>-310p`, vllm-ascend#6309), and a source build takes SOC_VERSION (vllm-ascend PR
#7272 documents the values). Threads: vllm-ascend#2725, #5599, #6676 (default images, built for Ascend910B1, on an
Atlas 300I's Ascend310P3).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_soc(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.ASCEND_SOC_MISMATCH)
    if not events:
        return []
    event = events[0]
    device, built = event.message or "the device's SoC", event.component or "another SoC"
    is_310p = device.lower().startswith("ascend310p")
    return [
        RULE_ASCEND_SOC.finding(
            Severity.CRITICAL,
            f"vllm-ascend's kernels were built for {built}, and this NPU is {device}: install the build for the device",
            summary="vllm-ascend compiles its custom kernels for one Ascend SoC, and the kernel package refuses a "
            "device of another when it loads. The default images and wheels are built for Atlas A2 (Ascend910B); "
            "the 'run.sh' its message names is the package's build script, not something to edit in a container.",
            evidence=[c.log_evidence(event, name="the kernel package's check", value=f"{built} ≠ {device}")],
            changes=[
                ConfigChange(
                    flag="SOC_VERSION",
                    proposed=device,
                    reason="a vllm-ascend built from source compiles its kernels for the SoC this variable names",
                    cost="a source build of vllm-ascend (its custom kernels take a while to compile)",
                    kind="env",
                )
            ],
            actions=[
                (
                    "Use vllm-ascend's 310P image (`quay.io/ascend/vllm-ascend:<version>-310p`), which is built for "
                    "Atlas 300I / 310P devices, instead of the default one; 310P supports fewer models and features "
                    "than Atlas A2, so check the release's 310P notes."
                    if is_310p
                    else "Use the vllm-ascend image or wheel built for this device's SoC instead of the default one."
                ),
                f"Or build vllm-ascend from source on the device with SOC_VERSION={device} (`npu-smi info` names the "
                "chip) so its kernels are compiled for it.",
            ],
            confidence=0.85,
        )
    ]


RULE_ASCEND_SOC = Rule(
    code="OP-7.101",
    title="vllm-ascend's kernels built for another Ascend SoC",
    category=Category.CONFIGURATION,
    check=_check_soc,
    needs=("events",),
    page=RulePage(
        checks="Ascend's kernel package at load: `the socversion <built> of bin package does not match the current "
        "device socverison <device>`.",
        why="vllm-ascend's custom kernels are compiled for one SoC; the default builds are for Atlas A2.",
        example="`the socversion Ascend910B1 of bin package does not match the current device socverison "
        "Ascend310P3` with the default image on an Atlas 300I (vllm-ascend#2725, #5599).",
        fix="The build for the device (the -310p image for Atlas 300I), or a source build with SOC_VERSION set to it.",
        limits="Whether the device's build supports the model is the release's to say: 310P supports fewer.",
        references=[
            "https://github.com/vllm-project/vllm-ascend/issues/2725",
            "https://github.com/vllm-project/vllm-ascend/issues/5599",
            "https://github.com/vllm-project/vllm-ascend/pull/7272",
        ],
    ),
)

# OP-7.143: vllm-ascend maps the SoC version the runtime reports to the device families it supports and refuses any
# other, in its worker as it starts: `RuntimeError: Can not support soc_version: 104.` (vllm-ascend#6796, no cause
# confirmed in the thread). The words say only that this release does not know the device.
UNKNOWN_SOC = re.compile(r"Can not support soc_version: (?P<soc>\w+)")


def _unknown_soc_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    soc = match["soc"]
    return RULE_UNKNOWN_SOC.finding(
        Severity.CRITICAL,
        f"vllm-ascend does not know this NPU's SoC version ({soc}): the device is not one this release supports",
        summary="vllm-ascend reads the SoC version the Ascend runtime reports and maps it to the device families it "
        "supports (its device-type check, as the worker starts); a version outside its table stops the worker "
        "before the model loads. No setting changes the table: the device, the plugin release or the runtime does.",
        evidence=[c.log_evidence(event, name="the SoC version refused", value=soc)],
        actions=[
            "`npu-smi info` names the NPU; compare it with the devices the installed vllm-ascend release lists as "
            "supported, and install a release (or its image) that lists it.",
            "If the NPU is listed, the CANN toolkit and driver may report it differently from what this release "
            "expects: install the CANN version that release's documentation pairs with it.",
        ],
        confidence=0.75,
    )


RULE_UNKNOWN_SOC = Rule(
    code="OP-7.143",
    title="vllm-ascend does not know the device's SoC",
    category=Category.CONFIGURATION,
    check=c.on_phrase(UNKNOWN_SOC, _unknown_soc_finding),
    needs=("events",),
    page=RulePage(
        checks="vllm-ascend's `RuntimeError: Can not support soc_version: <n>.`",
        why="The plugin refuses a device whose SoC version is not in its table; the worker stops before loading.",
        example="`Can not support soc_version: 104.` from vllm-ascend's worker (vllm-ascend#6796).",
        fix="A vllm-ascend release (and CANN) that supports the NPU.",
        limits="Which device the number is, and which release added it, are not in the message; `npu-smi info` "
        "and the release's device list are.",
        references=["https://github.com/vllm-project/vllm-ascend/issues/6796"],
    ),
)

RULES: list[Rule] = [RULE_ASCEND_SOC, RULE_UNKNOWN_SOC]
