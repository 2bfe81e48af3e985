"""vLLM's log wording, every version, as regexes that fill `rules.events.LogEvent` fields.

Kept apart from the reader (logs.py) because this is the part that grows with each vLLM
release: one `Pattern` per wording (pattern.py: what a wording is, the number conversions),
in one module per family of lines: startup (version, arguments, sizing), stats (periodic
lines), startup_failures, runtime_failures, request_errors, environment (failures around
vLLM), toolchain (the CUDA compiler, libraries and PyTorch build under it), between (gateways,
proxies and health checks between the client and vLLM), benchmark (what vLLM's benchmark script
prints), profile (a profiler's rows) and alerting (an Alertmanager notification of servops's own
alerts). `PATTERNS` is their tables in that order, and `candidates` the keyword prefilter over it.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns import (
    alerting,
    benchmark,
    between,
    environment,
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
    *profile.PATTERNS,
    *alerting.PATTERNS,
)


# One pass over a line finds which wordings can possibly match: most lines of a busy server's log
# (access lines, request logs) contain none of the keys and cost one regex search, not one per wording.
_BY_KEY: dict[str, list[int]] = {}
for _index, _pattern in enumerate(PATTERNS):
    for _key in _pattern.keys:
        _BY_KEY.setdefault(_key, []).append(_index)
_TRIGGER = re.compile("|".join(re.escape(key) for key in sorted(_BY_KEY, key=len, reverse=True)))


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
