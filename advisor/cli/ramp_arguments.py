"""The ramp and engine options `servops demo` and `servops tune` share, and the settings they make.

Why a module of its own: both commands start an engine and ramp it the same way; one declaration of
those options keeps their flags, defaults and help the same, and neither command imports the other.
"""

from __future__ import annotations

import argparse

from advisor.cli.options import non_negative_float, non_negative_int, positive_float, positive_int
from advisor.errors import UserError
from advisor.tune.measure import RampSettings


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
    _add_steps(parser)
    _add_requests(parser)


def _add_steps(parser: argparse.ArgumentParser) -> None:
    """The ramp's load steps and how long each is measured."""
    steps = parser.add_argument_group("ramp steps (the same for every run compared)")
    steps.add_argument(
        "--concurrency",
        default="1,2,4",
        metavar="LIST",
        help="closed-loop concurrent streams per ramp step (default: 1,2,4)",
    )
    steps.add_argument(
        "--step-seconds",
        type=positive_float,
        default=25.0,
        metavar="S",
        help="duration of each ramp step (default: 25)",
    )
    steps.add_argument(
        "--warmup-seconds",
        type=non_negative_float,
        default=5.0,
        metavar="S",
        help="start of each step left out of the statistics (default: 5)",
    )
    steps.add_argument(
        "--cooldown-seconds",
        type=non_negative_float,
        default=15.0,
        metavar="S",
        help="after the last step, time for in-flight requests to finish (default: 15)",
    )
    steps.add_argument(
        "--max-concurrency",
        type=non_negative_int,
        default=64,
        metavar="N",
        help="when the ramp shows no knee, or meets every SLO at its top step, ramp on at 2x and 4x its "
        "top level up to N streams, so "
        "the safe operating point is not just the top tested step (default: 64; 0: never)",
    )


def _add_requests(parser: argparse.ArgumentParser) -> None:
    """What each request asks, what counts as within the SLOs, and how long an engine may take to start."""
    requests = parser.add_argument_group("requests, SLOs and startup")
    requests.add_argument(
        "--input-len", type=positive_int, default=24, metavar="N", help="prompt length in words (default: 24)"
    )
    requests.add_argument(
        "--output-len", type=positive_int, default=12, metavar="N", help="output tokens per request (default: 12)"
    )
    requests.add_argument(
        "--slo",
        default="ttft_p99=3s",
        metavar="SLOS",
        help="SLOs that define the safe operating point (default: ttft_p99=3s)",
    )
    requests.add_argument(
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
