"""OP-7.20: vLLM's command line refused its arguments (argparse's "unrecognized arguments"), so nothing started.

Why a rule of its own: the words are argparse's, not vLLM's, and they say which of two mistakes it is. Arguments
that start with a program (`/bin/bash -c …`, `llama-run …`) are a command given to an image whose entrypoint is
already vLLM's server (vLLM's images start `vllm serve` or the api_server module), so Docker or Kubernetes
appended the command to it as arguments. Arguments that are flags name one vLLM's command line does not take:
a misspelling of one it does (named from the 484 flags of vLLM 0.32, `advisor/catalog/vllm_interface.json`), or
a flag of another server or of an older release, which a generator of launch commands (an operator, a chart)
passes to every server. Sources: defilantech/LLMKube#1030 (`--enable-metrics`, metrics are on by default at
/metrics), opea-project/GenAIComps#336 (`/bin/bash -c` after an api_server entrypoint), containers/ramalama#758.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# What a flag that vLLM lacks was usually meant to turn on, by a word of it: vLLM has it without a flag.
ALREADY_ON = {
    "metrics": "vLLM's OpenAI server serves Prometheus metrics at /metrics without a flag",
}


def _check_unrecognized(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.ARGS_UNRECOGNIZED)
    if not events:
        return []
    event = events[0]
    first = event.component or ""
    if first and not first.startswith("-"):
        return [_command_finding(event, first)]
    return [_flag_finding(event, first)] if first else []


def _command_finding(event: LogEvent, program: str) -> Finding:
    return RULE_UNRECOGNIZED.finding(
        Severity.CRITICAL,
        f"vLLM's server was given a command as its arguments ({program} …): the image's entrypoint is already the "
        "server",
        summary=f"argparse refused `{event.message}`: the arguments start with a program, not a flag. vLLM's images "
        "start vLLM's server as their entrypoint, and `docker run IMAGE <words>` (or a pod's `args:`) appends the "
        "words to it, so the server was asked to parse a whole command line meant for a shell or another runtime.",
        evidence=[c.log_evidence(event, name="arguments refused", value=program)],
        actions=[
            "Give the image only the server's own arguments (the `vllm serve` flags: `docker run … IMAGE --model … "
            "--port …`), or replace the entrypoint to run your command: `docker run --entrypoint /bin/bash IMAGE -c "
            "'…'`; in Kubernetes, `args:` for the server's flags, `command:` to replace the entrypoint.",
            "A wrapper that builds the command for another runtime (a llama.cpp command line) needs its vLLM mode: "
            "vLLM's image runs the server only.",
        ],
        confidence=0.85,
    )


def _flag_finding(event: LogEvent, flag: str) -> Finding:
    meant = event.nearest_flag
    hint = next((why for word, why in ALREADY_ON.items() if word in flag), None)
    what = f"a misspelling of {meant}" if meant else "not a flag vLLM's command line takes"
    return RULE_UNRECOGNIZED.finding(
        Severity.CRITICAL,
        f"vLLM refused the argument {flag}: {what}",
        summary=f"argparse refused `{event.message}` and the server never started. "
        + (
            f"{flag} is a letter or two from {meant}, a flag vLLM has."
            if meant
            else f"{flag} is none of the flags of vLLM 0.32's engine and front-end arguments: a flag of another "
            "server or of an older release, or one a launch generator (an operator, a chart) adds to every server."
            + (f" {hint}." if hint else "")
        ),
        evidence=[c.log_evidence(event, name="argument refused", value=flag)],
        changes=[]
        if meant
        else [
            ConfigChange(
                flag=flag,
                current=None,
                proposed="",
                reason="vLLM does not take it; argparse refuses the whole command for it",
            )
        ],
        actions=[f"Spell it {meant}, with the same value: vLLM's flag for what {flag} meant."]
        if meant
        else [f"Remove {flag} from the command (or from the template that generates it)."],
        confidence=0.85 if meant else 0.8,
    )


RULE_UNRECOGNIZED = Rule(
    code="OP-7.20",
    title="vLLM's command line refused its arguments",
    category=Category.STARTUP,
    check=_check_unrecognized,
    needs=("events",),
    page=RulePage(
        checks="argparse's `error: unrecognized arguments: …` from `vllm serve`, the api_server module or a "
        "wrapper's parser.",
        why="One argument vLLM does not take refuses the whole command; whether the arguments start with a program "
        "or with a flag says whether the container's entrypoint or the flag is wrong.",
        example="`vllm: error: unrecognized arguments: --enable-metrics` from an operator's generated command; "
        "vLLM serves /metrics without it (defilantech/LLMKube#1030).",
        fix="Remove the flag or spell it as vLLM does; give the image only the server's arguments, or "
        "`--entrypoint` to run another command.",
        limits="Knows vLLM 0.32's flags: a flag an older release took and 0.32 dropped reads as unknown (the "
        "finding says 'or of an older release').",
        references=[
            "https://github.com/defilantech/LLMKube/issues/1030",
            "https://github.com/opea-project/GenAIComps/issues/336",
        ],
    ),
)

RULES: list[Rule] = [RULE_UNRECOGNIZED]
