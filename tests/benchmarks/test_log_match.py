"""The log collector's keyword prefilter vs trying every vLLM wording on every line.

The same matchers and synthetic log as benchmarks/log_parse.py (whose figure BENCHMARKS.md
quotes), on a shorter log: the startup lines of tests/fixtures/vllm once, then blocks of 8
uvicorn access lines, 8 request-log lines and 1 stats line. Baseline: every wording in table
order, as the reader matched before the prefilter. Both sides must find the same wording on
every line.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import pytest

from tests.benchmarks.sides import record_side

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "log_parse.py"
LINES = 3_400  # 168 fixture lines + 200 blocks of 17: ~80 ms a round for the baseline on the 2-core box


@functools.cache
def _script():
    spec = importlib.util.spec_from_file_location("servops_bench_log_parse", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def _log() -> tuple[str, ...]:
    return tuple(_script().synthetic_log(LINES))


def _match_all(side: str, lines) -> list:
    match = {"every-wording": _script().every_pattern, "prefilter": _script().prefiltered}[side]
    return [match(line) for line in lines]


@pytest.mark.benchmark(group="log-match")
@pytest.mark.parametrize("side", ["baseline-every-wording", "servops-prefilter"])
def test_log_match(benchmark, side):
    name = record_side(benchmark, side)
    lines = _log()
    result = benchmark(_match_all, name, lines)
    other = _match_all("prefilter" if name == "every-wording" else "every-wording", lines)
    assert result == other, "the prefilter changed which wording matched"
    assert sum(kind is not None for kind in result) > LINES // 17  # every stats line at least
