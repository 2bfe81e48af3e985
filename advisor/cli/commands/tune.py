"""`servops tune`: recommend → apply → re-ramp → keep or roll back, for up to N rounds.

Works on any engine servops can launch: the bundled engine (default), a real vLLM started
the way advisor.servers.vllm starts the reference deployment (`--engine vllm`), or any
`vllm serve …` command (`--server-command`). Writes tune.json and one HTML report with every
round, kept or rolled back, and the numbers each decision rests on.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from advisor.cli.options import command_line, positive_float, positive_int, unit_interval
from advisor.cli.output import say, write_result
from advisor.cli.output_paths import check_output_dir
from advisor.cli.ramp_arguments import add_engine_argument, add_ramp_arguments, ramp_settings
from advisor.cli.result_files import write_html_report
from advisor.collect.launch_values import validated_command
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.perf.replay import REPLAY_BOUNDS
from advisor.servers.process import BUNDLED_PROGRAM
from advisor.servers.vllm import vllm_unavailable_reason
from advisor.tune.engines import POOR_FLAGS, Engine, default_base_flags, start_command
from advisor.tune.loop import TuneCriterion, run_tune


def default_flags(engine: Engine) -> str:
    """The starting flags when --flags is not given: the demo's poor configuration on that engine."""
    return " ".join([*default_base_flags(engine), *POOR_FLAGS])


DEFAULT_FLAGS = default_flags("bundled")


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "tune",
        help="closed loop: triage → apply the top change → re-ramp → keep or roll back, N rounds",
        description=(
            "Measure a starting configuration with a ramp (triage runs during its top load step), then "
            "for up to --rounds rounds apply the top recommended flag change, ramp again and keep the "
            "change only if the criterion improves; otherwise roll back and try the next recommendation. "
            "Writes tune.json and report.html. Bounds: --rounds rounds, each a start within "
            "--startup-timeout and a ramp of its steps (extended at most to --max-concurrency); each "
            f"candidate is predicted by a replay ({REPLAY_BOUNDS}). A keyed server (--api-key or "
            "VLLM_API_KEY) is ramped and triaged with its key."
        ),
    )
    parser.add_argument(
        "--out",
        default="tune-out",
        metavar="DIR",
        help="folder for tune.json, report.html and engine logs (default: tune-out)",
    )
    _add_loop(parser)
    _add_server(parser)
    add_ramp_arguments(parser)
    return parser


def _add_loop(parser: argparse.ArgumentParser) -> None:
    """How many rounds, and what makes a change worth keeping."""
    loop = parser.add_argument_group("the loop")
    loop.add_argument("--rounds", type=positive_int, default=3, metavar="N", help="maximum tuning rounds (default: 3)")
    loop.add_argument(
        "--criterion",
        choices=["safe-point", "itl-p99"],
        default="safe-point",
        help="keep a change when the safe operating point rises (ties: p99 TTFT falls), or when "
        "p99 ITL at --target-load falls (default: safe-point)",
    )
    loop.add_argument(
        "--target-load",
        type=positive_float,
        default=None,
        metavar="LOAD",
        help="offered load (concurrency level) for --criterion itl-p99 (default: the top level both runs measured)",
    )
    loop.add_argument(
        "--min-improvement",
        type=unit_interval,
        default=0.10,
        metavar="FRACTION",
        help="relative improvement a latency criterion needs to keep a change (default: 0.10)",
    )
    loop.add_argument(
        "--unsafe-changes",
        action="store_true",
        help="also apply changes triage marks unsafe (they can reject requests or change outputs, "
        "e.g. a shorter --max-model-len); default: safe changes only",
    )


def _add_server(parser: argparse.ArgumentParser) -> None:
    """The server each round restarts with its flags changed."""
    server = parser.add_argument_group("the server to start")
    engine = server.add_mutually_exclusive_group()
    engine.add_argument(
        "--flags",
        default=None,
        metavar="FLAGS",
        type=command_line,
        help=f"starting flags for --engine (default: '{DEFAULT_FLAGS}'; with --engine vllm '{default_flags('vllm')}')",
    )
    engine.add_argument(
        "--server-command",
        default=None,
        metavar="CMD",
        type=command_line,
        help='a full launch command instead of --engine, e.g. "VLLM_CPU_KVCACHE_SPACE=1 vllm serve '
        'MODEL --max-num-seqs 8" (servops adds --host/--port; `vllm` runs from the vLLM '
        "environment when servops has one)",
    )
    add_engine_argument(server, default=None)
    server.add_argument(
        "--model",
        default=None,
        help="model for --engine (bundled: HF dir or .gguf; vllm: an HF dir); default: the embedded SmolLM2",
    )


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.rounds <= 10:
        raise UserError(f"--rounds {args.rounds}: choose 1 to 10")
    if not 0 <= args.min_improvement < 1:
        raise UserError(f"--min-improvement {args.min_improvement:g}: give a fraction in [0, 1), e.g. 0.1")
    criterion = TuneCriterion(
        metric="itl_p99" if args.criterion == "itl-p99" else "safe_operating_point",
        target_load=args.target_load,
        min_improvement=args.min_improvement,
    )
    start = _start_command(args)
    settings = ramp_settings(args)
    check_output_dir(args.out, "--out")  # before minutes of engine runs, not after
    out_dir = Path(args.out)
    result = run_tune(
        start, criterion, settings, args.rounds, out_dir, progress=_progress, allow_unsafe=args.unsafe_changes
    )
    json_path = write_result(out_dir / "tune.json", result, "--out", indent=1)
    html_path = write_html_report(out_dir / "report.html", [result.model_dump(mode="json")])
    kept = sum(r.kept for r in result.rounds)
    say(f"{len(result.rounds)} round(s), {kept} kept; final command: {result.final_command}")
    say(f"stopped: {result.stopped_reason}")
    say(f"wrote {json_path} and {html_path}")
    return 0


def _start_command(args: argparse.Namespace) -> ServeCommand:
    """The starting command: --server-command as given (checked it can run), else --engine's."""
    if args.server_command is not None:  # "" is a command too: refused below, never the bundled engine
        if args.engine is not None:
            raise UserError(
                "--engine and --server-command are mutually exclusive: --server-command is the whole "
                "launch command; leave one out"
            )
        return _server_command(args.server_command)
    engine: Engine = args.engine or "bundled"
    flags = (args.flags if args.flags is not None else default_flags(engine)).split()
    return start_command(engine, flags, args.model)


def _server_command(text: str) -> ServeCommand:
    """`--server-command` parsed (NAME=value assignments into its env), refused early when it cannot start.

    Why `vllm` is not looked up on PATH alone: the CPU wheel's `vllm` script cannot start, so
    servops runs `vllm serve` through its vLLM environment (advisor.servers.vllm) when there is one.
    """
    command = validated_command(text, flag="--server-command")
    if not command.program:
        raise UserError('--server-command: give the whole command, e.g. "vllm serve MODEL --max-num-seqs 8"')
    if tuple(command.program[:4]) == BUNDLED_PROGRAM:
        return command
    program = command.program[0]
    if program == "vllm":
        reason = vllm_unavailable_reason()
        if reason:
            raise UserError(f"--server-command: {reason}")
    elif shutil.which(program) is None:
        raise UserError(
            f"--server-command: {program!r} is not on PATH; install it or leave --server-command out "
            f"to tune the bundled engine"
        )
    return command


def _progress(line: str) -> None:
    say(line, sys.stderr)
