"""OP-7.139: a Python older than the code it runs: a subscripted built-in type at import.

Why a rule of its own: `list[int]`, `dict[str, Any]` or `asyncio.Task[Any]` in an annotation evaluated at import
needs Python 3.9 (PEP 585, built-in generics); an older interpreter stops with `TypeError: 'type' object is not
subscriptable` before anything runs. vllm#4617: vLLM 0.4.2's OpenAI server declared `_running_tasks:
Set[asyncio.Task[Any]]` at module level and failed at import on Python 3.8, which that release still listed; 3.10
ran it. Every vLLM release states the Pythons it takes (Requires-Python in its METADATA: 0.32 takes 3.11 to 3.14).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NOT_SUBSCRIPTABLE = re.compile(r"TypeError: 'type' object is not subscriptable")


def _python_version_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "a built-in type was subscripted (list[int], asyncio.Task[Any]) by a Python older than the code: such "
        "generics need Python 3.9 or later",
        summary="Code written for Python 3.9+ writes generics with the built-in types (PEP 585); evaluated at "
        "import by Python 3.8 or older they fail before anything runs. The interpreter, not the code or a "
        "setting, is to change.",
        evidence=[c.log_evidence(event, name="Python's refusal", value=match.group(0))],
        actions=[
            "Run vLLM with a Python its release lists: `pip show vllm` (Requires-Python) or its PyPI page; "
            "vLLM 0.32 takes 3.11 to 3.14. vllm#4617: 0.4.2 failed at import on 3.8 and ran on 3.10.",
            "`python -V` in the environment that starts the server (a container's or a virtualenv's Python, "
            "not the shell's) shows which one runs it.",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-7.139",
    title="a Python older than the code it runs (subscripted built-in types)",
    category=Category.STARTUP,
    check=c.on_phrase(NOT_SUBSCRIPTABLE, _python_version_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `TypeError: 'type' object is not subscriptable`.",
        why="Built-in generics (PEP 585) need Python 3.9; an older interpreter stops at import.",
        example="vLLM 0.4.2's OpenAI server on Python 3.8: `Set[asyncio.Task[Any]]` at module level (vllm#4617).",
        fix="A Python the vLLM release lists (Requires-Python); 3.10 ran 0.4.2.",
        limits="The same words come from code that subscripts a class that is not generic on any Python; its "
        "traceback, when pasted, shows the expression.",
        references=["https://github.com/vllm-project/vllm/issues/4617", "https://peps.python.org/pep-0585/"],
    ),
)

RULES: list[Rule] = [RULE]
