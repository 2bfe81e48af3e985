"""OP-7.94: a program that starts vLLM for the user gave up on it, or hid why it failed.

Why a rule of its own: desktop and workstation front ends start `vllm serve` themselves, poll it until it answers,
and report in their own words when it does not. The line a user pastes is then the launcher's, not vLLM's, and says
nothing of vLLM's state. Two launchers are read:

- Lemonade (lemonade-sdk/lemonade) logs `Waiting for vllm-server to be ready (timeout: <n>s)...` and, if the server
  does not answer on /health in time, `(WrappedServer) vllm-server failed to start within timeout`. The wait is the
  `global_timeout` of Lemonade's config.json (lemonade-sdk/lemonade PR #2004 made vLLM's wait use it, with 600 s as
  the default; PR #2459 gave every backend the same wait; #674 was a large model outlasting the old fixed wait). With
  a wait of 0 s the loop makes no attempt at all and reports failure in the millisecond the server starts, which
  noamsto/nix-amd-ai#68 traced to a config.json that had persisted `global_timeout` 0.
- InstructLab's `ilab` says `vLLM failed to start.  Retry with --enable-serving-output to learn more about the
  failure.`: it does not show the server's own output unless asked, so the cause is in a rerun with that option.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

LEMONADE_DEFAULT_WAIT_S = 600  # Lemonade's global_timeout default since PR #2004


# Lemonade's giving up, in its own logger's words (an unplaced line: VC-4 keeps it as the launcher's error).
_LEMONADE_GAVE_UP = re.compile(r"\(WrappedServer\) (?P<server>[\w.-]+) failed to start within timeout")


def _check_launchers(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.LAUNCHER_GAVE_UP)
    hidden = next((e for e in events if e.component == "instructlab"), None)
    if hidden is not None:
        return [_instructlab(hidden)]
    gave_up = [
        (event, found)
        for event in facts.events_of(LogEventKind.UNPLACED_LINE)
        if (found := _LEMONADE_GAVE_UP.search(event.message or event.raw))
    ]
    if not gave_up:
        return []
    failed, found = gave_up[0]
    wait = next((e for e in events if e.message == "waiting" and e.timeout_ms is not None), None)
    return [_lemonade(failed, found["server"], wait)]


def _lemonade(failed: LogEvent, server: str, wait: LogEvent | None) -> Finding:
    seconds = wait.timeout_ms // 1000 if wait is not None and wait.timeout_ms is not None else None
    evidence = [c.log_evidence(failed, name="Lemonade's wrapped server", value=server)]
    if wait is not None:
        evidence.insert(0, c.log_evidence(wait, name="Lemonade's readiness wait", value=seconds, unit="s"))
    if seconds == 0:
        title = (
            f"Lemonade waited 0 s for {server} (its global_timeout is 0): it gave up before vLLM could start, and "
            "vLLM itself did not fail"
        )
        proposed, why = str(LEMONADE_DEFAULT_WAIT_S), "a wait of 0 s makes no readiness attempt at all"
    else:
        waited = f"{seconds} s" if seconds is not None else "its readiness wait"
        title = f"Lemonade gave up on {server} after {waited}: vLLM had not answered on /health by then"
        proposed = str(max(2 * (seconds or LEMONADE_DEFAULT_WAIT_S), LEMONADE_DEFAULT_WAIT_S))
        why = "vLLM's start (weights, compilation, CUDA graphs) takes longer than that on this host"
    return RULE_LAUNCHERS.finding(
        Severity.HIGH,
        title,
        summary="Lemonade starts vllm-server itself and polls it until it answers, for as long as `global_timeout` "
        "in its config.json says; when the wait ends first, it stops the server and reports the launch failed.",
        evidence=evidence,
        changes=[
            ConfigChange(
                flag="global_timeout",
                current=str(seconds) if seconds is not None else None,
                proposed=proposed,
                reason=f"{why}; Lemonade's vLLM wait is its global_timeout (lemonade-sdk/lemonade PR #2004)",
                kind="setting",
            )
        ],
        actions=[
            f"Raise global_timeout in Lemonade's config.json (in its cache folder, `~/.cache/lemonade/config.json` "
            f"for a user's lemond) to at least {proposed} s and restart lemond; `lemonade config` shows the value in "
            "effect.",
            "If vLLM still does not answer in that time, read vLLM's own output in lemond's log (the `(Process)` "
            "lines) for where its start stopped.",
        ],
        confidence=0.8 if seconds == 0 else 0.6,
    )


def _instructlab(failed: LogEvent) -> Finding:
    return RULE_LAUNCHERS.finding(
        Severity.HIGH,
        "InstructLab's `ilab` started vLLM and it failed, and ilab did not show vLLM's output: the cause is in a "
        "rerun with --enable-serving-output",
        summary="ilab runs the vLLM server as a child process and keeps its output to itself by default; the line "
        "says only that the server did not come up.",
        evidence=[c.log_evidence(failed, name="InstructLab's launcher")],
        actions=[
            "Rerun the same `ilab` command with `--enable-serving-output` and paste vLLM's traceback from that "
            "output; servops reads it for the cause.",
        ],
        confidence=0.7,
    )


RULE_LAUNCHERS = Rule(
    code="OP-7.94",
    title="a program that starts vLLM gave up waiting for it, or hid why it failed",
    category=Category.STARTUP,
    check=_check_launchers,
    needs=("events",),
    page=RulePage(
        checks="Lemonade's `Waiting for <server> to be ready (timeout: <n>s)...` and `(WrappedServer) <server> failed "
        "to start within timeout`; InstructLab's `vLLM failed to start.  Retry with --enable-serving-output …`.",
        why="The launcher's line is about its own wait or its own hiding of vLLM's output, not about vLLM.",
        example="`Waiting for vllm-server to be ready (timeout: 0s)...` then `vllm-server failed to start within "
        "timeout` in the same millisecond (noamsto/nix-amd-ai#68).",
        fix="Lemonade: a larger global_timeout in config.json (600 s by default). InstructLab: rerun with "
        "--enable-serving-output.",
        limits="Reads these two launchers' words; without the wait line, the time Lemonade waited is not known.",
        references=[
            "https://github.com/lemonade-sdk/lemonade/pull/2004",
            "https://github.com/lemonade-sdk/lemonade/issues/674",
            "https://github.com/instructlab/instructlab/issues/3466",
        ],
    ),
)

RULES: list[Rule] = [RULE_LAUNCHERS]
