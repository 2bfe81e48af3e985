"""OP-7.66: oneCCL, the collective library of vLLM on Intel GPUs, cannot open the GPUs' device files.

Why a rule of its own: with more than one Intel GPU (tensor parallelism on XPU, vLLM's own XPU backend or
ipex-llm's), the workers' collectives run on oneCCL, which finds each GPU's device file in a directory it names itself,
/dev/dri/by-path/ (src/common/global/ze/ze_fd_manager.cpp). `docker run --device /dev/dri` passes the device nodes
into the container but not that folder of links, so oneCCL stops with `ze_fd_manager.cpp:144 init_device_fds:
EXCEPTION: opendir failed: could not open device directory` (uxlfoundation/oneCCL#121: the maintainers agreed the
path is fixed; oneCCL#217 reproduces it), while one GPU, which needs no collectives, serves (intel/ipex-llm#12990).
Under Docker's default seccomp profile oneCCL also cannot use pidfd to share the devices between the workers and falls
back to opening the files itself (`pidfd is not supported, fallbacks to drmfd exchange mode`), where a file it cannot
open ends in `fill_device_fds: … open failed: fd: -1, errno: No such file or directory` (vllm#14747's log);
oneCCL#217 reports that `--cap-add SYS_PTRACE` lets the pidfd path work. The words are oneCCL's, never vLLM's, and no
vLLM flag changes them.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

BY_PATH = "/dev/dri/by-path"


def _check_device_files(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.ONECCL_DEVICE_FILES)
    failed = next((e for e in events if e.message in ("opendir", "open")), None)
    if failed is None:
        return []
    pidfd = any(e.message == "pidfd" for e in events)
    folder = failed.message == "opendir"
    what = f"the folder of the GPUs' device files ({BY_PATH})" if folder else "a GPU's device file"
    evidence = [c.log_evidence(failed, name="oneCCL", value=failed.raw or failed.message)]
    changes = _container_changes(pidfd)
    return [
        RULE_DEVICE_FILES.finding(
            Severity.CRITICAL,
            f"oneCCL (vLLM's collectives on Intel GPUs) cannot open {what}: the container lacks what it opens the "
            "GPUs by",
            summary="With more than one Intel GPU the workers' collectives run on oneCCL, which opens each GPU "
            f"through the links in {BY_PATH} (ze_fd_manager.cpp). A container needs both the device nodes (--device "
            "/dev/dri) and that folder, which --device does not pass; a link to a node the container lacks fails the "
            "same way. It fails before the model loads, while one GPU, which needs no collectives, serves. The words "
            "are oneCCL's; no vLLM flag changes them."
            + (" Its log also shows the pidfd exchange refused, so it opened the files itself." if pidfd else ""),
            evidence=evidence,
            changes=changes,
            actions=[
                f"In Kubernetes: mount {BY_PATH} into the pod (a hostPath volume) beside the GPU device plugin's "
                "devices; or run the container privileged, which sees the whole /dev.",
                "Check inside the container: `ls -l /dev/dri/by-path` must list a `pci-…-render` link for every GPU "
                "the server uses.",
                "Until then, one GPU serves without oneCCL (--tensor-parallel-size 1), if the model fits.",
            ],
            confidence=0.8,
        )
    ]


def _container_changes(pidfd: bool) -> list[ConfigChange]:
    """Container settings, not vLLM flags: the folder oneCCL opens the GPUs by, and, when its log shows the
    pidfd exchange refused, the capability Docker's default seccomp profile withholds."""
    changes = [
        ConfigChange(
            flag="docker run -v",
            proposed=f"{BY_PATH}:{BY_PATH}",
            reason=f"the container then has the links oneCCL opens each GPU by; --device /dev/dri passes the "
            f"device nodes but not {BY_PATH}",
            kind="setting",
        )
    ]
    if pidfd:
        changes.append(
            ConfigChange(
                flag="docker run --cap-add",
                proposed="SYS_PTRACE",
                reason="lets oneCCL share the GPUs between the workers through pidfd, which Docker's default "
                "seccomp profile refuses it (its log: pidfd is not supported, fallbacks to drmfd exchange mode)",
                cost="the container may trace its own processes",
                kind="setting",
            )
        )
    return changes


RULE_DEVICE_FILES = Rule(
    code="OP-7.66",
    title="oneCCL cannot open the Intel GPUs' device files (/dev/dri/by-path missing in the container)",
    category=Category.PARALLELISM,
    check=_check_device_files,
    needs=("events",),
    page=RulePage(
        checks="oneCCL's `ze_fd_manager.cpp:N init_device_fds: EXCEPTION: opendir failed: could not open device "
        "directory` or `fill_device_fds: … open failed: fd: -1, errno: …` (also as `|CCL_ERROR| … condition "
        "fds[dev_idx] > 0 failed`), with its warning `pidfd is not supported, fallbacks to drmfd exchange mode` when "
        "present.",
        why="oneCCL opens each Intel GPU through /dev/dri/by-path/, which `--device /dev/dri` does not pass into a "
        "container; under Docker's default seccomp it cannot share the devices by pidfd either.",
        example="`RuntimeError: oneCCL: ze_fd_manager.cpp:144 init_device_fds: EXCEPTION: opendir failed: could not "
        "open device directory` with tensor parallelism in Docker, one card serving (intel/ipex-llm#12990; "
        "uxlfoundation/oneCCL#121).",
        fix=f"`docker run -v {BY_PATH}:{BY_PATH}` beside `--device /dev/dri` (or privileged); `--cap-add "
        "SYS_PTRACE` for the pidfd exchange.",
        limits="Reads oneCCL's words only; a host whose /dev/dri/by-path itself lacks the GPUs (a driver not loaded) "
        "fails the same way and needs the host fixed first.",
        references=[
            "https://github.com/uxlfoundation/oneCCL/issues/121",
            "https://github.com/uxlfoundation/oneCCL/issues/217",
            "https://github.com/intel/ipex-llm/issues/12990",
            "https://github.com/vllm-project/vllm/issues/14747",
        ],
    ),
)

RULES: list[Rule] = [RULE_DEVICE_FILES]
