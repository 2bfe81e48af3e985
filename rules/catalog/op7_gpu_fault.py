"""OP-7.33: the GPU itself failed (the NVIDIA driver's Xid, CUDA's uncorrectable ECC or NVLink error).

Why a rule of its own: a GPU that fell off the bus, or whose memory took a double-bit ECC error, kills vLLM with
whatever error the next CUDA call returns (an illegal memory access, an unknown error, an ECC error), and the
engine-death and kernel-fault rules would then send the engineer bisecting kernels or flags. The kernel log says
what happened (`NVRM: Xid (PCI:0000:3b:00): 79, … GPU has fallen off the bus.`), and NVIDIA's Xid catalog says what
each Xid needs before the GPU serves again: restart the application, reset the GPU, or reboot the node
(rules/gpu_xids.py holds the table and its source). When several are logged, the most disruptive action is the
one to take; Xid 154 states the driver's own recovery action in its words.
"""

from __future__ import annotations

import re

from rules import gpu_xids
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Above HL-4's kernel fault (0.9) and HL-2's engine death: a hardware Xid is the cause a kernel fault follows from.
HARDWARE_CONFIDENCE = 0.93
APP_CONFIDENCE = 0.6  # NVIDIA's RESTART_APP: usually the application's own kernel, which HL-4 bisects
XID_CATALOG = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
_DRAIN = (
    "Take the node out of service before anything else (`kubectl cordon` and `kubectl drain`, or your scheduler's "
    "drain) so the server restarts on healthy GPUs; no vLLM flag changes a hardware fault."
)
MAX_EVIDENCE = 3
# Xid 154's words when the recovery action it reports is none: "… changed from 0x2 (Node Reboot Required) to 0x0
# (None)" (NVIDIA's recovery flags: "No recovery action is needed").
_NO_RECOVERY = re.compile(r"\bto 0x0+ \(None\)")
UNKNOWN = "UNKNOWN"  # an Xid the table does not hold: serious enough to look up, not known to need a reset
_ORDER: tuple[str, ...] = (*gpu_xids.ACTION_ORDER[:-1], UNKNOWN, gpu_xids.ACTION_ORDER[-1])
_SEVERITY: dict[str, Severity] = {"RESTART_APP": Severity.HIGH, UNKNOWN: Severity.MEDIUM}
# What each immediate action means for a vLLM server on that GPU, in NVIDIA's order of disruption.
_ACTIONS: dict[str, str] = {
    "RESTART_BM": "NVIDIA's action is to restart the machine (bare metal): the driver cannot reach the GPU. Reboot "
    "the node; if the Xid comes back, the GPU or its PCIe link is failing: contact your support organisation.",
    "XID_154": "Do the recovery action Xid 154 names (its words: 'Node Reboot Required', 'GPU Reset Required', "
    "'Drain and Reset', 'Drain P2P').",
    "RESET_GPU": "NVIDIA's action is to reset the GPU: stop every process using it (the vLLM server and its workers) "
    "and run `nvidia-smi -r -i <gpu>`, or reboot the node; contact support if it recurs.",
    "WORKFLOW_XID_48": "An uncorrectable (double-bit) ECC error: NVIDIA's action is a GPU reset (`nvidia-smi -r -i "
    "<gpu>`), or drain and reset when Xid 63 or 64 (row remapping) comes with it; `nvidia-smi -q -d "
    "ECC,ROW_REMAPPER` shows the counts and whether a remap is pending.",
    "WORKFLOW_NVLINK_ERR": "An NVLink error: NVIDIA's action needs a GPU reset or a node reboot to clear it, and it "
    "may come from the GPU at the link's other end; tensor parallelism over NVLink fails with it. Check "
    "`nvidia-smi nvlink --status` and the link's error bits in the Xid's words.",
    "RESTART_APP": "NVIDIA's action is to restart the application: the GPU needs no reset. Restart the server; if it "
    "recurs on the same GPU, test that GPU (DCGM's diagnostics), and if it follows the workload, it is the "
    "application's kernel (an illegal memory access: HL-4 says which optional kernels to turn off).",
    "WORKFLOW_XID_45": "A preemptive cleanup after an earlier error (or the process being killed): follow the Xid "
    "logged before it.",
    "IGNORE": "NVIDIA's action is none: the GPU stays usable. Read the lines around it for the error that stopped "
    "the server.",
    UNKNOWN: f"servops' table does not hold this Xid: look it up in NVIDIA's Xid catalog ({XID_CATALOG}) for its "
    "immediate action (restart the application, reset the GPU, or reboot the node).",
}


