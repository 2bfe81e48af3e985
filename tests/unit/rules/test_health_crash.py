"""HL-6: a process died in native code; faulthandler's innermost frame names the package."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import health_crash
from rules.evaluate import evaluate
from rules.events import ABSEIL_REPORTED, TRITON_REPORTED, LogEventKind
from rules.facts import Facts

DUMP = [
    "Fatal Python error: Segmentation fault",
    "",
    "Current thread 0x00007fcf597eb640 (most recent call first):",
    '  File "/usr/local/lib/python3.10/dist-packages/flashinfer/decode.py", line 514 in begin_forward',
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/attention/backends/flashinfer.py", line 149 in begin_forward',
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_segfault_in_flashinfer_upgrades_it_or_leaves_its_backend():
    # vllm#6252: Gemma-2 on the FLASHINFER backend; flashinfer 0.0.9 fixed it
    top = evaluate(_facts(DUMP)).findings[0]
    assert top.rule == "HL-6"
    assert top.title == "the process died of a segmentation fault in flashinfer's begin_forward: a crash in native code"
    assert (top.changes[0].flag, top.changes[0].proposed) == ("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")
    assert top.actions[0].startswith("Upgrade flashinfer to the release this vLLM pins")


def test_a_crash_in_vllms_own_ops_upgrades_vllm_and_one_without_frames_names_the_signal():
    own = [
        "Fatal Python error: Segmentation fault",
        '  File "/x/site-packages/vllm/_custom_ops.py", line 9 in rms_norm',
    ]
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts(own))
    assert not finding.changes and finding.actions[0].startswith("Upgrade vLLM")
    [bare] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts(["Fatal Python error: Aborted"]))
    assert bare.title == "the process died of an abort: a crash in native code"


def test_a_python_tracebacks_frames_are_not_read_as_a_dump():
    lines = ['  File "/x/site-packages/flashinfer/decode.py", line 514, in begin_forward', "ValueError: x"]
    assert health_crash.RULE_NATIVE_CRASH.evaluate(_facts(lines)) == []


def test_the_shells_report_of_the_signal_alone_asks_for_faulthandlers_dump():
    for line in (
        "Segmentation fault (core dumped)",
        "/entrypoint.sh: line 5:    42 Aborted                 (core dumped) python3 -m vllm.entrypoints.api_server",
        "[1]+  Bus error               vllm serve Qwen/Qwen3-8B",
    ):
        [crash] = parse_lines([line]).of_kind(LogEventKind.NATIVE_CRASH)
        assert crash.component == "the shell"
    shell_only = Facts(events=parse_lines(["Segmentation fault (core dumped)"]).events)
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(shell_only)
    assert finding.actions == [finding.actions[0]] and "faulthandler's dump" in finding.actions[0]
    # vLLM's own 'Aborted request' is no signal
    assert not parse_lines(["INFO 11-30 10:00:00 [async_llm.py:1] Aborted request chatcmpl-1."]).of_kind(
        LogEventKind.NATIVE_CRASH
    )


def test_systemds_report_of_a_units_crash_reads_as_the_signal_and_asks_for_the_units_journal():
    journal = "Dec 01 10:00:00 gpu-01 systemd[1]: vllm.service: Main process exited, code={}, status={}"
    for code, status, signal in (("dumped", "11/SEGV", "Segmentation fault"), ("killed", "6/ABRT", "Aborted")):
        [crash] = parse_lines([journal.format(code, status)]).of_kind(LogEventKind.NATIVE_CRASH)
        assert (crash.message, crash.component) == (signal, "systemd")
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(
        Facts(events=parse_lines([journal.format("dumped", "11/SEGV")]).events)
    )
    assert finding.title == "the process died of a segmentation fault: a crash in native code"
    assert "systemd's report" in finding.actions[0] and "journalctl -u <unit>" in finding.actions[0]
    # an exit with an error status, or a SIGKILL, is no crash in native code
    for status in ("code=exited, status=1/FAILURE", "code=killed, status=9/KILL", "code=killed, status=15/TERM"):
        line = f"vllm.service: Main process exited, {status}"
        assert not parse_lines([line]).of_kind(LogEventKind.NATIVE_CRASH), status


def test_tvm_ffis_banner_alone_asks_for_the_frames_under_it():
    # vllm#57853: sleep mode's unmapped weights, the EngineCore died with tvm-ffi's banner
    [crash] = parse_lines(["!!!!!!! Segfault encountered !!!!!!!"]).of_kind(LogEventKind.NATIVE_CRASH)
    assert (crash.message, crash.component) == ("Segmentation fault", "tvm-ffi's signal handler")
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts(["!!!!!!! Segfault encountered !!!!!!!"]))
    assert finding.title == "the process died of a segmentation fault: a crash in native code"
    assert "tvm-ffi's SIGSEGV handler" in finding.actions[0] and "innermost first" in finding.actions[0]


def test_the_native_frame_under_the_banner_names_its_library_by_symbol():
    plugin = [
        "!!!!!!! Segfault encountered !!!!!!!",
        '  File "plugin/net.cc", line 216, in ncclNetPluginInit',
        '  File "plugin/net.cc", line 362, in ncclNetInit(ncclComm*)',
    ]
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts(plugin))
    assert (
        finding.title == "the process died of a segmentation fault in NCCL's ncclNetPluginInit: a crash in native code"
    )
    assert "network plugin" in finding.actions[0] and not finding.changes
    namespaced = ["!!!!!!! Segfault encountered !!!!!!!", 'File "<unknown>", line 0, in nixl_ep::Buffer::destroy()']
    [nixl] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts(namespaced))
    assert "in nixl_ep's nixl_ep::Buffer::destroy()" in nixl.title
    driver = ["!!!!!!! Segfault encountered !!!!!!!", '  File "<unknown>", line 0, in cuMemcpyDtoDAsync_v2']
    [cuda] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts(driver))
    assert "the CUDA driver's cuMemcpyDtoDAsync_v2" in cuda.title and "sleep mode" in cuda.actions[0]


def test_zshs_illegal_hardware_instruction_is_first_a_build_for_another_cpu():
    # vllm PR #35466, verbatim: vLLM's CPU wheel built with AVX-512 on a CPU without it
    line = (
        "[1]    3981644 illegal hardware instruction (core dumped)  vllm serve qwen/qwen3-0.6b --enforce-eager "
        "--port=8080"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "HL-6" and "illegal instruction" in top.title
    assert "VLLM_CPU_DISABLE_AVX512" in top.actions[0] and "/proc/cpuinfo" in top.actions[0]


def test_abseils_banner_ray_workers_print_is_the_crash_with_where_its_frames_are():
    # vllm#6918, verbatim: a Ray worker's segfault (its frames, pasted after it, were in NCCL's proxy)
    line = "(RayWorkerWrapper pid=5993) *** SIGSEGV received at time=1722289279 on cpu 61 ***"
    [crash] = parse_lines([line]).of_kind(LogEventKind.NATIVE_CRASH)
    assert (crash.message, crash.component) == ("Segmentation fault", ABSEIL_REPORTED)
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts([line]))
    assert finding.title == "the process died of a segmentation fault: a crash in native code"
    assert "abseil's failure signal handler" in finding.actions[0] and "PC: @" in finding.summary


def test_tritons_signal_line_is_the_crash_by_its_number_and_a_stop_signal_is_none():
    # triton-inference-server/server#7332 and #7400, verbatim: Triton running vLLM's backend died so, its frames after
    line = "Signal (11) received."
    [crash] = parse_lines([line]).of_kind(LogEventKind.NATIVE_CRASH)
    assert (crash.message, crash.component) == ("Segmentation fault", TRITON_REPORTED)
    [finding] = health_crash.RULE_NATIVE_CRASH.evaluate(_facts([line]))
    assert finding.title == "the process died of a segmentation fault: a crash in native code"
    assert "Triton Inference Server's handler for a fatal signal" in finding.actions[0]
    assert not parse_lines(["Signal (15) received."]).of_kind(LogEventKind.NATIVE_CRASH)  # a stop, not a crash
    # Triton's handler is installed for SIGSEGV and SIGABRT only: another number is another program's words
    assert not parse_lines(["Signal (7) received."]).of_kind(LogEventKind.NATIVE_CRASH)
