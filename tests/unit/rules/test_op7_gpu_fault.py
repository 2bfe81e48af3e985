"""OP-7.33: a GPU's own fault (the driver's Xid, CUDA's uncorrectable ECC error) is named with NVIDIA's action."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules import gpu_xids
from rules.catalog import op7_gpu_fault
from rules.evaluate import evaluate
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Severity

# The driver's line as dmesg -T prints it, with the process it names (NVIDIA/open-gpu-kernel-modules#1151 quotes
# the same words without one, from the journal).
FELL_OFF = (
    "[Mon Nov 30 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, name=python3, GPU has fallen off the bus."
)
ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered"


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_xid_line_is_read_with_its_number_and_the_gpus_address():
    [event] = parse_lines([FELL_OFF]).of_kind(LogEventKind.GPU_FAULT)
    assert (event.xid, event.device, event.message) == (79, "0000:3b:00", "GPU has fallen off the bus.")
    quoted = "May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus."  # as #1151 has it
    [event] = parse_lines([quoted]).of_kind(LogEventKind.GPU_FAULT)
    assert (event.xid, event.device, event.message) == (79, "0000:2b:00", "GPU has fallen off the bus.")
    remap = (
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."
    )
    [event] = parse_lines([remap]).of_kind(LogEventKind.GPU_FAULT)
    assert event.message.startswith("Row Remapper:")  # the process the driver names is not the Xid's words


def test_a_kernel_log_record_quoted_without_nvrms_prefix_is_still_the_xid():
    # vllm#53726: a commenter's kern.log records, the prefix and the GPU's address not quoted
    line = "08-04 06:43:55 Xid 31 GPC1 GPCCLIENT_T1_9  @ 0xede3_7fa00000  FAULT_PDE ACCESS_TYPE_VIRT_READ"
    [event] = parse_lines([line]).of_kind(LogEventKind.GPU_FAULT)
    assert (event.xid, event.device) == (31, None) and event.message.startswith("GPC1 GPCCLIENT_T1_9")
    top = evaluate(_facts([line])).top
    assert top.rule == "OP-7.33" and "restart the application" in top.actions[0]
    for prose in (
        "the Xid 31 errors went away",
        "I checked dmesg for Xid 79 Errors and there were none.",
        "grep Xid 79 Foo",
        "health check: Xid 0 OK",
    ):  # sentences about an Xid are none
        assert parse_lines([prose]).of_kind(LogEventKind.GPU_FAULT) == []


def test_the_drivers_words_for_a_gpu_off_the_bus_without_an_xid_line_are_xid_79():
    """NVIDIA/NVSentinel#155: a newer driver's dmesg, over three NVRM lines, and no Xid line."""
    lines = [
        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0",
        "               NVRM: (PCI ID: 10de:26b5) installed in this system has",
        "               NVRM: fallen off the bus and is not responding to commands.",
        "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).",
    ]
    [finding] = op7_gpu_fault.RULE.evaluate(_facts(lines))
    assert finding.title.startswith("the GPU failed, not vLLM: Xid 79") and finding.severity == Severity.CRITICAL


def test_a_gpu_off_the_bus_is_a_node_to_drain_and_reboot_and_outranks_the_kernel_fault_it_causes():
    ranked = evaluate(_facts([FELL_OFF, ILLEGAL])).findings
    assert [f.rule for f in ranked][:2] == ["OP-7.33", "HL-4"]
    top = ranked[0]
    assert top.severity == Severity.CRITICAL
    assert top.title == "the GPU failed, not vLLM: Xid 79: GPU has fallen off the bus on GPU 0000:3b:00"
    assert "kubectl cordon" in top.actions[0] and "restart the machine (bare metal)" in top.actions[1]
    assert not top.changes  # no vLLM flag fixes hardware


