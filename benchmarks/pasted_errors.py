"""How triage reads error lines people pasted in public threads, each alone, on first contact.

Why: the incident corpus (incident_corpus.py) judges a top finding against a thread's confirmed diagnosis, but each
case took hours to collect and most were read after rules were written for them. This probe asks something smaller
of many more lines, none of them tuned for when collected: error lines copied verbatim from public issue threads
(vLLM's and projects that run it, each with its URL) by helper sessions that never saw this code, every one triaged
alone. A probe is a JSON Lines file (url, line, cut, context): the first, 80 lines, is
tests/fixtures/pasted_errors.jsonl; the second to sixth, 100 lines each, pasted_errors_second.jsonl,
pasted_errors_third.jsonl, pasted_errors_fourth.jsonl, pasted_errors_fifth.jsonl and pasted_errors_sixth.jsonl beside
it; the seventh, 57 lines (its collectors found no more unused threads in time), pasted_errors_seventh.jsonl; the
eighth, 60 lines from the two of its four collectors that added any, pasted_errors_eighth.jsonl; the ninth, 114 lines
(30 from three collectors, 24 from the fourth), pasted_errors_ninth.jsonl. A line is
answered *specifically* when its top finding is a rule that reads its cause (OP-*, HL-*, VC-1's own check, VC-5's
logged failure), *generically* when only VC-2 or VC-4 name the error without a cause, or not at all. It measures
reach, not correctness: no thread's diagnosis is checked here. A probe's first-contact figure is the one taken with
the code as it was when its lines were collected (`--baseline` at that commit); rules written after reading them
make every later figure an after-the-fact one.

    .venv/bin/python benchmarks/pasted_errors.py                     # the first probe, this checkout
    .venv/bin/python benchmarks/pasted_errors.py --baseline 3be497f  # and at that commit, same run
    .venv/bin/python benchmarks/pasted_errors.py --lines tests/fixtures/pasted_errors_second.jsonl --baseline e0bf943
    .venv/bin/python benchmarks/pasted_errors.py --lines tests/fixtures/pasted_errors_fifth.jsonl --baseline 5a45d6f
    .venv/bin/python benchmarks/pasted_errors.py --lines tests/fixtures/pasted_errors_sixth.jsonl --baseline b757b76
    .venv/bin/python benchmarks/pasted_errors.py --lines tests/fixtures/pasted_errors_eighth.jsonl --baseline 9d88982
    .venv/bin/python benchmarks/pasted_errors.py --lines tests/fixtures/pasted_errors_ninth.jsonl --baseline d0039aa
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

try:  # run as a script: this folder is on sys.path
    from baseline_tree import at_revision
    from catalog_alone import top_rules
except ImportError:  # imported as benchmarks.pasted_errors
    from benchmarks.baseline_tree import at_revision
    from benchmarks.catalog_alone import top_rules

ROOT = Path(__file__).resolve().parents[1]
LINES = ROOT / "tests" / "fixtures" / "pasted_errors.jsonl"
GENERIC = frozenset({"VC-2", "VC-4"})  # the error named, its cause not read


def pasted(path: Path | str = LINES) -> list[dict]:
    """The probe's lines: url, line (verbatim), cut (the source cut it), context (the collector's words)."""
    return [json.loads(row) for row in Path(path).read_text(encoding="utf-8").splitlines() if row.strip()]


def reading(rule: str | None) -> str:
    return "none" if rule is None else "generic" if rule in GENERIC else "specific"


def _baseline(revision: str, path: Path) -> list[str | None]:
    statement = "from pasted_errors import pasted, top_rules; "
    statement += f"print(json.dumps(top_rules([row['line'] for row in pasted({str(path.resolve())!r})])))"
    return at_revision(revision, statement)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="also read the same lines with the code at this commit")
    parser.add_argument(
        "--lines",
        metavar="FILE",
        type=Path,
        default=LINES,
        help="the JSON Lines file of pasted lines (default: the first probe's 80, tests/fixtures/pasted_errors.jsonl; "
        "the later probes' are pasted_errors_second.jsonl, _third and so on to _seventysixth.jsonl beside it)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list every line with its top rule")
    args = parser.parse_args(argv)
    try:
        rows = pasted(args.lines)
        if not rows or not all(isinstance(row, dict) and isinstance(row.get("line"), str) for row in rows):
            raise ValueError('each row must be a JSON object with a "line" string')
    except (OSError, ValueError) as error:  # JSONDecodeError is a ValueError
        print(f"pasted_errors: --lines {args.lines}: {error}; give a JSON Lines file of probe rows", file=sys.stderr)
        return 2
    before = _baseline(args.baseline, args.lines) if args.baseline else None  # first: a wrong REV fails at once
    now = top_rules([row["line"] for row in rows])
    counts = Counter(reading(rule) for rule in now)
    print("| reading | lines" + (f" | at {args.baseline} |" if before else " |"))
    print("|---|---:" + ("|---:|" if before else "|"))
    earlier = Counter(reading(rule) for rule in before) if before else Counter()
    for kind in ("specific", "generic", "none"):
        print(f"| {kind} | {counts[kind]}" + (f" | {earlier[kind]} |" if before else " |"))
    summary = f"\n{len(rows)} pasted error lines read specifically: {counts['specific']}/{len(rows)}"
    if before is not None:
        summary += f"; at {args.baseline}: {earlier['specific']}/{len(rows)}"
    print(summary)
    if args.verbose:
        for index, (row, rule) in enumerate(zip(rows, now, strict=True)):
            was = f" (was {before[index] or '-'})" if before and before[index] != rule else ""
            print(f"  {rule or '-':8} {reading(rule):8}{was} {row['line'][:110]}  <{row['url']}>")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
