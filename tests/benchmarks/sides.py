"""How a benchmark here names its side: every group holds a named baseline and the project's candidate.

A test is parametrized over side ids `baseline-<what>` and `servops-<what>` (so the benchmark
names read `test_log_match[baseline-every-wording]` / `[servops-prefilter]`), and calls
`record_side` before timing; conftest.py reads the role back from `extra_info` to print
baseline mean / candidate mean per group at the end of a `make bench` run.
"""

from __future__ import annotations

BASELINE, CANDIDATE = "baseline", "servops"


def record_side(benchmark, side: str) -> str:
    """Store the side's role and name on the benchmark; returns the name (`side` without the role)."""
    role, _, name = side.partition("-")
    if role not in (BASELINE, CANDIDATE) or not name:
        raise ValueError(f"side id {side!r} must read 'baseline-<name>' or 'servops-<name>'")
    benchmark.extra_info.update(role=role, side=name)
    return name
