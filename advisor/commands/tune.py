"""`servops tune`: recommend → apply → re-ramp → keep or roll back, for up to N rounds.

Works on any engine servops can launch: the bundled engine (default), or a `vllm serve …`
command where vLLM is installed (`--server-command`). Writes tune.json and one HTML report
with every round, kept or rolled back, and the numbers each decision rests on.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

from advisor.collect.server_args import parse_command
from advisor.commands.demo import add_ramp_arguments, ramp_settings
from advisor.demo import BASE_FLAGS, POOR_FLAGS
from advisor.errors import UserError
from advisor.launch import BUNDLED_PROGRAM, bundled_command
from advisor.report_files import write_html_report, write_json
from advisor.tune import TuneCriterion, run_tune

DEFAULT_FLAGS = " ".join([*BASE_FLAGS, *POOR_FLAGS])


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "tune",
        help="closed loop: triage → apply the top change → re-ramp → keep or roll back, N rounds",
        description=(
            "Measure a starting configuration with a ramp (triage runs during its top load step), then "
            "for up to --rounds rounds apply the top recommended flag change, ramp again and keep the "
            "change only if the criterion improves; otherwise roll back and try the next recommendation. "
            "Writes tune.json and report.html."
        ),
    )
    parser.add_argument("--out", default="tune-out", metavar="DIR",
                        help="folder for tune.json, report.html and engine logs (default: tune-out)")
    parser.add_argument("--rounds", type=int, default=3, metavar="N", help="maximum tuning rounds (default: 3)")
    parser.add_argument("--criterion", choices=["safe-point", "itl-p99"], default="safe-point",
                        help="keep a change when the safe operating point rises (ties: p99 TTFT falls), or when "
                             "p99 ITL at --target-load falls (default: safe-point)")
    parser.add_argument("--target-load", type=float, default=None, metavar="LOAD",
                        help="offered load (concurrency level) for --criterion itl-p99 (default: the top level "
                             "both runs measured)")
    parser.add_argument("--min-improvement", type=float, default=0.10, metavar="FRACTION",
                        help="relative improvement a latency criterion needs to keep a change (default: 0.10)")
    engine = parser.add_mutually_exclusive_group()
    engine.add_argument("--flags", default=None, metavar="FLAGS",
                        help=f"starting flags for the bundled engine (default: '{DEFAULT_FLAGS}')")
    engine.add_argument("--server-command", default=None, metavar="CMD",
                        help="a full launch command instead, e.g. \"vllm serve MODEL --max-num-seqs 8\" "
                             "(servops adds --host/--port)")
    parser.add_argument("--model", default=None,
                        help="model for the bundled engine (HF dir or .gguf); default: the embedded SmolLM2")
    add_ramp_arguments(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.rounds <= 10:
        raise UserError(f"--rounds {args.rounds}: choose 1 to 10")
    if not 0 <= args.min_improvement < 1:
        raise UserError(f"--min-improvement {args.min_improvement:g}: give a fraction in [0, 1), e.g. 0.1")
    criterion = TuneCriterion(metric="itl_p99" if args.criterion == "itl-p99" else "safe_operating_point",
                              target_load=args.target_load, min_improvement=args.min_improvement)
    start = _start_command(args)
    out_dir = Path(args.out)
    result = run_tune(start, criterion, ramp_settings(args), args.rounds, out_dir, progress=_progress)
    json_path = write_json(out_dir / "tune.json", result.model_dump_json(indent=1))
    html_path = write_html_report(out_dir / "report.html", [result.model_dump(mode="json")])
    kept = sum(r.kept for r in result.rounds)
    print(f"{len(result.rounds)} round(s), {kept} kept; final command: {result.final_command}")
    print(f"stopped: {result.stopped_reason}")
    print(f"wrote {json_path} and {html_path}")
    return 0


def _start_command(args: argparse.Namespace):
    if args.server_command:
        command = parse_command(args.server_command)
        program = shlex.split(args.server_command)[:1]
        if tuple(command.program[:4]) != BUNDLED_PROGRAM and (not program or shutil.which(program[0]) is None):
            raise UserError(f"--server-command: {program[0] if program else '(empty)'!r} is not on PATH; "
                            f"install vLLM or leave --server-command out to tune the bundled engine")
        if not command.program:
            raise UserError("--server-command: give the whole command, e.g. \"vllm serve MODEL --max-num-seqs 8\"")
        return command
    flags = (args.flags if args.flags is not None else DEFAULT_FLAGS).split()
    return bundled_command(flags, args.model)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
