"""Log collector throughput: the keyword prefilter vs trying every wording on every line.

Run: `.venv/bin/python benchmarks/log_parse.py [--lines N]`. The log is synthetic but made of
real vLLM line shapes (docs/reference.md §2): per 17 lines, 8 uvicorn access lines, 8 request-log
lines and 1 periodic stats line, plus the startup lines of tests/fixtures/vllm once. Baseline in
the same run: the same messages matched against every wording in table order (what the reader
did before the prefilter). Both must find the same events; the script checks that.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from advisor.collect.log_patterns import PATTERNS, candidates
from advisor.collect.logs import parse_lines

ROOT = Path(__file__).resolve().parents[1]
STATS = (
    "(APIServer pid=9) INFO 01-01 00:00:10 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
    "Avg generation throughput: 2.0 tokens/s, Running: 32 reqs, Waiting: 5 reqs, Preemptions: 7, "
    "GPU KV cache usage: 99.1%, Prefix cache hit rate: 3.0%"
)
ACCESS = 'INFO:     10.0.0.1:48927 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
REQUEST = (
    "(APIServer pid=9) INFO 01-01 00:00:10 [logger.py:1] Received request chatcmpl-abc: prompt: "
    "'hello there how are you', params: SamplingParams(n=1, temperature=0.7)"
)


def synthetic_log(lines: int) -> list[str]:
    startup = [
        line for path in sorted((ROOT / "tests/fixtures/vllm").glob("*.log")) for line in path.read_text().splitlines()
    ]
    block = [ACCESS] * 8 + [REQUEST] * 8 + [STATS]
    return startup + block * (lines // len(block))


def every_pattern(message: str):
    for pattern in PATTERNS:
        if pattern.regex.search(message):
            return pattern.kind
    return None


def prefiltered(message: str):
    for pattern in candidates(message):
        if pattern.regex.search(message):
            return pattern.kind
    return None


def timed(function, items) -> tuple[float, list]:
    started = time.perf_counter()
    results = [function(item) for item in items]
    return time.perf_counter() - started, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=102_000, help="synthetic log length (default 102000)")
    args = parser.parse_args()
    lines = synthetic_log(args.lines)
    baseline_s, baseline = timed(every_pattern, lines)
    ours_s, ours = timed(prefiltered, lines)
    assert baseline == ours, "the prefilter changed which wording matched"
    started = time.perf_counter()
    result = parse_lines(lines)
    reader_s = time.perf_counter() - started
    print(f"lines: {len(lines):,}")
    print(f"matching, every wording (baseline): {len(lines) / baseline_s:,.0f} lines/s")
    print(f"matching, keyword prefilter:        {len(lines) / ours_s:,.0f} lines/s")
    print(f"ratio prefilter / baseline:         {baseline_s / ours_s:.1f}x")
    print(
        f"whole reader (prefixes, headers, events): {len(lines) / reader_s:,.0f} lines/s, {len(result.events):,} events"
    )


if __name__ == "__main__":
    main()
