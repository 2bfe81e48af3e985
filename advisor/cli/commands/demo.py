"""`servops demo`: the whole story on the bundled engine in a few minutes.

Start the embedded model with a poor configuration, ramp it, triage it under load, apply
the top recommended flag change, ramp again, and write demo.json plus one HTML report
with before and after side by side. Everything it starts, it stops. `--engine vllm` tells
the same story on a real vLLM (the reference deployment, advisor.servers.vllm).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from advisor.cli.options import command_line
from advisor.cli.output import say, write_result
from advisor.cli.output_paths import check_output_dir
from advisor.cli.ramp_arguments import add_engine_argument, add_ramp_arguments, ramp_settings
from advisor.cli.result_files import write_html_report
from advisor.tune.demo import DemoSettings, poor_command, run_demo
from advisor.tune.engines import BASE_FLAGS, POOR_FLAGS, VLLM_BASE_FLAGS


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "demo",
        help="end to end: poor config → ramp → triage → apply top change → ramp → before/after report",
        description=(
            "Run the bundled engine with a deliberately poor configuration "
            f"({' '.join(POOR_FLAGS)}), ramp it, triage it from its /metrics and log during the top "
            "load step, apply the top recommended change, ramp again and write demo.json and an "
            "HTML report with before and after side by side. Stops every process it starts. "
            "--engine vllm runs the same on a real vLLM (scripts/install.sh builds it where the machine can)."
        ),
    )
    parser.add_argument(
        "--out",
        default="demo-out",
        metavar="DIR",
        help="folder for demo.json, report.html and the engine logs (default: demo-out)",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="model for the engine (HF dir or .gguf; vLLM: an HF dir); default: the embedded SmolLM2-135M-Instruct",
    )
    add_engine_argument(parser)
    add_ramp_arguments(parser)
    parser.add_argument(
        "--poor-flags",
        default=" ".join(POOR_FLAGS),
        metavar="FLAGS",
        type=command_line,
        help=f"the poor configuration to start from (default: '{' '.join(POOR_FLAGS)}')",
    )
    parser.add_argument(
        "--engine-flags",
        default=None,
        metavar="FLAGS",
        type=command_line,
        help=f"flags every engine run gets (default: '{' '.join(BASE_FLAGS)}'; with --engine vllm "
        f"'{' '.join(VLLM_BASE_FLAGS)}')",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    settings = demo_settings(args)  # flags and the engine checked first: a refused run leaves no folder
    poor_command(settings)
    check_output_dir(args.out, "--out")  # before minutes of engine runs, not after
    out_dir = Path(args.out)
    result = run_demo(settings, out_dir, progress=_progress)
    json_path = write_result(out_dir / "demo.json", result, "--out", indent=1)
    html_path = write_html_report(out_dir / "report.html", [result.model_dump(mode="json")])
    say(result.summary)
    say(f"wrote {json_path} and {html_path}")
    for note in result.notes:
        say(f"note: {note}", sys.stderr)
    return 0 if result.after is not None or result.applied_change is None else 1


def demo_settings(args: argparse.Namespace) -> DemoSettings:
    """The demo's settings from its flags (base flags: the engine's defaults unless --engine-flags)."""
    return DemoSettings(
        model=args.model,
        engine=args.engine,
        poor_flags=args.poor_flags.split(),
        base_flags=args.engine_flags.split() if args.engine_flags is not None else None,
        ramp=ramp_settings(args),
    )


def _progress(line: str) -> None:
    say(line, sys.stderr)
