"""HL-6: a process died in native code (a segmentation fault), and faulthandler's dump says under which package.

Why a rule of its own: a signal in compiled code kills the process with no Python exception, so nothing in vLLM's
message catalog matches and the engine's death (HL-2) has no cause. Python's faulthandler, which vLLM's processes
enable, prints `Fatal Python error: Segmentation fault` and the Python frames from the innermost out
(`File "…", line N in f`, without a traceback's comma); the innermost frame under site-packages names the
package whose native code crashed. The lever is that package: its release (crashes are its bugs, fixed in later
ones), or, for an attention library, another attention backend. Source: vllm#6252 (Gemma-2 on the FLASHINFER
backend segfaulting in flashinfer's `begin_forward`; flashinfer 0.0.9 fixed it).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import SHELL_REPORTED, SYSTEMD_REPORTED, LogEvent, LogEventKind
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


def _report_only(who: str) -> str:
    """The action for a signal reported from outside the process (the shell, systemd): fetch the server's own dump."""
    where = (
        "`journalctl -u <unit>` before this line"
        if who == SYSTEMD_REPORTED
        else "`kubectl logs --previous`, `docker logs`"
    )
    return (
        f"The text holds only {who}'s report of the signal: the server's own output has faulthandler's dump "
        "('Fatal Python error: …' and the Python frames, innermost first), which names the package that crashed; "
        f"fetch it ({where}), or run with PYTHONFAULTHANDLER=1 if it is missing; the fix is that package's release "
        "(or vLLM's, for a crash in vLLM's own ops)."
    )


def _check_native_crash(facts: Facts) -> list[Finding]:
    crashes = facts.events_of(LogEventKind.NATIVE_CRASH)
    if not crashes:
        return []
    crash = crashes[0]
    frames = [f for f in facts.events_of(LogEventKind.NATIVE_FRAME) if (f.line_no or 0) > (crash.line_no or 0)]
    innermost = frames[0] if frames else None
    package = c.installed_package(innermost.code_file) if innermost else None
    return [_crash_finding(crash, innermost, package)]


def _crash_finding(crash: LogEvent, frame: LogEvent | None, package: str | None) -> Finding:
    signal = SIGNAL_WORDS.get(crash.message or "", "a signal")
    where = f" in {package}'s {frame.function}" if package and frame else ""
    backend = ATTENTION_PACKAGES.get(package or "")
    return RULE_NATIVE_CRASH.finding(
        Severity.CRITICAL,
        f"the process died of {signal}{where}: a crash in native code",
        summary="A signal killed the process inside compiled code, so Python raised nothing and the engine died "
        "without an exception to read. faulthandler's dump lists the Python frames from the innermost out"
        + (f"; the innermost is {frame.code_file}, in {package}" if frame and package else "")
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
        actions=[_report_only(crash.component or SHELL_REPORTED)]
        if crash.component in (SHELL_REPORTED, SYSTEMD_REPORTED) and frame is None
        else [
            f"Upgrade {package} to the release this vLLM pins, or to a later one if that is the pinned one: "
            f"native crashes are fixed in {package}'s releases."
            if package and package != "vllm"
            else "Upgrade vLLM: a crash in its compiled ops is a bug of that build.",
            "Keep the dump (the lines after 'Fatal Python error') with the versions (`python collect_env.py`) for "
            "the package's issue tracker.",
        ],
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
        "and systemd's (`Main process exited, code=dumped, status=11/SEGV`), which ask for the dump.",
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
