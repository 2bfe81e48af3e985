"""HL-6: a process died in native code (a segmentation fault), and faulthandler's dump says under which package.

Why a rule of its own: a signal in compiled code kills the process with no Python exception, so nothing in vLLM's
message catalog matches and the engine's death (HL-2) has no cause. Python's faulthandler, which vLLM's processes
enable, prints `Fatal Python error: Segmentation fault` and the Python frames from the innermost out
(`File "…", line N in f`, without a traceback's comma); the innermost frame under site-packages names the
package whose native code crashed. The lever is that package: its release (crashes are its bugs, fixed in later
ones), or, for an attention library, another attention backend. Source: vllm#6252 (Gemma-2 on the FLASHINFER
backend segfaulting in flashinfer's `begin_forward`; flashinfer 0.0.9 fixed it).

A process that loaded apache-tvm-ffi (xgrammar and FlashInfer do, so most V1 servers) has tvm-ffi's own SIGSEGV
handler instead (src/ffi/backtrace.cc): it prints `!!!!!!! Segfault encountered !!!!!!!` for a segfault anywhere in
the process, then the C++ frames innermost first (`File "<unknown>", line 0, in ncclNetPluginInit`). Those frames
have no site-packages path, so the library is read from the symbol: NCCL's `nccl…`, NVML's `nvml…`, the CUDA driver's
`cu…`, a C++ namespace (`nixl_ep::`, `xgrammar::`). Seen with an HPC cluster's NCCL network plugin built for another
NCCL (`ncclNetPluginInit`), an nvidia-ml-py newer than the driver (`nvmlSystemGetConfComputeSettings`) and a copy
into memory sleep mode had unmapped (`cuMemcpyDtoDAsync`, vllm#57853).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import (
    ABSEIL_REPORTED,
    SHELL_REPORTED,
    SUBPROCESS_REPORTED,
    SYSTEMD_REPORTED,
    TRITON_REPORTED,
    TVM_FFI_REPORTED,
    LogEvent,
    LogEventKind,
)
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# Attention libraries vLLM can run without: the backend to try instead.
ATTENTION_PACKAGES = {"flashinfer": "FLASH_ATTN", "xformers": "FLASH_ATTN", "vllm_flash_attn": "FLASHINFER"}
# faulthandler's names of the signals, as a sentence says them
SIGNAL_WORDS = {
    "Segmentation fault": "a segmentation fault",
    "Bus error": "a bus error",
    "Aborted": "an abort",
    "Floating point exception": "a floating point exception",
    "Illegal instruction": "an illegal instruction",
}

# The native library a C++ frame's symbol belongs to, by the prefix its authors give their functions
_SYMBOL_LIBRARIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^nccl"), "NCCL"),
    (re.compile(r"^nvml"), "NVML"),
    (re.compile(r"^cuda[A-Z]"), "the CUDA runtime"),
    (re.compile(r"^cu[A-Z]"), "the CUDA driver"),
    (re.compile(r"^(?:TVMFFI|tvm::ffi::)"), "tvm-ffi"),
    (re.compile(r"^(?:c10|at|torch)::"), "PyTorch"),
)
_NAMESPACE = re.compile(r"^(?:\(anonymous namespace\)::)?(?P<namespace>[A-Za-z_]\w*)::")


def native_library(frame: LogEvent) -> str | None:
    """The package or library a dump's innermost frame is in: its site-packages folder for faulthandler's Python
    frames, the symbol's prefix or C++ namespace for tvm-ffi's native ones."""
    package = c.installed_package(frame.code_file)
    if package or (frame.code_file or "").endswith(".py"):
        return package
    symbol = frame.function or ""
    library = next((name for prefix, name in _SYMBOL_LIBRARIES if prefix.search(symbol)), None)
    namespace = _NAMESPACE.match(symbol)
    return library or (namespace["namespace"] if namespace else None)


def _native_action(library: str, frame: LogEvent) -> str:
    """What to do about a crash in a library that is no Python package: its version against the others'."""
    if library == "NCCL" and ("NetPlugin" in (frame.function or "") or "plugin/" in (frame.code_file or "")):
        return (
            "NCCL crashed loading a network plugin (libnccl-net*.so, picked by NCCL_NET_PLUGIN or found on "
            "LD_LIBRARY_PATH, often a cluster's InfiniBand or RDMA plugin): a plugin built for another NCCL than "
            "the one torch ships crashes it. Use the plugin's build for this NCCL, or keep it off the library path "
            "to run on NCCL's own transports."
        )
    if library in ("the CUDA driver", "the CUDA runtime"):
        return (
            f"The crash is inside {library}'s {frame.function}: a call on memory or a context that is no longer "
            "valid (freed, unmapped by sleep mode, a dead context), or a driver older than the CUDA the wheels were "
            "built for; read what the engine was doing at that moment (the log lines above the banner)."
        )
    return (
        f"Match {library} to the versions this vLLM and torch were built with (`python collect_env.py` lists "
        f"them): a crash in {library}'s native code is a bug of that build or of the combination of versions."
    )


