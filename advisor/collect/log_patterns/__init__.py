"""vLLM's log wording, every version, as regexes that fill `rules.events.LogEvent` fields.

Kept apart from the reader (logs.py) because this is the part that grows with each vLLM
release: one `Pattern` per wording (pattern.py: what a wording is, the number conversions),
in one module per family of lines: startup (version, arguments, sizing), stats (periodic
lines), startup_failures, runtime_failures, request_errors, environment (failures around
vLLM), toolchain (the CUDA compiler, libraries and PyTorch build under it), between (gateways,
proxies and health checks between the client and vLLM), benchmark (what vLLM's benchmark script
prints), offline (the offline `LLM` class's progress bar), profile (a profiler's rows) and
alerting (an Alertmanager notification of servops's own alerts). `PATTERNS` is their tables in
that order, and `candidates` the keyword prefilter over it.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns import (
    alerting,
    benchmark,
    between,
    environment,
    offline,
    profile,
    request_errors,
    runtime_failures,
    startup,
    startup_failures,
    stats,
    toolchain,
)
from advisor.collect.log_patterns.pattern import Pattern

# Order matters only where one wording contains another: the first match of a line wins.
PATTERNS: tuple[Pattern, ...] = (
    *startup.PATTERNS,
    *stats.PATTERNS,
    *startup_failures.PATTERNS,
    *runtime_failures.PATTERNS,
    *request_errors.PATTERNS,
    *environment.PATTERNS,
    *toolchain.PATTERNS,
    *between.PATTERNS,
    *benchmark.PATTERNS,
    *offline.PATTERNS,
    *profile.PATTERNS,
    *alerting.PATTERNS,
)


# One pass over a line finds which wordings can possibly match: most lines of a busy server's log
# (access lines, request logs) contain none of the keys and cost one regex search, not one per wording.
_BY_KEY: dict[str, list[int]] = {}
for _index, _pattern in enumerate(PATTERNS):
    for _key in _pattern.keys:
        _BY_KEY.setdefault(_key, []).append(_index)


def trigger(keys: list[str]) -> re.Pattern[str]:
    """A regex that finds a line holding any of `keys`, written as the keys' prefix tree.

    Why a tree and not `a|b|c…`: Python's regex engine tries a flat alternation's branches one by one at every
    position of the line, so its cost grows with the number of keys (365 of them); the tree shares their common
    prefixes and tries one branch per character. Only whether some key is in the line is asked, so a key that
    extends another (`CUDA out of memory occurred` beyond `CUDA out of memory`) adds nothing and is left out.
    """
    tree: dict[str, dict] = {}
    for key in keys:
        node = tree
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}  # a key ends here

    def branch(node: dict[str, dict]) -> str:
        if "" in node:
            return ""
        arms = [re.escape(char) + branch(child) for char, child in sorted(node.items())]
        return arms[0] if len(arms) == 1 else "(?:" + "|".join(arms) + ")"

    return re.compile(branch(tree))


_TRIGGER = trigger(list(_BY_KEY))


def candidates(message: str) -> list[Pattern]:
    """The patterns worth trying on `message`, in table order (first match wins).

    One combined search rejects the common line; for the rest, plain substring tests (keys can
    overlap in one line, e.g. "CUDA out of memory occurred when warming up", which a single
    non-overlapping scan would miss).
    """
    if _TRIGGER.search(message) is None:
        return []
    found = {index for key, indexes in _BY_KEY.items() if key in message for index in indexes}
    return [PATTERNS[index] for index in sorted(found)]
