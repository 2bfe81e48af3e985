"""`servops report`: render result JSON files into one self-contained HTML report.

Why a separate command: every measuring command writes JSON first; the HTML is a view
that can be made later (or again, with a newer servops) from the same files, and several
results (a ramp and the triage it led to) can share one page.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from advisor.errors import UserError
from reports.render import KINDS, render_html

log = logging.getLogger("servops.report")


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="render triage/ramp/advise/demo/tune JSON into one self-contained HTML file",
        description=(
            "Render one or more servops result files (JSON of kind "
            + ", ".join(KINDS)
            + ") into ONE HTML file with inline CSS and SVG charts: no scripts, no external "
            "URL, readable offline."
        ),
    )
    parser.add_argument("results", nargs="+", metavar="RESULT.json",
                        help="result files written by servops (triage, ramp, advise, demo, tune)")
    parser.add_argument("-o", "--output", default="report.html", metavar="PATH",
                        help="HTML file to write (default: report.html)")
    parser.add_argument("--title", default=None, help="page title (default: from the result kinds)")
    return parser


def run(args: argparse.Namespace) -> int:
    documents = [load_result(Path(p)) for p in args.results]
    html_text = render_html(documents, title=args.title)
    output = Path(args.output)
    write_report(output, html_text)
    print(f"wrote {output} ({len(html_text) // 1024} KiB) from {len(documents)} result(s)")
    return 0


def load_result(path: Path) -> dict[str, Any]:
    """Read one result file, with one-line errors naming the file and the fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; pass a JSON result written by servops") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror}); check the path and permissions") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}); pass a servops result file"
        ) from None
    if not isinstance(document, dict) or document.get("kind") not in KINDS:
        kind = document.get("kind") if isinstance(document, dict) else type(document).__name__
        raise UserError(
            f"{path}: kind {kind!r} is not a servops result; report renders {', '.join(KINDS)} JSON"
        )
    document.setdefault("_source_file", path.name)
    return document


def write_report(output: Path, html_text: str) -> None:
    """Write the HTML, creating the parent folder; one-line error if that fails."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(html_text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"-o {output}: cannot write ({exc.strerror}); choose a writable path") from None