def _report_only(who: str) -> str:
    """The action for a signal reported from outside the process (the shell, systemd): fetch the server's own dump."""
    where = {
        SYSTEMD_REPORTED: "`journalctl -u <unit>` before this line",
        SUBPROCESS_REPORTED: "the child's output above this traceback, or its command run by hand",
    }.get(who, "`kubectl logs --previous`, `docker logs`")
    return (
        f"The text holds only {who}'s report of the signal: the killed process's own output has faulthandler's dump "
        "('Fatal Python error: …' and the Python frames, innermost first), which names the package that crashed; "
        f"fetch it ({where}), or run with PYTHONFAULTHANDLER=1 if it is missing; the fix is that package's release "
        "(or vLLM's, for a crash in vLLM's own ops)."
    )


_TVM_FFI_FRAMES = (
    "The banner is apache-tvm-ffi's SIGSEGV handler (loaded with xgrammar or FlashInfer), printed for a segfault "
    'anywhere in the process: the lines under it (`File "…", line N, in <function>`, innermost first) name the '
    "native function that crashed; paste them with the versions (`python collect_env.py`)."
)


# Who lists the frames under the banner, by the handler that printed it
_FRAMES_LISTED = {
    TVM_FFI_REPORTED: "tvm-ffi's handler lists the native frames from the innermost out",
    ABSEIL_REPORTED: "abseil's handler lists the native frames (`PC: @ …`) from the innermost out",
    TRITON_REPORTED: "Triton Inference Server's handler lists the native frames (` 0# … in <library>`) from the "
    "innermost out, after its own two",
}
_ABSEIL_FRAMES = (
    "The banner is abseil's failure signal handler, which Ray's worker processes install: the `PC: @ 0x… <function>` "
    "and `@ 0x… <function>` lines under it name the native function that crashed and its callers (vllm#6918's named "
    "NCCL's proxy, addProxyOpIfNeeded); paste them with the versions (`python collect_env.py`, `ray --version`)."
)


_TRITON_FRAMES = (
    "The line is Triton Inference Server's handler for a fatal signal: the numbered lines under it (` 0# … in "
    "<library>`) are the stack from the innermost out, whose first two are the handler and libc's signal return; the "
    "third names the native function and library that crashed, Triton's own (its gRPC or HTTP front end, the Python "
    "backend's stub) or one the vLLM backend loaded; paste them with Triton's and vLLM's "
    "versions, and what it was serving when it crashed (triton-inference-server/server#7332's followed several "
    "concurrent clients)."
)


# Where a signal handler's banner puts the native frames that say what crashed, by the handler that printed it
_BANNER_FRAMES = {
    TVM_FFI_REPORTED: _TVM_FFI_FRAMES,
    ABSEIL_REPORTED: _ABSEIL_FRAMES,
    TRITON_REPORTED: _TRITON_FRAMES,
}


# SIGILL: the CPU met an instruction it does not have, which is a build made for another CPU far more often than a
# bug (vllm PR #35466: one CPU wheel for AVX2 and AVX-512 crashed so on a CPU without AVX-512).
ILLEGAL_INSTRUCTION_ACTION = (
    "An illegal instruction is compiled code using an instruction this CPU lacks: a build made for a newer CPU "
    "(AVX-512, AVX512-BF16 or AMX in vLLM's CPU build or in a torch wheel, on a CPU with AVX2 only; an image built "
    "on one host and run on an older one). Compare `grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' /proc/cpuinfo "
    "| sort -u` with what the build needs; for vLLM's CPU backend, build it for this CPU (`docker build -f "
    "docker/Dockerfile.cpu --build-arg VLLM_CPU_DISABLE_AVX512=true …`, the same variable for a source build)."
)


def _crash_actions(crash: LogEvent, frame: LogEvent | None, package: str | None) -> list[str]:
    """Fetch the dump when only a report of the signal is here; else the lever of the package that crashed. An
    illegal instruction is first a question of the CPU the build was made for."""
    first = [ILLEGAL_INSTRUCTION_ACTION] if crash.message == "Illegal instruction" else []
    return first + _package_actions(crash, frame, package)


