"""`servops report`: render result JSON files into one self-contained HTML report.

Why a separate command: every measuring command writes JSON first; the HTML is a view
that can be made later (or again, with a newer servops) from the same files, and several
results (a ramp and the triage it led to) can share one page.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from advisor.cli.output import say
from advisor.cli.output_paths import check_output_file
from advisor.cli.result_files import load_result, write_html_report
from reports.render import KINDS


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="render triage/ramp/advise/demo/tune/prediction JSON into one self-contained HTML file",
        description=(
            "Render one or more servops result files (JSON of kind "
            + ", ".join(KINDS)
            + ") into ONE HTML file with inline CSS and SVG charts: no scripts, no external "
            "URL, readable offline."
        ),
    )
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULT.json",
        help="result files written by servops (triage, ramp, advise, demo, tune, predict)",
    )
    parser.add_argument(
        "-o", "--output", default="report.html", metavar="PATH", help="HTML file to write (default: report.html)"
    )
    parser.add_argument("--title", default=None, help="page title (default: from the result kinds)")
    return parser


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output, "--output")
    documents = [load_result(Path(p)) for p in args.results]
    output = write_html_report(Path(args.output), documents, title=args.title)
    size_kib = output.stat().st_size // 1024
    say(f"wrote {output} ({size_kib} KiB) from {len(documents)} result(s)")
    return 0
