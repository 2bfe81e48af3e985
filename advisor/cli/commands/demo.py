"""`servops demo`: the whole story on the bundled engine in a few minutes.

Start the embedded model with a poor configuration, ramp it, triage it under load, apply
the top recommended flag change, ramp again, and write demo.json plus one HTML report
with before and after side by side. Everything it starts, it stops. `--engine vllm` tells
the same story on a real vLLM (the reference deployment, advisor.vllm_launch).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from advisor.cli_types import command_line, non_negative_float, non_negative_int, positive_float, positive_int
from advisor.demo import BASE_FLAGS, POOR_FLAGS, VLLM_BASE_FLAGS, DemoSettings, poor_command, run_demo
from advisor.errors import UserError
from advisor.measure import RampSettings
from advisor.output_paths import check_output_dir
from advisor.report_files import write_html_report, write_json


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
    json_path = write_json(out_dir / "demo.json", result.model_dump_json(indent=1))
    html_path = write_html_report(out_dir / "report.html", [result.model_dump(mode="json")])
    print(result.summary)
    print(f"wrote {json_path} and {html_path}")
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
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


def add_engine_argument(parser: argparse.ArgumentParser, default: str | None = "bundled") -> None:
    """`--engine`, shared by demo and tune: which server the loop starts and measures."""
    parser.add_argument(
        "--engine",
        choices=["bundled", "vllm"],
        default=default,
        help="server to start: the bundled engine (default) or a real vLLM as the reference "
        "deployment, from .venv-vllm (scripts/install.sh) or $SERVOPS_VLLM_PYTHON; vLLM's "
        "start compiles the model (about 1-2 min on a CPU; --startup-timeout covers it)",
    )


def add_ramp_arguments(parser: argparse.ArgumentParser) -> None:
    """The ramp and startup flags demo and tune share (one workload for every run compared)."""
    parser.add_argument(
        "--concurrency",
        default="1,2,4",
        metavar="LIST",
        help="closed-loop concurrent streams per ramp step (default: 1,2,4)",
    )
    parser.add_argument(
        "--step-seconds",
        type=positive_float,
        default=25.0,
        metavar="S",
        help="duration of each ramp step (default: 25)",
    )
    parser.add_argument(
        "--warmup-seconds",
        type=non_negative_float,
        default=5.0,
        metavar="S",
        help="start of each step left out of the statistics (default: 5)",
    )
    parser.add_argument(
        "--cooldown-seconds",
        type=non_negative_float,
        default=15.0,
        metavar="S",
        help="after the last step, time for in-flight requests to finish (default: 15)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=non_negative_int,
        default=64,
        metavar="N",
        help="when the ramp shows no knee, or meets every SLO at its top step, ramp on at 2x and 4x its "
        "top level up to N streams, so "
        "the safe operating point is not just the top tested step (default: 64; 0: never)",
    )
    parser.add_argument(
        "--input-len", type=positive_int, default=24, metavar="N", help="prompt length in words (default: 24)"
    )
    parser.add_argument(
        "--output-len", type=positive_int, default=12, metavar="N", help="output tokens per request (default: 12)"
    )
    parser.add_argument(
        "--slo",
        default="ttft_p99=3s",
        metavar="SLOS",
        help="SLOs that define the safe operating point (default: ttft_p99=3s)",
    )
    parser.add_argument(
        "--startup-timeout",
        type=positive_float,
        default=600.0,
        metavar="S",
        help="seconds to wait for each engine to answer /health (default: 600; the first run "
        "converts the embedded model once, and vLLM compiles the model at every start)",
    )


def ramp_settings(args: argparse.Namespace) -> RampSettings:
    """The ramp flags shared by demo and tune, checked with one-line errors."""
    try:
        levels = [int(x) for x in args.concurrency.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--concurrency {args.concurrency!r}: give whole numbers like 1,2,4") from None
    if len(levels) < 2 or any(level < 1 for level in levels):
        raise UserError(f"--concurrency {args.concurrency!r}: give at least two levels >= 1, like 1,2,4")
    if args.input_len < 1 or args.output_len < 1:
        raise UserError(f"--input-len {args.input_len} / --output-len {args.output_len}: both must be >= 1")
    if args.step_seconds <= args.warmup_seconds:
        raise UserError(f"--step-seconds {args.step_seconds:g} must exceed --warmup-seconds {args.warmup_seconds:g}")
    if args.cooldown_seconds < 0:
        raise UserError(f"--cooldown-seconds {args.cooldown_seconds:g}: give 0 or more")
    if args.max_concurrency < 0:
        raise UserError(f"--max-concurrency {args.max_concurrency}: give 0 (never ramp on) or a stream count")
    return RampSettings(
        concurrency=levels,
        step_s=args.step_seconds,
        warmup_s=args.warmup_seconds,
        cooldown_s=args.cooldown_seconds,
        input_len=args.input_len,
        output_len=args.output_len,
        slo=args.slo or None,
        startup_timeout_s=args.startup_timeout,
        extend_to_knee=args.max_concurrency > 0,
        max_concurrency=max(1, args.max_concurrency),
    )


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
