"""OP-7.40: the host's NVIDIA driver libraries and its loaded kernel module are of different versions.

Why a rule of its own: NVML, which nvidia-smi, the NVIDIA Container Toolkit and vLLM's platform detection call
before anything else, refuses to start when the driver's user-space libraries (libnvidia-ml, libcuda) are not the
version of the kernel module loaded: `Failed to initialize NVML: Driver/library version mismatch`, pynvml's
`RM has detected an NVML/RM version mismatch` (NVML_ERROR_LIB_RM_VERSION_MISMATCH, error 18, in the pynvml vLLM
0.32 ships: vllm/third_party/pynvml.py), nvidia-container-cli's `nvml error: driver/library version mismatch`,
and the kernel's `NVRM: API mismatch: the client has the version X, but this kernel module has the version Y`.
A package upgrade replaces the libraries on disk at once (Ubuntu's unattended-upgrades does it unasked) and the
module in memory only at the next boot, so every GPU program started after it fails while those already running
go on; a reboot loads the matching module (canonical/ubuntu-server-documentation#369, NVIDIA/nvidia-container-toolkit
#394). Libraries older than the module are a downgrade not yet rebooted, or a second installation found first, or
driver libraries inside a container image (NVIDIA/libnvidia-container#213). vLLM itself swallows the NVML error at
debug level and finds no CUDA platform (`cuda_platform_plugin`, vllm/platforms/__init__.py, 0.32), so its own
words are only `Failed to infer device type`: the lines this rule reads come from nvidia-smi, the container runtime
or the kernel.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_NUMBERS = re.compile(r"\d+")

_REBOOT = (
    "Reboot the host so the kernel loads the module of the installed libraries (drain it first: GPU programs "
    "already running keep the old module and keep working until they stop). `cat /proc/driver/nvidia/version` "
    "then names the libraries' version too."
)
_RELOAD = (
    "Without a reboot: stop every process that uses the GPUs (`sudo lsof /dev/nvidia*`; on a Kubernetes node, cordon "
    "and drain it and stop the device plugin and DCGM exporter), unload the modules `lsmod | grep ^nvidia` lists "
    "(`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia`; one still in use refuses), and run `nvidia-smi`, "
    "which loads the new module."
)
_HOLD = (
    "Keep it from happening on its own: hold the driver packages (`sudo apt-mark hold` them, or list them in "
    "unattended-upgrades' Package-Blacklist) and upgrade the driver only with a planned reboot."
)
_STALE = (
    "If a reboot does not help, find the older copy: `ls -l /usr/lib/x86_64-linux-gnu/libnvidia-ml.so*` (and "
    "`dpkg -l | grep -i nvidia`) on the host; a driver from NVIDIA's .run installer beside the distribution's "
    "packages, or driver libraries copied into the container image, leave two versions. Remove the extra one (or "
    "reinstall the driver) so one version remains, and use an image that carries no driver libraries (the toolkit "
    "mounts the host's)."
)


def _release(version: str | None) -> tuple[int, ...] | None:
    return tuple(int(n) for n in _NUMBERS.findall(version)) if version else None


def _newer_libraries(library: str | None, module: str | None) -> bool | None:
    """Whether the libraries are the newer of the two, compared on the parts both print (nvidia-smi prints its
    library as 550.144, the kernel its module as 550.144.03): None when either is unknown or they agree there."""
    lib, mod = _release(library), _release(module)
    if not lib or not mod:
        return None
    shared = min(len(lib), len(mod))
    return None if lib[:shared] == mod[:shared] else lib[:shared] > mod[:shared]


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.NVIDIA_DRIVER_MISMATCH)
    said = [e for e in events if e.component in ("nvml", "kernel")]
    if not said:
        return []
    library = next((e.version for e in events if e.version), None)
    module = next((e.kernel_module_version for e in events if e.kernel_module_version), None)
    return [_finding(said[0], library, module)]


def _finding(event: LogEvent, library: str | None, module: str | None) -> Finding:
    newer = _newer_libraries(library, module)
    versions = f" (libraries {library}, kernel module {module})" if library and module else ""
    if newer is False:
        why = "the libraries are the older: a driver downgraded without a reboot, or an older copy found first"
        actions = [_REBOOT, _STALE]
    else:
        why = "the driver was upgraded and the host not rebooted" + ("" if newer else " (the usual cause)")
        actions = [_REBOOT, _RELOAD, _HOLD]
    return RULE.finding(
        Severity.CRITICAL,
        f"the host's NVIDIA driver libraries and its loaded kernel module are different versions{versions}: {why}",
        summary="NVML refuses to start when the driver's libraries are not the version of the kernel module "
        "loaded, and nvidia-smi, the container runtime and vLLM all ask NVML first: no GPU program started since "
        "can use the GPUs (vLLM finds no CUDA platform, `Failed to infer device type`; CUDA calls it error 803). "
        "Upgrading the driver's packages replaces the libraries on disk at once and the module only at the next "
        "boot. Nothing in vLLM's flags or the model changes this; in a container the libraries are the host's.",
        evidence=[c.log_evidence(event, name="driver/library version mismatch", value=versions.strip(" ()") or None)],
        actions=actions,
        confidence=0.9,
    )


RULE = Rule(
    code="OP-7.40",
    title="NVIDIA driver libraries and kernel module of different versions",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="NVML's `Failed to initialize NVML: Driver/library version mismatch` (nvidia-smi; "
        "nvidia-container-cli's `nvml error: driver/library version mismatch`), pynvml's `RM has detected an "
        "NVML/RM version mismatch`, the kernel's `NVRM: API mismatch: the client has the version X, but this kernel "
        "module has the version Y`; the versions beside them (nvidia-smi's `NVML library version`, "
        "/proc/driver/nvidia/version, the kernel's `NVRM: loading NVIDIA UNIX … Kernel Module`) say which is newer.",
        why="A driver upgrade replaces the libraries on disk at once and the kernel module at the next boot; until "
        "then NVML and CUDA refuse every new GPU program, vLLM included.",
        example="`nvidia-smi` → `Failed to initialize NVML: Driver/library version mismatch` / `NVML library "
        "version: 550.144` on a node whose unattended-upgrades installed a new driver overnight; rebooting fixed it.",
        fix="Reboot the host (or unload and reload the nvidia modules with no GPU process running); hold the driver "
        "packages so they change only with a planned reboot. Libraries older than the module and a reboot that does "
        "not help: remove the second installation or the driver libraries inside the image.",
        limits="Compares the versions only on the parts both lines print; without both it names the usual cause.",
        references=[
            "https://github.com/canonical/ubuntu-server-documentation/pull/369",
            "https://github.com/NVIDIA/nvidia-container-toolkit/issues/394",
            "https://github.com/NVIDIA/libnvidia-container/issues/213",
        ],
    ),
)

RULES: list[Rule] = [RULE]