def _package_actions(crash: LogEvent, frame: LogEvent | None, package: str | None) -> list[str]:
    if frame is None and crash.component in (SHELL_REPORTED, SYSTEMD_REPORTED, SUBPROCESS_REPORTED):
        return [_report_only(crash.component)]
    if frame is None and crash.component in _BANNER_FRAMES:  # a handler's banner whose frames were not pasted
        return [_BANNER_FRAMES[crash.component]]
    if package and frame and not c.installed_package(frame.code_file):
        return [_native_action(package, frame)]
    return [
        f"Upgrade {package} to the release this vLLM pins, or to a later one if that is the pinned one: "
        f"native crashes are fixed in {package}'s releases."
        if package and package != "vllm"
        else "Upgrade vLLM: a crash in its compiled ops is a bug of that build.",
        "Keep the dump (the lines after 'Fatal Python error') with the versions (`python collect_env.py`) for "
        "the package's issue tracker.",
    ]


def _check_native_crash(facts: Facts) -> list[Finding]:
    crashes = facts.events_of(LogEventKind.NATIVE_CRASH)
    if not crashes:
        return []
    crash = crashes[0]
    frames = [f for f in facts.events_of(LogEventKind.NATIVE_FRAME) if (f.line_no or 0) > (crash.line_no or 0)]
    innermost = frames[0] if frames else None
    package = native_library(innermost) if innermost else None
    return [_crash_finding(crash, innermost, package)]


def _crash_finding(crash: LogEvent, frame: LogEvent | None, package: str | None) -> Finding:
    signal = SIGNAL_WORDS.get(crash.message or "", "a signal")
    where = f" in {package}'s {frame.function}" if package and frame else ""
    backend = ATTENTION_PACKAGES.get(package or "")
    return RULE_NATIVE_CRASH.finding(
        Severity.CRITICAL,
        f"the process died of {signal}{where}: a crash in native code",
        summary="A signal killed the process inside compiled code, so Python raised nothing and the engine died "
        "without an exception to read. "
        + _FRAMES_LISTED.get(
            crash.component or "", "faulthandler's dump lists the Python frames from the innermost out"
        )
        + (f"; the innermost is {frame.function} ({frame.code_file}), in {package}" if frame and package else "")
        + ". Such a crash is a bug of that package's build or of the combination of versions, not of the launch.",
        evidence=[
            c.log_evidence(crash, name="native crash"),
            *([c.log_evidence(frame, name="innermost frame")] if frame else []),
        ],
        changes=[
            ConfigChange(
                flag=c.ATTENTION_BACKEND_ENV,
                proposed=backend,
                reason=f"the crash is in {package}'s attention code; another backend runs none of it",
                cost="another backend's speed and feature set",
                kind="env",
            )
        ]
        if backend
        else [],
        actions=_crash_actions(crash, frame, package),
        confidence=0.75 if package else 0.5,
    )


RULE_NATIVE_CRASH = Rule(
    code="HL-6",
    title="a process died in native code (segmentation fault)",
    category=Category.HEALTH,
    check=_check_native_crash,
    needs=("events",),
    page=RulePage(
        checks="Python's faulthandler: `Fatal Python error: Segmentation fault` (or a bus error, abort, floating "
        "point exception, illegal instruction), and the innermost frame of its dump under site-packages; the "
        "shell's report of the same signals (`Segmentation fault (core dumped)`, a script's `line 5:  42 Aborted`) "
        "and systemd's (`Main process exited, code=dumped, status=11/SEGV`), which ask for the dump; apache-tvm-ffi's "
        "banner `!!!!!!! Segfault encountered !!!!!!!` and the C++ frames under it, whose symbol names the library.",
        why="A crash in compiled code leaves no exception; the package whose frame is innermost is the one to "
        "upgrade or, for attention, to avoid.",
        example="`Fatal Python error: Segmentation fault` with `flashinfer/decode.py … in begin_forward` innermost, "
        "Gemma-2 on the FLASHINFER backend; flashinfer 0.0.9 fixed it (vllm#6252).",
        fix="The package's release; another attention backend (VLLM_ATTENTION_BACKEND) when it is an attention "
        "library.",
        limits="The innermost Python frame is where native code was entered, not necessarily the faulty library "
        "(a kernel it launched may belong to another); without frames only the signal is named.",
        references=["https://github.com/vllm-project/vllm/issues/6252"],
    ),
)

RULES: list[Rule] = [RULE_NATIVE_CRASH]
