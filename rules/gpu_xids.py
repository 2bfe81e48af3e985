"""The NVIDIA driver's Xid errors an on-call engineer meets under vLLM, and what NVIDIA says to do: the one table.

Why a table of its own: an Xid in the kernel log (`NVRM: Xid (PCI:0000:3b:00): 79, … GPU has fallen off the bus.`)
says the GPU itself, or its driver, failed; no vLLM flag fixes it, and the right move ranges from restarting the
server to rebooting the node, which NVIDIA states per Xid. OP-7.33 reads this table; nothing else holds these facts.

Source: NVIDIA's Xid catalog for Ampere and newer GPUs (https://docs.nvidia.com/deploy/xid-errors/
analyzing-xid-catalog.html, and its spreadsheet Xid-Catalog.xlsx of 2025-09-30): each Xid's mnemonic, description
and "Resolution Bucket (Immediate Action)", the action "immediately needed in order to recover the system and get
it back into service". The buckets, in NVIDIA's definitions: RESTART_APP (restart the application; a GPU reset or
a reboot is not needed), RESET_GPU (reset the GPU; a reboot is not needed), RESTART_BM (restart the bare-metal
system), IGNORE (no action required), and workflows that depend on what else was logged (WORKFLOW_XID_48: reset the
GPU, or drain and reset when Xid 63 or 64 comes with it; WORKFLOW_NVLINK_ERR: decode the link's error bits; XID_154:
follow the recovery action Xid 154 names). CUDA's own words for a hardware fault are cudaErrorECCUncorrectable
("uncorrectable ECC error encountered") and cudaErrorNvlinkUncorrectable ("uncorrectable NVLink error detected
during the execution"), CUDA runtime API, cudaError_t.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

# NVIDIA's immediate-action buckets, most disruptive first: the order in which two Xids' actions are compared.
Action = Literal[
    "RESTART_BM",
    "XID_154",
    "RESET_GPU",
    "WORKFLOW_XID_48",
    "WORKFLOW_NVLINK_ERR",
    "RESTART_APP",
    "WORKFLOW_XID_45",
    "IGNORE",
]
ACTION_ORDER: tuple[Action, ...] = get_args(Action)
# Buckets that say the GPU or the node needs attention before it serves again: a hardware or driver fault.
HARDWARE_ACTIONS: frozenset[Action] = frozenset(
    {"RESTART_BM", "XID_154", "RESET_GPU", "WORKFLOW_XID_48", "WORKFLOW_NVLINK_ERR"}
)


@dataclass(frozen=True, slots=True)
class Xid:
    mnemonic: str
    description: str  # NVIDIA's words
    action: Action  # NVIDIA's immediate action


XIDS: dict[int, Xid] = {
    13: Xid("ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP"),
    31: Xid("ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP"),
    43: Xid("ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE"),
    45: Xid("ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", "WORKFLOW_XID_45"),
    48: Xid("ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48"),
    62: Xid("PMU_HALT_ERROR", "Internal micro-controller halt", "RESET_GPU"),
    63: Xid("INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE"),
    64: Xid("INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU"),
    74: Xid("NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR"),
    79: Xid("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM"),
    92: Xid("EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE"),
    94: Xid("ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP"),
    95: Xid("ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU"),
    109: Xid("ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "RESET_GPU"),
    119: Xid("GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU"),
    120: Xid("GSP_ERROR", "GSP Error", "RESET_GPU"),
    154: Xid("GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", "XID_154"),
}
# CUDA's words for a hardware fault, as PyTorch prints them after `CUDA error: `, and the Xid they stand beside
# in the kernel log (an uncorrectable ECC error is Xid 48, 94 or 95 there; an NVLink one, Xid 74).
CUDA_FAULTS: dict[str, int] = {
    "uncorrectable ECC error encountered": 48,
    "uncorrectable NVLink error detected during the execution": 74,
}
