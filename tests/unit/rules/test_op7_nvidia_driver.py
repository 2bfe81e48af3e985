"""OP-7.40: the host's NVIDIA driver libraries and its loaded kernel module of different versions, in NVML's,
pynvml's, the container runtime's and the kernel's words; which is newer from the version lines beside them."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_nvidia_driver import RULE
from rules.events import LogEventKind as K
from rules.facts import Facts

SMI = ["Failed to initialize NVML: Driver/library version mismatch", "NVML library version: 550.144"]
PROC = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024"
# dmesg after a downgrade to 545 without a reboot: the kernel's warning spans two lines (and two more of advice)
DMESG = [
    "[    9.854868] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024",
    "[ 5080.898738] NVRM: API mismatch: the client has the version 545.29.06, but",
    "               NVRM: this kernel module has the version 550.54.14.  Please",
    "               NVRM: make sure that this kernel module and all NVIDIA driver",
    "               NVRM: components have the same version.",
]
CONTAINER_CLI = "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown."
PYNVML = "pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch."


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_nvidia_smis_words_alone_name_the_usual_cause_and_a_reboot():
    [finding] = _findings(*SMI)
    assert finding.title.endswith("the driver was upgraded and the host not rebooted (the usual cause)")
    assert finding.actions[0].startswith("Reboot the host") and "rmmod" in finding.actions[1]
    assert "apt-mark hold" in finding.actions[2]


def test_the_kernel_modules_version_beside_newer_libraries_says_an_upgrade_not_rebooted():
    [finding] = _findings(*SMI, "$ cat /proc/driver/nvidia/version", PROC)
    assert "(libraries 550.144, kernel module 535.183.01)" in finding.title
    assert finding.title.endswith("the driver was upgraded and the host not rebooted")


def test_the_kernels_two_line_warning_with_older_libraries_says_a_downgrade_or_an_older_copy():
    events = parse_lines(DMESG).events
    assert [(e.component, e.version, e.kernel_module_version) for e in events] == [
        ("versions", None, "550.54.14"),
        ("kernel", "545.29.06", None),
        ("kernel", None, "550.54.14"),
    ]
    [finding] = _findings(*DMESG)
    assert "(libraries 545.29.06, kernel module 550.54.14)" in finding.title
    assert "downgraded without a reboot" in finding.title
    assert "libnvidia-ml.so" in finding.actions[1]


def test_the_container_runtimes_and_pynvmls_words_are_the_same_state():
    for line in (CONTAINER_CLI, PYNVML):
        [finding] = _findings(line)
        assert finding.rule == "OP-7.40"


def test_version_lines_alone_and_nvmls_other_errors_are_not_a_mismatch():
    assert _findings(DMESG[0], SMI[1], PROC) == []
    lost = parse_lines(["Failed to initialize NVML: Unknown Error"]).events
    assert [e.kind for e in lost] == [K.CONTAINER_HOST_MISMATCH]
