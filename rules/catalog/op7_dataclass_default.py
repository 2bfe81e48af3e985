"""OP-7.214: Python refused a dataclass whose field has a mutable default, at import.

Why a rule of its own: `ValueError: mutable default <class 'list'> for field ignore_patterns is not allowed: use
default_factory` is raised by Python's dataclasses while a module is imported, before any model loads, and names a
field but not the package. Python has refused list, dict and set defaults since dataclasses came (3.7), so for those
the package that declares the field has the bug on every Python: eosphoros-ai/DB-GPT PR #2025 fixed its vLLM
parameter class, whose `ignore_patterns` defaulted to a list. From 3.11 Python
refuses any unhashable default (its dataclasses documentation, "Changed in version 3.11"), so a default of another
class (a config object, a SamplingParams) is a package written before 3.11 running on it.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

MUTABLE_DEFAULT = re.compile(
    r"mutable default <class '(?P<cls>[\w.]+)'> for field (?P<field>\w+) is not allowed: use default_factory"
)
# The defaults Python has refused since 3.7, on every release
_ALWAYS_REFUSED = frozenset({"list", "dict", "set"})


def _default_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    cls, field = found["cls"], found["field"]
    always = cls in _ALWAYS_REFUSED
    return RULE.finding(
        Severity.CRITICAL,
        f"a dataclass declares field {field} with a mutable {cls} default: Python refuses it at import"
        + ("" if always else " (from 3.11)"),
        summary=(
            f"Python's dataclasses refuse a {cls} as a field's default on every release, so the package that "
            "declares the field has the bug (eosphoros-ai/DB-GPT PR #2025: its vLLM parameter class defaulted "
            "ignore_patterns to a list)."
            if always
            else f"From Python 3.11, dataclasses refuse any unhashable default, a {cls} among them; a package "
            "written before 3.11 that used one fails to import on it."
        )
        + " The module fails while it is imported, before any model loads; the traceback's last frame names the "
        "file that declares the field.",
        evidence=[c.log_evidence(event, name="refused default", value=f"{field}: {cls}")],
        actions=[
            "Upgrade the package whose file declares the field (the traceback's last frame): its fix makes the "
            "default a default_factory; until one is out, a release from before the field had that default"
            + ("." if always else ", or run it on Python 3.10."),
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.214",
    title="a dataclass field with a mutable default, refused by Python at import",
    category=Category.STARTUP,
    check=c.on_phrase(MUTABLE_DEFAULT, _default_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="Python's `ValueError: mutable default <class 'X'> for field F is not allowed: use default_factory`.",
        why="It names a field, not the package, and stops the import before vLLM does anything; list, dict and set "
        "defaults are a package's bug on any Python, other unhashable ones a package written before Python 3.11.",
        example="`ValueError: mutable default <class 'list'> for field ignore_patterns is not allowed: use "
        "default_factory` starting DB-GPT with its vLLM backend (eosphoros-ai/DB-GPT PR #2025).",
        fix="Upgrade the package that declares the field; for a non-list default, Python 3.10 meanwhile.",
        limits="The package is in the traceback's frames, not in the line.",
        references=[
            "https://github.com/eosphoros-ai/DB-GPT/pull/2025",
            "https://docs.python.org/3/library/dataclasses.html#mutable-default-values",
        ],
    ),
)

RULES: list[Rule] = [RULE]
