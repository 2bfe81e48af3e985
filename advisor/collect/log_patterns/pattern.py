"""What one log wording is, how to declare it, and how its numbers become event fields.

Shared by every family module of the package: a `Pattern` is matched against the message text
only (never the `[file.py:NNN]` location or the `(EngineCore_DP0 pid=…)` prefix, which change
between releases and processes). Numbers are normalised as the events contract asks: comma
thousands removed, percentages turned into fractions 0–1, GiB as floats.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rules.events import LogEventKind as K

Fields = dict[str, object]
# A wording's fields may be None: the words matched but the match says something else here (a client's connection
# error to a host that is no server of the user's), so the line is left to the next wording or to the catalog.

NUM = r"-?[\d,]*\.?\d+"  # 162,704 · 24.0 · 3.18 · -1.44
# What a shell prints before the name of the signal that killed a child: a job's `[1]+  `, or a script's
# `/entrypoint.sh: line 5:    42 ` (its pid); nothing at all for a command run in the foreground. Two families read
# it: the shell's `Killed` (environment) and its `Segmentation fault (core dumped)` (runtime_failures).
SHELL_JOB = r"^(?:\[\d+\][+-]?\s+|\S+: line \d+:\s+\d+\s+)?"


def to_int(text: str | None) -> int | None:
    return int(float(text.replace(",", ""))) if text else None


def to_float(text: str | None) -> float | None:
    return float(text.replace(",", "")) if text else None


def to_gib(amount: str | None, unit: str | None) -> float | None:
    """`2.00 MiB` → 0.00195…; vLLM and torch print GiB, MiB or KiB (and 0.8.0 'GB'); XLA prints binary units as a
    bare letter (`6.14G`, `530.00M`, `1.7K`, `0B`)."""
    if amount is None:
        return None
    scale = {"GiB": 1.0, "GB": 1.0, "G": 1.0, "MiB": 1 / 1024, "M": 1 / 1024, "KiB": 1 / 1024**2, "K": 1 / 1024**2}
    scale |= {"B": 1 / 1024**3}
    return to_float(amount) * scale.get(unit or "GiB", 1.0)


@dataclass(frozen=True, slots=True)
class Pattern:
    """One wording of one event kind, and how its groups become event fields."""

    kind: K
    regex: re.Pattern[str]
    fields: Callable[[re.Match[str]], Fields | None]
    keys: tuple[str, ...] = ()


def wording(
    keys: tuple[str, ...], kind: K, pattern: str, fields: Callable[[re.Match[str]], Fields | None] = lambda m: {}
) -> Pattern:
    """`keys`: literal texts one of which every line of this wording contains (the prefilter)."""
    return Pattern(kind, re.compile(pattern), fields, keys)
