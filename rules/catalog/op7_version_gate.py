"""OP-7.168: the program that runs vLLM checks vLLM's version itself and refuses the one installed.

Why a rule of its own: frameworks that reach into vLLM's internals pin the releases they were written against and say
so before anything runs: verl's early releases carried their own adapters for a few vLLM versions (its
third_party/vllm package: `vllm version 0.11.0 not supported. Currently supported versions are 0.3.1, 0.4.2, 0.5.4 and
0.6.3.`, PeterGriffinJin/Search-R1#173, a project built on that verl). The words name the supported releases, so the
fix is one of them, or a release of the framework made for the vLLM installed; vLLM itself is not at fault.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_RELEASE = r"[\w+-]+(?:\.[\w+-]+)*"  # a version without the sentence's full stop
VERSION_GATE = re.compile(
    rf"vllm version (?P<installed>{_RELEASE}) (?:is )?not supported\.? (?:Currently )?supported versions are "
    rf"(?P<supported>{_RELEASE}(?:(?:,| and|, and) {_RELEASE})*)",
    re.IGNORECASE,
)


def _newest(supported: str) -> str:
    """The last release of the framework's list (`0.3.1, 0.4.2, 0.5.4 and 0.6.3` → 0.6.3)."""
    return re.split(r",\s*|\s+and\s+", supported)[-1].strip()


def _gate_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    installed, supported = match["installed"], match["supported"]
    return RULE.finding(
        Severity.CRITICAL,
        f"the program running vLLM accepts only vLLM {supported}, and vLLM {installed} is installed",
        summary="The framework around vLLM (verl's early releases, and projects built on them, carry code written "
        "for a few vLLM releases) checked the installed version before starting and refused it. Nothing in vLLM's "
        "flags changes this: the pair of versions does.",
        evidence=[c.log_evidence(event, name="versions the framework accepts", value=supported)],
        actions=[
            f"Install a vLLM it accepts: `pip install vllm=={_newest(supported)}` (the last it lists), with the torch "
            "that release pins, in an environment of its own.",
            f"Or move to a release of the framework made for vLLM {installed} (its README or changelog says which vLLM "
            "each release supports; verl's later releases drive current vLLM without its own adapters).",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.168",
    title="the program running vLLM refuses the installed vLLM release",
    category=Category.STARTUP,
    check=c.on_phrase(VERSION_GATE, _gate_finding),
    needs=("events",),
    page=RulePage(
        checks="A framework's own version check: `vllm version X not supported. Currently supported versions are A, "
        "B and C.`",
        why="A framework written against vLLM's internals works only with the releases it lists; the message names "
        "them.",
        example="`ValueError: vllm version 0.11.0 not supported. Currently supported versions are 0.3.1, 0.4.2, 0.5.4 "
        "and 0.6.3.` from verl's bundled adapters (PeterGriffinJin/Search-R1#173).",
        fix="A vLLM the framework lists, or a framework release made for the installed vLLM.",
        limits="Reads the framework's words; which framework it is comes from the traceback's frames, when pasted.",
        references=["https://github.com/PeterGriffinJin/Search-R1/issues/173"],
    ),
)

RULES: list[Rule] = [RULE]
