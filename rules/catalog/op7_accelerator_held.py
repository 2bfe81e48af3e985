"""OP-7.114: the TPU is held by another process. OP-7.115: HABANA_VISIBLE_MODULES names Gaudi modules the process
cannot see. OP-7.117: CUDA_VISIBLE_DEVICES lists GPUs by UUID where vLLM reads indices.

Why rules of their own: both stop vLLM before it loads anything, on accelerators whose runtimes word the cause in
their own terms, and neither is a fault of vLLM's or of the model.

OP-7.114: a TPU chip is opened by one process at a time: JAX's runtime opens its device file (`/dev/vfio/N` on
current TPU VMs, `/dev/accelN` on older ones) and a second process gets `Device or resource busy`. The holder is a
previous server still exiting, a notebook kernel that imported JAX, or a second server on the same chips
(vllm-project/tpu-inference PR #2257 met it as a flaky test: the previous test's process had not released the TPU).

OP-7.115: Habana's runtime maps HABANA_VISIBLE_MODULES to the Gaudi modules the process may use, and refuses an id
outside those the container was given (`Module IDs should be between 0 and 0`: one module visible). vllm-gaudi PR
#788 set the variable from each worker's local rank, which broke runs where the container held fewer modules than the
rank's number; PR #946 reverted it (its description quotes the error).

OP-7.117: CUDA takes CUDA_VISIBLE_DEVICES as indices or as GPU UUIDs (`GPU-…`, `MIG-…`), and cluster schedulers (Slurm's
GRES, some Kubernetes device plugins) set UUIDs; vLLM maps a logical device to a physical one by reading the variable
as integers, so the UUID fails in int() (vllm#13815, a source build on such a cluster).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_tpu_busy(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TPU_BUSY)
    if not events:
        return []
    device = events[0].message or "the TPU's device file"
    return [
        RULE_TPU_BUSY.finding(
            Severity.CRITICAL,
            f"the TPU is held by another process: {device} is busy",
            summary="JAX opens each TPU chip's device file for one process at a time; another process on this host "
            "has it open (a previous server still exiting, a notebook kernel that imported JAX, a second server on "
            "the same chips), so vLLM's TPU backend cannot start.",
            evidence=[c.log_evidence(events[0], name="the busy device", value=device)],
            actions=[
                "Find the holder: `sudo lsof -w /dev/vfio/* /dev/accel*` (or `sudo fuser -v` on the device); stop it, "
                "or wait for a previous server to exit before starting the next (a restart loop or a test harness "
                "that starts at once meets a process still releasing the chips).",
                "To run two servers on one TPU host, give each its own chips (TPU_VISIBLE_CHIPS with "
                "TPU_PROCESS_BOUNDS and TPU_CHIPS_PER_PROCESS_BOUNDS) instead of sharing them.",
            ],
            confidence=0.85,
        )
    ]


def _check_gaudi_modules(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.GAUDI_MODULES_INVALID)
    if not events:
        return []
    event = events[0]
    top = event.index_bound if event.index_bound is not None else 0
    visible = "0" if top == 0 else f"0 to {top}"
    return [
        RULE_GAUDI_MODULES.finding(
            Severity.CRITICAL,
            f"HABANA_VISIBLE_MODULES={event.message} names Gaudi modules this process cannot see (it sees {visible})",
            summary="Habana's runtime takes HABANA_VISIBLE_MODULES as the ids of the Gaudi modules the process may "
            f"use, among those the container was given ({visible} here). The value asks for others: set by hand "
            "for the whole host, or by vllm-gaudi from each worker's local rank (its PR #788, reverted by PR #946).",
            evidence=[c.log_evidence(event, name="the ids asked for", value=event.message)],
            changes=[
                ConfigChange(
                    flag="HABANA_VISIBLE_MODULES",
                    current=event.message,
                    proposed=",".join(str(i) for i in range(top + 1)),
                    reason="the ids of the modules this process can see (or unset it: all of them)",
                    kind="env",
                )
            ],
            actions=[
                "List the modules the container holds: `hl-smi -Q module_id -f csv`; set HABANA_VISIBLE_MODULES to ids "
                "among them, or leave it unset.",
                "With vllm-gaudi between its PR #788 and the revert (PR #946), upgrade it: that release derived the "
                "variable from the local rank.",
            ],
            confidence=0.8,
        )
    ]


def _check_device_uuid(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.VISIBLE_DEVICE_UUID)
    if not events:
        return []
    uuid = events[0].message or "a GPU UUID"
    return [
        RULE_DEVICE_UUID.finding(
            Severity.CRITICAL,
            f"CUDA_VISIBLE_DEVICES names GPUs by UUID ({uuid}), and vLLM reads it as indices",
            summary="CUDA accepts GPU UUIDs in CUDA_VISIBLE_DEVICES, and cluster schedulers set them; vLLM maps its "
            "devices by reading the variable as integers, so int() refused the UUID before any GPU was used.",
            evidence=[c.log_evidence(events[0], name="the UUID read as an index", value=uuid)],
            changes=[
                ConfigChange(
                    flag="CUDA_VISIBLE_DEVICES",
                    current=uuid,
                    proposed="<the same GPUs by index: `nvidia-smi -L` lists each index with its UUID>",
                    reason="vLLM reads the variable as integers",
                    kind="env",
                )
            ],
            actions=[
                "Translate the UUIDs to indices where vLLM starts (`nvidia-smi -L`, or `nvidia-smi "
                "--query-gpu=index,uuid --format=csv`) and export those instead, in the job's or pod's start script.",
            ],
            confidence=0.8,
        )
    ]


RULE_DEVICE_UUID = Rule(
    code="OP-7.117",
    title="CUDA_VISIBLE_DEVICES lists GPU UUIDs where vLLM reads indices",
    category=Category.STARTUP,
    check=_check_device_uuid,
    needs=("events",),
    page=RulePage(
        checks="Python's `invalid literal for int() with base 10: 'GPU-…'` (or `'MIG-…'`).",
        why="A scheduler's UUIDs are valid for CUDA but not for vLLM's device mapping, which fails before the model "
        "loads.",
        example="`ValueError: invalid literal for int() with base 10: 'GPU-52a3a85d-3c55-ca3a-a955-82c69ed360fc'` "
        "from a cluster whose scheduler sets UUIDs (vllm#13815).",
        fix="CUDA_VISIBLE_DEVICES with the same GPUs' indices.",
        limits="The line does not say which vLLM release; later ones may accept UUIDs.",
        references=["https://github.com/vllm-project/vllm/issues/13815"],
    ),
)

RULE_TPU_BUSY = Rule(
    code="OP-7.114",
    title="the TPU is held by another process",
    category=Category.STARTUP,
    check=_check_tpu_busy,
    needs=("events",),
    page=RulePage(
        checks="JAX's `Unable to initialize backend 'tpu': FAILED_PRECONDITION: TPU initialization failed: "
        "open(/dev/vfio/0): Device or resource busy` (or /dev/accelN).",
        why="The start fails on a process outside vLLM; its flags and the model are not in question.",
        example="vllm-project/tpu-inference PR #2257: a pipeline-parallel test's worker found the TPU still held by "
        "the previous test's process.",
        fix="Stop (or wait for) the process holding the chips; separate chips per server on one host.",
        limits="The line does not name the holder; lsof on the device does.",
        references=["https://github.com/vllm-project/tpu-inference/pull/2257"],
    ),
)

RULE_GAUDI_MODULES = Rule(
    code="OP-7.115",
    title="HABANA_VISIBLE_MODULES names Gaudi modules the process cannot see",
    category=Category.STARTUP,
    check=_check_gaudi_modules,
    needs=("events",),
    page=RulePage(
        checks="Habana's `Invalid HABANA_VISIBLE_MODULES=<ids>. Module IDs should be between 0 and <n>.`",
        why="The variable selects among the modules the container was given; an id outside them stops the start.",
        example="`RuntimeError: Invalid HABANA_VISIBLE_MODULES=5. Module IDs should be between 0 and 0.` after "
        "vllm-gaudi set it from the local rank (vllm-project/vllm-gaudi PR #946, which reverted that).",
        fix="Ids among those `hl-smi` lists, or the variable unset; a vllm-gaudi with the revert.",
        limits="The line names the highest visible id, not which modules the container holds.",
        references=["https://github.com/vllm-project/vllm-gaudi/pull/946"],
    ),
)

RULES: list[Rule] = [RULE_TPU_BUSY, RULE_GAUDI_MODULES, RULE_DEVICE_UUID]