def test_an_application_xid_leaves_the_kernel_fault_on_top_and_says_restart():
    page_fault = "NVRM: Xid (PCI:0000:3b:00): 31, pid=4242, name=python3, Ch 00000008, intr 10000000. MMU Fault"
    ranked = evaluate(_facts([page_fault, ILLEGAL])).findings
    assert ranked[0].rule == "HL-4"
    [xid] = [f for f in ranked if f.rule == "OP-7.33"]
    assert xid.severity == Severity.HIGH and "restart the application" in xid.actions[0]


def test_the_most_disruptive_action_leads_and_the_other_xids_are_named():
    lines = [
        "NVRM: Xid (PCI:0000:3b:00): 63, pid=1, Row Remapper: New row marked for remapping, reset gpu to activate.",
        "NVRM: Xid (PCI:0000:3b:00): 95, pid=1, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No",
    ]
    [finding] = op7_gpu_fault.RULE.evaluate(_facts(lines))
    assert finding.title.startswith("the GPU failed, not vLLM: Xid 95: Uncontained memory error")
    assert finding.title.endswith("(also Xid 63)") and "nvidia-smi -r" in finding.actions[1]


def test_cudas_ecc_words_alone_point_at_the_kernel_log_for_the_xid():
    [finding] = op7_gpu_fault.RULE.evaluate(_facts(["RuntimeError: CUDA error: uncorrectable ECC error encountered"]))
    assert finding.severity == Severity.CRITICAL
    assert "dmesg -T | grep -i xid" in finding.actions[-1]


def test_an_xid_the_table_lacks_is_looked_up_not_ignored():
    [finding] = op7_gpu_fault.RULE.evaluate(_facts(["NVRM: Xid (PCI:0000:3b:00): 140, pid=1, Unrecovered ECC"]))
    assert finding.severity == Severity.MEDIUM and op7_gpu_fault.XID_CATALOG in finding.actions[-1]


def test_every_action_of_the_table_has_its_advice_and_its_place_in_the_order():
    assert {xid.action for xid in gpu_xids.XIDS.values()} <= set(op7_gpu_fault._ACTIONS)
    assert set(gpu_xids.ACTION_ORDER) | {op7_gpu_fault.UNKNOWN} == set(op7_gpu_fault._ACTIONS)


def test_xid_154_back_to_no_recovery_action_is_no_reboot():
    cleared = (
        "NVRM: Xid (PCI:0000:44:00): 154, GPU recovery action changed from 0x2 (Node Reboot Required) to 0x0 (None)"
    )
    [finding] = op7_gpu_fault.RULE.evaluate(_facts([cleared]))
    assert finding.severity == Severity.LOW and "NVIDIA's action is none" in finding.actions[0]
    required = cleared.replace(
        "from 0x2 (Node Reboot Required) to 0x0 (None)", "from 0x0 (None) to 0x2 (Node Reboot Required)"
    )
    [finding] = op7_gpu_fault.RULE.evaluate(_facts([required]))
    assert finding.severity == Severity.CRITICAL and "Xid 154 names" in finding.actions[1]


def test_dcgm_exporters_last_xid_gauge_reads_as_the_kernels_line_does():
    metrics = [
        "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.",
        "# TYPE DCGM_FI_DEV_XID_ERRORS gauge",
        'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-1",device="nvidia0",Hostname="gpu-01"} 0',
        'DCGM_FI_DEV_XID_ERRORS{gpu="1",UUID="GPU-2",pci_bus_id="00000000:3B:00.0",device="nvidia1"} 79',
    ]
    faults = [e for e in parse_lines(metrics).events if e.kind == LogEventKind.GPU_FAULT]
    assert [(e.xid, e.device) for e in faults] == [(79, "00000000:3B:00.0")]  # 0 is no Xid
    top = evaluate(Facts(events=parse_lines(metrics).events)).findings[0]
    assert top.rule == "OP-7.33" and top.title == (
        "the GPU failed, not vLLM: Xid 79: GPU has fallen off the bus on GPU 00000000:3B:00.0"
    )
    [by_index] = parse_lines(['DCGM_FI_DEV_XID_ERRORS{gpu="3",device="nvidia3"} 48']).events
    assert (by_index.xid, by_index.device) == (48, "index 3")
