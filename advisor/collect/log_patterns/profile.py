"""What a profiler of a vLLM process prints, pasted in a performance report: `py-spy top` rows (`%Own %Total
OwnTime TotalTime Function (filename)`).

Why read: a person who profiles the engine has already found where its time goes; the row on top names the
function and its share, which the stats lines cannot (vllm#9113: 88% in `apply_penalties`).
"""

from __future__ import annotations

from advisor.collect.log_patterns.pattern import Pattern, to_float, wording
from rules.events import LogEventKind as K

PATTERNS: tuple[Pattern, ...] = (
    wording(
        (".py)",),
        K.PROFILE_HOTSPOT,
        r"^\s*(?P<own>\d+(?:\.\d+)?)%\s+(?P<total>\d+(?:\.\d+)?)%\s+[\d.]+s\s+[\d.]+s\s+(?P<function>[\w.<>]+) "
        r"\((?P<file>[^)]+\.py)\)\s*$",
        lambda m: {"function": m["function"], "code_file": m["file"], "own_share": to_float(m["own"]) / 100},
    ),
)