def _check(facts: Facts) -> list[Finding]:
    faults = facts.events_of(LogEventKind.GPU_FAULT)
    if not faults:
        return []
    worst = min(faults, key=lambda e: _ORDER.index(_action(e)))
    action = _action(worst)
    hardware = action in gpu_xids.HARDWARE_ACTIONS
    others = sorted({e.xid for e in faults if e.xid is not None and e.xid != worst.xid})
    shown = [worst, *[e for e in faults if e is not worst][: MAX_EVIDENCE - 1]]
    evidence = [c.log_evidence(e, name=_name(e), value=e.message) for e in shown]
    actions = ([_DRAIN] if hardware else []) + [_ACTIONS[action]]
    if worst.xid is None:  # CUDA's words only: the kernel log has the Xid that says which action
        actions.append(
            "The kernel log has the Xid behind CUDA's error (`dmesg -T | grep -i xid`, `journalctl -k | grep -i xid`): "
            "for ECC, Xid 94 (contained: restart the server) or 48 and 95 (reset the GPU)."
        )
    return [
        RULE.finding(
            _SEVERITY.get(action, Severity.CRITICAL if hardware else Severity.LOW),
            _title(worst, others, hardware),
            summary="The NVIDIA driver logs an Xid when the GPU or the driver hits an error; NVIDIA's Xid catalog "
            "gives each one the action that brings the GPU back into service. A hardware fault kills vLLM with "
            "whatever error the next CUDA call returns, so the engine's own errors around it are its consequence.",
            evidence=evidence,
            actions=actions,
            confidence=HARDWARE_CONFIDENCE if hardware else APP_CONFIDENCE,
        )
    ]


def _action(event: LogEvent) -> str:
    """NVIDIA's immediate action for the event's Xid (CUDA's words stand for the Xid beside them), or UNKNOWN."""
    xid = event.xid if event.xid is not None else gpu_xids.CUDA_FAULTS.get(event.message or "")
    known = gpu_xids.XIDS.get(xid) if xid is not None else None
    if known is not None and known.action == "XID_154" and _NO_RECOVERY.search(event.message or ""):
        return "IGNORE"  # the driver's recovery action changed back to none
    return known.action if known is not None else UNKNOWN


def _name(event: LogEvent) -> str:
    known = gpu_xids.XIDS.get(event.xid) if event.xid is not None else None
    if event.xid is None:
        return "CUDA's error for a hardware fault"
    return f"Xid {event.xid}" + (f" ({known.mnemonic})" if known else " (not in servops' table)")


def _title(worst: LogEvent, others: list[int], hardware: bool) -> str:
    known = gpu_xids.XIDS.get(worst.xid) if worst.xid is not None else None
    what = (
        f"Xid {worst.xid}: {known.description if known else worst.message}"
        if worst.xid is not None
        else (f"CUDA: {worst.message}")
    )
    where = f" on GPU {worst.device}" if worst.device else ""
    also = f" (also Xid {', '.join(map(str, others))})" if others else ""
    verdict = "the GPU failed, not vLLM" if hardware else "an error the driver logged"
    return f"{verdict}: {what}{where}{also}"


RULE = Rule(
    code="OP-7.33",
    title="the GPU itself failed: the NVIDIA driver's Xid, or CUDA's error for a hardware fault",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="The kernel log's `NVRM: Xid (PCI:…): N, …` (dmesg, `journalctl -k`), and CUDA's words for a "
        "hardware fault as PyTorch prints them (`CUDA error: uncorrectable ECC error encountered`, `uncorrectable "
        "NVLink error detected during the execution`); DCGM exporter's gauge of a GPU's last Xid "
        '(`DCGM_FI_DEV_XID_ERRORS{gpu="0",…} 79`, 0 meaning none), as /metrics or a Prometheus query shows it. '
        "With several, the one whose NVIDIA action is the most "
        "disruptive (reboot, then reset, then restart) leads.",
        why="A GPU that fell off the bus or took an uncorrectable memory error kills vLLM with a kernel fault or an "
        "engine death; tuning flags or bisecting kernels then wastes the night. NVIDIA states per Xid what brings "
        "the GPU back: restart the application, reset the GPU, or reboot the node.",
        example="NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, name=python3, GPU has fallen off the bus.",
        fix="Out of vLLM: drain the node, then NVIDIA's action for the Xid (reboot, `nvidia-smi -r`, or a restart "
        "of the server), and support or an RMA when it recurs. For NVIDIA's RESTART_APP Xids (13, 31, 94) a "
        "restart, and HL-4's kernel advice when it follows the workload.",
        limits="Knows the Xids of the table in rules/gpu_xids.py (NVIDIA's catalog for Ampere and newer, 2025); "
        "another Xid is named with no action. Xid 154 back to `(None)` needs nothing; its other actions are quoted, "
        "not decoded, and Xid 74's NVLink error bits are not decoded.",
        references=[XID_CATALOG, "https://docs.nvidia.com/deploy/gpu-debug-guidelines/index.html"],
    ),
)

RULES: list[Rule] = [RULE]
