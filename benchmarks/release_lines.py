"""How many of vLLM's fact-bearing lines, across releases 0.2.7 to 0.34, the log reader reads as the fact they state.

Why: on call, the server in front of you is whatever release it is, and triage can only reason about the facts it
read: a V0 log whose engine line, memory profile or hit-rate line goes unread is answered as if it were a newer
server (vLLM 0.5 offered V1's `--max-num-seqs` remedy, cited V1's file). `tests/fixtures/release_lines.json` holds one
line per wording and release, from each release's own format string; a line counts as read when the reader turns it
into every event kind its fact belongs to (`reads_as`, decided from what the line says).

    .venv/bin/python benchmarks/release_lines.py                    # this checkout
    .venv/bin/python benchmarks/release_lines.py --baseline 0edc0e4 # and the reader at that commit, same run

The baseline runs this script's reading in a temporary `git worktree` of the commit (its own `advisor` package on
PYTHONPATH), so both figures come from the same machine and the same fixture.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

try:  # run as a script: this folder is on sys.path
    from baseline_tree import at_revision
except ImportError:  # imported by the tests, as benchmarks.release_lines
    from benchmarks.baseline_tree import at_revision

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "release_lines.json"


def load_lines(path: Path = FIXTURE) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["lines"]


def read_kinds(lines: list[str]) -> set[str]:
    """The event kinds the reader of the importable `advisor` makes of one fixture entry's lines."""
    from advisor.collect.logs import parse_lines

    return {event.kind.value for event in parse_lines(lines).events}


def verdicts(entries: list[dict]) -> list[bool]:
    """Per entry: every kind its fact belongs to was read."""
    return [set(entry["reads_as"]) <= read_kinds(entry["lines"]) for entry in entries]


def _baseline(revision: str) -> list[bool]:
    """This fixture read by the reader at `revision`, in a temporary worktree of this repository."""
    return at_revision(
        revision, "from release_lines import load_lines, verdicts; print(json.dumps(verdicts(load_lines())))"
    )


def _table(entries: list[dict], now: list[bool], before: list[bool] | None) -> str:
    groups: dict[str, list[int]] = defaultdict(list)
    for index, entry in enumerate(entries):
        groups[entry["fact"]].append(index)
    head = "| fact | lines | read" + (" | read at baseline |" if before else " |")
    rows = [head, "|---|---:|---:" + ("|---:|" if before else "|")]
    for fact, indices in groups.items():
        row = f"| {fact} | {len(indices)} | {sum(now[i] for i in indices)}"
        rows.append(row + (f" | {sum(before[i] for i in indices)} |" if before else " |"))
    total = f"| **all** | {len(entries)} | **{sum(now)}**"
    rows.append(total + (f" | {sum(before)} |" if before else " |"))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="also read the fixture with the reader at this commit")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every line not read")
    args = parser.parse_args(argv)
    entries = load_lines()
    now = verdicts(entries)
    before = _baseline(args.baseline) if args.baseline else None
    print(_table(entries, now, before))
    summary = f"\nread as the fact they state: {sum(now)}/{len(entries)}"
    if before is not None:
        ratio = sum(now) / max(1, sum(before))
        summary += f"; at {args.baseline}: {sum(before)}/{len(entries)} ({ratio:.2f}x)"
    print(summary)
    if args.verbose:
        for entry, read in zip(entries, now, strict=True):
            if not read:
                where = f"{entry['releases']}, {entry['source']}"
                print(f"  not read: {entry['fact']} ({where}): {entry['lines'][0][:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
