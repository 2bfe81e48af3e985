"""The same incidents, carried the ways logs reach an on-call engineer: does triage still say the same?

Every case of the real-incident corpus (tests/fixtures/incidents/) is re-written, line by line, as a log
carrier would hand it over (containerd's and CRI-O's node files, `kubectl logs --timestamps` and `--prefix`,
the journal, `docker compose logs`, stern, Docker's json-file, Loki's logcli, Elasticsearch, the terminal's
colours, Windows line endings, a chat's quote bar, and these nested), or as a person's tools wrap it (an
issue's code fence and `<details>` block, a Markdown indented block, a byte-order mark, a browser's no-break
spaces), then triaged again. A carrier may not
change the answer: the case keeps its top finding (rule and title) exactly as the bare paste gets it,
whether that answer is right or wrong. What takes the carriers off is advisor/collect/log_transport.py.
Measured beside them, not held by a test: a terminal's hard wrap at three widths, and a paste whose line breaks
were lost (its lines joined by spaces, as a quote of a rendered page holds them).

    .venv/bin/python benchmarks/carried_corpus.py            # cases that keep their answer, per carrier
    .venv/bin/python benchmarks/carried_corpus.py -v         # and each case that does not, with both answers
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from the checkout

from benchmarks.incident_corpus import Case, load_cases, triage_case  # noqa: E402

STAMP = "2026-11-30T21:47:14.123456789Z"


def _cri(line: str) -> str:
    return f"{STAMP} stderr F {line}"


def _cri_partial(line: str) -> str:
    """A long line the runtime split in two: `P` (partial) then `F` (full), as containerd writes past 16 KiB."""
    if len(line) < 40:
        return _cri(line)
    half = len(line) // 2
    return f"{STAMP} stderr P {line[:half]}\n{STAMP} stderr F {line[half:]}"


def _logcli(line: str) -> str:
    return json.dumps({"labels": {"app": "vllm", "pod": "vllm-0"}, "line": line, "timestamp": STAMP})


def _compose(line: str) -> str:
    return f"vllm-server-1  | {line}"


def _each_line(carrier: Callable[[str], str]) -> Callable[[str], str]:
    """A carrier that re-writes every physical line of a text."""
    return lambda text: "\n".join(carrier(line) for line in text.splitlines())


# Each carrier: what it makes of the paste. Most re-write every physical line; the last five wrap the whole text
# as a person's tools do (an issue's Markdown, a Windows editor, a browser's copy).
CARRIERS: dict[str, Callable[[str], str]] = {
    "containerd/CRI-O file": _each_line(_cri),
    "containerd split line (P, F)": _each_line(_cri_partial),
    "kubectl logs --timestamps": _each_line(lambda line: f"{STAMP} {line}"),
    "kubectl logs --prefix": _each_line(lambda line: f"[pod/vllm-7c9d8-x2k4q/vllm] {line}"),
    "kubectl logs --prefix --timestamps": _each_line(lambda line: f"[pod/vllm-0/vllm] {STAMP} {line}"),
    "journalctl": _each_line(lambda line: f"Nov 30 21:47:14 gpu-node-3 vllm[4172]: {line}"),
    "journalctl -o short-iso": _each_line(lambda line: f"2026-11-30T21:47:14+0000 gpu-node-3 vllm[4172]: {line}"),
    "docker compose logs": _each_line(_compose),
    "docker compose logs, quoted in chat": _each_line(lambda line: f"> {_compose(line)}"),
    "stern": _each_line(lambda line: f"vllm-7c9d8-x2k4q vllm {line}"),
    "Docker json-file / Fluent Bit": _each_line(
        lambda line: json.dumps({"log": f"{line}\n", "stream": "stderr", "time": STAMP})
    ),
    "Loki logcli --output=jsonl": _each_line(_logcli),
    "logcli of a containerd file": _each_line(lambda line: _logcli(_cri(line))),
    "Elasticsearch / Datadog": _each_line(
        lambda line: json.dumps({"@timestamp": STAMP, "message": line, "host": "gpu-node-3"})
    ),
    "terminal colours": _each_line(lambda line: f"\x1b[32m{line}\x1b[0m"),
    "CRLF line endings": _each_line(lambda line: f"{line}\r"),
    "an issue's code fence": lambda text: f"```log\n{text}\n```",
    "an issue's <details> block": lambda text: f"<details><summary>Logs</summary>\n\n```\n{text}\n```\n</details>",
    "a Markdown indented code block": _each_line(lambda line: f"    {line}"),
    "a byte-order mark": lambda text: f"\ufeff{text}",
    "copied from a browser (no-break spaces)": lambda text: text.replace(" ", "\u00a0"),
}


def _hard_wrapped(width: int) -> Callable[[str], str]:
    """A terminal that cuts every line at `width` columns, mid-word, and a copy that keeps the cuts."""
    return _each_line(lambda line: "\n".join(line[i : i + width] for i in range(0, max(len(line), 1), width)))


# Measured, not held by a test: a line wrapped at a terminal's width is joined back only when the width can be
# told (two distinct lines or more cut at it, the line after each no record of its own), so one long error line
# wrapped in two stays two lines, read as a message wrapped by a person (joined with a space).
HARD_WRAPS: dict[str, Callable[[str], str]] = {
    f"hard-wrapped by a terminal at {width} columns": _hard_wrapped(width) for width in (200, 120, 80)
}


# Measured, not held by a test: a log pasted without a code fence is one paragraph on a rendered page, and a quote
# of it (GitHub's "Quote reply", a copy from the page) joins its lines with spaces, or, as the page shows it,
# collapses every run of spaces too (the indentation of a traceback, uvicorn's padding). What the reader splits
# again is vLLM's headers, process prefixes and uvicorn's lines, and a bare traceback's own lines; prose, tables
# and a message a person wrapped stay joined.
JOINED: dict[str, Callable[[str], str]] = {
    "lines joined by spaces (a quote of an unfenced log)": lambda text: " ".join(
        line.strip() for line in text.splitlines() if line.strip()
    ),
    "and every run of spaces collapsed (the page as rendered)": lambda text: " ".join(text.split()),
}


def carried(case: Case, carrier: Callable[[str], str]) -> str:
    """The case's paste as `carrier` hands it over."""
    return carrier(case.quoted)


def answer(case: Case, text: str | None = None) -> tuple[str, str] | None:
    """The top finding's rule and title for the bare paste (or `text`); None when there is none."""
    findings = triage_case(case, text).findings
    return (findings[0].rule, findings[0].title) if findings else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="print each case a carrier changes")
    args = parser.parse_args(argv)
    cases = load_cases()
    bare = {case.id: answer(case) for case in cases}
    kept_everywhere = 0
    for name, carrier in CARRIERS.items():
        changed = [(case.id, got) for case in cases if (got := answer(case, carried(case, carrier))) != bare[case.id]]
        kept_everywhere += not changed
        print(f"{len(cases) - len(changed):4}/{len(cases)} keep their answer  {name}")
        for case_id, got in changed if args.verbose else []:
            print(f"      {case_id}: {bare[case_id]} -> {got}")
    print(f"\n{kept_everywhere}/{len(CARRIERS)} carriers change no answer")
    for name, wrap in {**HARD_WRAPS, **JOINED}.items():
        changed = [case.id for case in cases if answer(case, carried(case, wrap)) != bare[case.id]]
        print(f"{len(cases) - len(changed):4}/{len(cases)} keep their answer  {name}")
        for case_id in changed if args.verbose else []:
            print(f"      {case_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
