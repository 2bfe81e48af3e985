"""The ratio table of a `make bench` run: per group, baseline mean / candidate mean.

pytest-benchmark prints its own table of times; this adds, after it, one line per (baseline,
candidate) pair of a group (sides named as tests/benchmarks/sides.py says), and writes the
same rows into the `--benchmark-json` document under "servops_ratios". A ratio above 1 means
the candidate took less time than the baseline on the same input in the same run. Under the
default configuration (`--benchmark-disable`) nothing is timed and nothing extra is printed.
"""

from __future__ import annotations

import pytest

from tests.benchmarks.sides import BASELINE, CANDIDATE


def ratio_rows(benchmarks) -> list[dict]:
    """One row per baseline x candidate of each group, from pytest-benchmark's results."""
    groups: dict[str, dict[str, list]] = {}
    for bench in benchmarks:
        role = bench.extra_info.get("role")
        if role in (BASELINE, CANDIDATE) and bench.stats and bench.stats.rounds:
            groups.setdefault(bench.group or bench.name, {}).setdefault(role, []).append(bench)
    rows = []
    for group, sides in sorted(groups.items()):
        for base in sides.get(BASELINE, []):
            for cand in sides.get(CANDIDATE, []):
                rows.append(
                    {
                        "group": group,
                        "baseline": base.extra_info["side"],
                        "baseline_mean_s": base.stats.mean,
                        "candidate": cand.extra_info["side"],
                        "candidate_mean_s": cand.stats.mean,
                        "ratio_mean": base.stats.mean / cand.stats.mean,
                        "ratio_min": base.stats.min / cand.stats.min,
                    }
                )
    return rows


def _seconds(value: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def _session(config):
    session = getattr(config, "_benchmarksession", None)
    return None if session is None or session.disabled else session


@pytest.hookimpl(trylast=True)  # after pytest-benchmark's own table
def pytest_terminal_summary(terminalreporter, config):
    session = _session(config)
    rows = ratio_rows(session.benchmarks) if session else []
    if not rows:
        return
    header = ("group", "baseline", "mean", "servops", "mean", "base/servops (mean)", "(min)")
    table = [header] + [
        (
            r["group"],
            r["baseline"],
            _seconds(r["baseline_mean_s"]),
            r["candidate"],
            _seconds(r["candidate_mean_s"]),
            f"{r['ratio_mean']:.2f}x",
            f"{r['ratio_min']:.2f}x",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    terminalreporter.write_sep("-", "baseline / servops, same input, same run (> 1: servops faster)")
    for row in table:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        terminalreporter.write_line("  ".join(cells).rstrip())


def pytest_benchmark_update_json(config, benchmarks, output_json):
    session = _session(config)
    if session:
        output_json["servops_ratios"] = ratio_rows(session.benchmarks)
