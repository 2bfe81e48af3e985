"""How many of one vLLM release's own messages, each pasted alone as vLLM prints it, triage answers with a finding.

Why: an on-call engineer often pastes one line, and vLLM's message catalog (advisor/catalog/vllm_messages.json) holds
every message a release raises, asserts, logs at warning and above or answers as an HTTP error. Each is written here
as the line a person would copy: a raised or asserted message as `Class: words`, a logged one behind vLLM's log
header at its level (with the file it is logged in), an HTTP answer as vLLM's JSON error body; its fields are
filled with a placeholder. The figure is the share whose top finding exists, by kind, and which rules answer.
A logged warning that names nothing to change and says nothing failed is advice: "no finding" is its right answer,
so the warning row is read against its failing words too. A wordless assert (kind `check`) is pasted as the source
line a traceback prints above its bare AssertionError.

    .venv/bin/python benchmarks/catalog_alone.py                     # vLLM 0.32's messages, this checkout
    .venv/bin/python benchmarks/catalog_alone.py --baseline 8099df9  # and at that commit, same run
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

try:  # run as a script: this folder is on sys.path
    from baseline_tree import at_revision
except ImportError:  # imported as benchmarks.catalog_alone
    from benchmarks.baseline_tree import at_revision

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "advisor" / "catalog" / "vllm_messages.json"
DEFAULT_RELEASE = "0.32"
PLACEHOLDER = "x7"  # a field's value: a word and a number, as most of vLLM's fields are
_FIELD = re.compile(r"\{[^{}]*\}")
_LEVEL_HEADER = {"exception": "ERROR", "critical": "CRITICAL", "error": "ERROR", "warning": "WARNING"}


def pasted_lines(release: str = DEFAULT_RELEASE) -> list[tuple[dict, str]]:
    """(catalog entry, line) for every message the release prints, as a person would paste it."""
    pasted = []
    for entry in json.loads(CATALOG.read_text(encoding="utf-8"))["messages"]:
        if release not in entry["versions"]:
            continue
        words = _FIELD.sub(PLACEHOLDER, entry["message"]).split("\n")[0]
        kind = entry["kind"]
        if kind == "check":  # a wordless assert: its statement as a traceback's source line, braces and all
            line = f"    {entry['message']}"
        elif kind in ("raise", "assert"):
            line = f"{entry.get('exception') or 'AssertionError'}: {words}"
        elif kind == "log":
            header = _LEVEL_HEADER.get(entry.get("level") or "warning", "WARNING")
            where = f"{entry['file'].rsplit('/', 1)[-1]}:{entry['line']}"
            line = f"(APIServer pid=1) {header} 12-01 10:00:00 [{where}] {words}"
        else:
            line = json.dumps({"object": "error", "message": words, "type": "BadRequestError", "code": 400})
        pasted.append((entry, line))
    return pasted


def row_of(entry: dict) -> str:
    """The table's row: the message's kind, a logged one's level, and for a warning whether its words say something
    failed (the words VC-4 and VC-5 read as a failure report, rules/events.py) or only advise. Imported here, not at
    the top: a baseline from before that constant imports this module for its lines only."""
    from rules.events import FAILURE_WORDS

    if entry["kind"] != "log":
        return entry["kind"]
    level = entry.get("level") or "warning"
    if level != "warning":
        return f"log {level}"
    return "log warning, " + ("failing words" if FAILURE_WORDS.search(entry["message"]) else "advice")


def top_rules(lines: list[str]) -> list[str | None]:
    """The top finding's rule for each line alone, with the importable `advisor` and `rules`."""
    from advisor.collect.logs import parse_lines
    from rules.evaluate import evaluate
    from rules.facts import Facts

    tops = []
    for line in lines:
        findings = evaluate(Facts(events=parse_lines([line]).events)).findings
        tops.append(findings[0].rule if findings else None)
    return tops


def _baseline(revision: str, release: str) -> list[str | None]:
    """The same lines (this checkout's catalog) answered by the code at `revision`."""
    statement = "from catalog_alone import pasted_lines, top_rules; "
    statement += f"print(json.dumps(top_rules([line for _, line in pasted_lines({release!r})])))"
    return at_revision(revision, statement)


def _table(rows: list[str], now: list[str | None], before: list[str | None] | None) -> str:
    groups: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        groups[row].append(index)
    head = "| messages | count | with a finding | rules answering" + (
        " | with a finding at baseline |" if before else " |"
    )
    lines = [head, "|---|---:|---:|---" + ("|---:|" if before else "|")]
    for row, indices in sorted(groups.items()):
        found = sum(now[i] is not None for i in indices)
        rules = ", ".join(f"{rule} {n}" for rule, n in Counter(now[i] for i in indices if now[i]).most_common(4))
        line = f"| {row} | {len(indices)} | {found} | {rules}"
        lines.append(line + (f" | {sum(before[i] is not None for i in indices)} |" if before else " |"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default=DEFAULT_RELEASE, help=f"vLLM minor release (default {DEFAULT_RELEASE})")
    parser.add_argument("--baseline", metavar="REV", help="also answer the same lines with the code at this commit")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the failing lines no finding answers")
    args = parser.parse_args(argv)
    pasted = pasted_lines(args.release)
    if not pasted:
        parser.error(f"--release {args.release}: the catalog holds no message of that release (0.4 to 0.34)")
    rows = [row_of(entry) for entry, _ in pasted]
    lines = [line for _, line in pasted]
    before = _baseline(args.baseline, args.release) if args.baseline else None  # first: a wrong REV fails at once
    now = top_rules(lines)
    print(_table(rows, now, before))
    failing = [i for i, row in enumerate(rows) if not row.endswith("advice")]
    summary = f"\nvLLM {args.release}'s failure messages pasted alone with a finding: "
    summary += f"{sum(now[i] is not None for i in failing)}/{len(failing)}"
    if before is not None:
        summary += f"; at {args.baseline}: {sum(before[i] is not None for i in failing)}/{len(failing)}"
    print(summary)
    if args.verbose:
        for i in failing:
            if now[i] is None:
                print(f"  no finding: {rows[i]}: {lines[i][:140]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
