"""OP-7.66: oneCCL (vLLM's collectives on Intel GPUs) cannot open the GPUs' device files in a container."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_xpu_devices
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_missing_by_path_folder_is_mounted_into_the_container():
    # intel/ipex-llm#12990: tensor parallelism in Docker, one card serving; uxlfoundation/oneCCL#121 names the folder
    line = (
        "RuntimeError: oneCCL: ze_fd_manager.cpp:144 init_device_fds: EXCEPTION: opendir failed: could not open "
        "device directory"
    )
    facts = _facts([line])
    [event] = facts.events_of(K.ONECCL_DEVICE_FILES)
    assert (event.message, event.function) == ("opendir", "init_device_fds")
    findings = evaluate(facts).findings
    assert [f.rule for f in findings] == ["OP-7.66"]  # the RuntimeError is explained, not left to VC-2
    top = findings[0]
    assert "cannot open the folder of the GPUs' device files (/dev/dri/by-path)" in top.title
    assert [(c.kind, c.command_line()) for c in top.changes] == [
        ("setting", "docker run -v /dev/dri/by-path:/dev/dri/by-path")
    ]


def test_the_drmfd_fallback_adds_the_capability_that_lets_pidfd_work():
    # vllm#14747's log (vLLM 0.7.4 on XPU): the pidfd exchange refused, then a device file that does not open
    lines = [
        "2025:03:13-10:36:27:(  636) |CCL_WARN| pidfd is not supported, fallbacks to drmfd exchange mode",
        "2025:03:13-10:36:27:(  636) |CCL_ERROR| ze_fd_manager.cpp:214 fill_device_fds: condition fds[dev_idx] > 0 "
        "failed",
        "open failed: fd: -1, errno: No such file or directory",
    ]
    [finding] = op7_xpu_devices.RULE_DEVICE_FILES.evaluate(_facts(lines))
    assert "cannot open a GPU's device file" in finding.title
    assert [c.command_line() for c in finding.changes][1] == "docker run --cap-add SYS_PTRACE"
    assert "pidfd exchange refused" in finding.summary


def test_the_warning_alone_is_no_failure():
    line = "2025:03:13-10:36:27:(  636) |CCL_WARN| pidfd is not supported, fallbacks to drmfd exchange mode"
    assert op7_xpu_devices.RULE_DEVICE_FILES.evaluate(_facts([line])) == []
