"""`servops predict`: what a flag change does to TTFT, ITL and throughput, before restarting anything.

Why from a ramp: the ramp measured this server under this workload; the performance model
(advisor/perf) fits its step cost to that ramp and replays the same load steps with the
changed flags, so the answer is in the ramp's own units and can be checked by ramping again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.cli.options import command_line
from advisor.cli.output import say, write_result
from advisor.cli.output_paths import check_output_file
from advisor.cli.result_files import load_ramp
from advisor.collect.facts import server_config
from advisor.collect.launch_values import validated_command
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.memory.kv_change import Deployment, launch_from_config
from advisor.memory.launch_check import launch_refusals
from advisor.perf.forecast import Prediction, figure
from advisor.perf.limits import ENGINE_KINDS, PIPELINE_PARALLEL_FLAG, PREDICTED_FLAGS, TENSOR_PARALLEL_FLAG
from advisor.perf.measured import measured_ramp
from advisor.perf.pool import DeviceShare
from advisor.perf.replay import REPLAY_BOUNDS
from advisor.perf.whatif import FlagChanges, ServerContext, what_if
from advisor.units import MAX_KV_TOKENS, MAX_MEMORY_GIB
from loadtest.slo import parse_slos


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "predict",
        help="predict a ramp under changed flags (TTFT, ITL, tok/s, knee) from a measured ramp",
        description=(
            "Fit the performance model's step cost to a measured ramp (servops ramp --json), then replay "
            "vLLM V1's scheduler over the same load steps with the changed flags. Prints each step before -> "
            "after with its uncertainty and writes the predicted ramp as JSON (kind: prediction). "
            f"Flags it predicts: {', '.join(PREDICTED_FLAGS)} ({TENSOR_PARALLEL_FLAG} and "
            f"{PIPELINE_PARALLEL_FLAG} with --model and --gpu: the fitted step moved by what the roofline says "
            "the new layout changes, stages as one batch passing through them; docs/predict.md). "
            f"Bounds: {REPLAY_BOUNDS}."
        ),
    )
    _add_measured(parser)
    _add_memory(parser)
    _add_layout(parser)
    parser.add_argument("--json", default=None, metavar="OUT.json", help="write the prediction here")
    return parser


def _add_measured(parser: argparse.ArgumentParser) -> None:
    """The ramp to calibrate on, the configuration it measured and the change asked about."""
    measured = parser.add_argument_group("the measured ramp and the change")
    measured.add_argument("--ramp", required=True, metavar="RAMP.json", help="a ramp result written by servops ramp")
    measured.add_argument(
        "--server-args",
        default="",
        metavar="FLAGS",
        type=command_line,
        help="the flags (or whole command) the ramped server ran with, e.g. "
        '"--max-num-seqs 4"; flags left out take the engine\'s defaults',
    )
    measured.add_argument(
        "--engine",
        choices=ENGINE_KINDS,
        default=None,
        help="whose defaults fill flags left out (default: read from --server-args: the bundled "
        "engine for servops serve / python -m engine, vllm-cpu with VLLM_CPU_KVCACHE_SPACE or "
        "--device cpu, else vllm-cuda)",
    )
    measured.add_argument(
        "--change",
        action="append",
        default=[],
        metavar='"--FLAG VALUE"',
        type=command_line,
        help='a flag change to predict, e.g. --change "--max-num-seqs 8" (repeatable; applied '
        "together); none: predict the ramped configuration itself",
    )
    measured.add_argument(
        "--slo",
        default=None,
        metavar="SLOS",
        help="SLOs that define the predicted safe operating point, as servops ramp takes them "
        "(e.g. ttft_p99=2s,itl_p99=100ms); default: the ramp's own",
    )


def _add_memory(parser: argparse.ArgumentParser) -> None:
    """What sizes the KV pool: a change to the pool or to --gpu-memory-utilization is predicted from it."""
    memory = parser.add_argument_group("the KV pool (optional; default: estimated from the ramp's KV usage)")
    memory.add_argument(
        "--kv-cache-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the server's KV pool in tokens (its log's 'KV cache size: N tokens'), 1 to "
        f"{MAX_KV_TOKENS:,}; default: estimated from the KV usage the ramp recorded",
    )
    memory.add_argument(
        "--kv-cache-gib",
        type=float,
        default=None,
        metavar="GIB",
        help="the KV pool per GPU in GiB (its log's 'Available KV cache memory: N GiB'); with "
        "--gpu-memory-gib, what a --gpu-memory-utilization change is predicted from",
    )
    memory.add_argument(
        "--gpu-memory-gib",
        type=float,
        default=None,
        metavar="GIB",
        help="one GPU's memory in GiB (e.g. 79.18 for an H100 80GB as torch reports it); with --kv-cache-gib",
    )


def _add_layout(parser: argparse.ArgumentParser) -> None:
    """The model and GPU a tensor- or pipeline-parallel change is priced from."""
    layout = parser.add_argument_group("model and GPU (for a TP or PP change)")
    layout.add_argument(
        "--model",
        default=None,
        metavar="NAME|config.json",
        help=f"the served model (a catalog name, HF id, config.json or model dir); with --gpu, what a "
        f"{TENSOR_PARALLEL_FLAG} or {PIPELINE_PARALLEL_FLAG} change is priced from",
    )
    layout.add_argument(
        "--gpu",
        default=None,
        metavar="NAME",
        help="the GPU one rank runs on (a catalog name, e.g. L40S or 'H100 SXM'); with --model, for "
        f"{TENSOR_PARALLEL_FLAG}",
    )


def run(args: argparse.Namespace) -> int:
    if args.kv_cache_tokens is not None and args.kv_cache_tokens < 1:
        raise UserError(f"--kv-cache-tokens {args.kv_cache_tokens}: give the pool size in tokens, at least 1")
    if args.kv_cache_tokens is not None and args.kv_cache_tokens > MAX_KV_TOKENS:
        raise UserError(
            f"--kv-cache-tokens {args.kv_cache_tokens}: more tokens than any server holds (at most {MAX_KV_TOKENS:,}); "
            "give the 'KV cache size: N tokens' figure of the server's log, or a size in GiB with --kv-cache-gib"
        )
    command = validated_command(args.server_args or "", flag="--server-args")  # parsed and checked once, here
    changes = FlagChanges.parse(args.change)
    server = ServerContext(
        command=command,
        engine=args.engine,
        kv_cache_tokens=args.kv_cache_tokens,
        device_share=device_share(args.kv_cache_gib, args.gpu_memory_gib),
        deployment=deployment_for(args.model, args.gpu, command, args.kv_cache_gib),
    )
    refuse_what_vllm_refuses(server.deployment, command, changes)
    check_output_file(args.json, "--json")  # before the calibration's work
    document = load_ramp(args.ramp, "--ramp")
    if args.slo is not None:
        parse_slos(args.slo)  # a malformed SLO is its own one-line error, before the calibration
        document = {**document, "config": {**(document.get("config") or {}), "slo": args.slo}}
    source = Path(args.ramp).name
    prediction = what_if(
        measured_ramp(document, source),
        source,
        server,
        changes,
        progress=lambda line: say(line, sys.stderr),
    )
    if args.json:  # written first: `predict … | head -1` must not cost the prediction
        path = write_result(args.json, prediction, "--json", indent=1)
    say(render_table(prediction))
    if args.json:
        say(f"wrote {path}")
    return 0


def device_share(pool_gib: float | None, device_gib: float | None) -> DeviceShare | None:
    """--kv-cache-gib and --gpu-memory-gib as the model takes them: both or neither, each above 0."""

    for flag, value in (("--kv-cache-gib", pool_gib), ("--gpu-memory-gib", device_gib)):
        if value is not None and not 0 < value <= MAX_MEMORY_GIB:
            raise UserError(f"{flag} {value:g}: give a size in GiB above 0 and at most {MAX_MEMORY_GIB:,}")
    if (pool_gib is None) != (device_gib is None):
        raise UserError(
            "--kv-cache-gib and --gpu-memory-gib go together: the pool per GPU and the GPU's size "
            "(both are in vLLM's start-up log)"
        )
    return DeviceShare(pool_gib=pool_gib, device_gib=device_gib) if pool_gib is not None else None


def refuse_what_vllm_refuses(deployment: Deployment | None, command: ServeCommand, changes: FlagChanges) -> None:
    """A launch vLLM refuses at start-up (advisor/memory/launch_check.py, vLLM's own words) has no latency
    to predict: as given, or as changed, it is one line naming the input, never a prediction. Only with
    --model (and --gpu): the checks are against the model's heads and position limit."""
    if deployment is None:
        return
    for given, launch in (
        (f"--server-args {command.render()!r}", command),
        (" ".join(f"--change {text!r}" for text in changes.texts), command.with_changes(changes.values)),
    ):
        refusals = launch_refusals(
            deployment.model,
            launch_from_config(server_config(launch, [], None)),
            env=launch.env,
            chunked_prefill=launch.value("--enable-chunked-prefill") != "false",
        )
        if refusals:
            raise UserError(
                f"{given}: vLLM refuses this launch for {deployment.model.name} at start-up ({refusals[0]}); "
                "there is nothing to predict: change that flag to a value vLLM accepts"
            )


def deployment_for(
    model: str | None, gpu: str | None, command: ServeCommand, pool_gib: float | None
) -> Deployment | None:
    """--model and --gpu (both or neither) with the launch --server-args describes: what prices a TP change.
    The pool per GPU, when given (--kv-cache-gib), pins the memory model to the server's own."""
    if model is None and gpu is None:
        return None
    if model is None or gpu is None:
        raise UserError("--model and --gpu go together: the served model and the GPU one rank runs on")

    config = server_config(command, [], None)
    return Deployment(
        model=resolve_model(model),
        gpu=resolve_gpu(gpu),
        launch=launch_from_config(config),
        measured_kv_pool_gib=pool_gib,
    )


def _offered(point) -> str:
    return f"{point.offered:g}" if point is not None else "none"


def render_table(prediction: Prediction) -> str:
    """Each step: measured configuration (replayed) → changed, with the uncertainty band."""

    unit = "rps" if prediction.offered_unit == "rps" else "streams"
    lines = [
        f"predicted: {prediction.server_args_after or '(defaults)'}",
        f"from:      {prediction.server_args or '(defaults)'}  [{prediction.engine}]",
        (
            f"{'offered':>10} | {'TTFT p50 s':>18} | {'TTFT p99 s':>18} | {'ITL p50 ms':>16} | "
            f"{'ITL p99 ms':>16} | {'tok/s':>14}"
        ),
    ]
    base = prediction.baseline.steps if prediction.baseline else [None] * len(prediction.steps)
    for step, before in zip(prediction.steps, base, strict=False):
        cells = [f"{step.offered:>6g} {unit[:3]}"]
        for name, scale, digits in (
            ("ttft_p50", 1, 2),
            ("ttft_p99", 1, 2),
            ("itl_p50", 1e3, 0),
            ("itl_p99", 1e3, 0),
            ("output_tokens_per_s", 1, 0),
        ):
            now = figure(step, name)
            was = figure(before, name) if before is not None else None
            text = "-" if now is None else f"{now * scale:.{digits}f}"
            if was is not None and now is not None:
                text = f"{was * scale:.{digits}f} -> {text}"
            cells.append(text)
        lines.append(
            f"{cells[0]:>10} | {cells[1]:>18} | {cells[2]:>18} | {cells[3]:>16} | {cells[4]:>16} | {cells[5]:>14}"
        )
    for label, value in (("knee", prediction.knee), ("safe operating point", prediction.safe_operating_point)):
        lines.append(f"{label}: {value.offered:g} {unit}" if value else f"{label}: none in the tested range")
    if prediction.edges:
        read = ", ".join(
            f"at p{99 + edge.shift_points:g} {_offered(edge.safe_operating_point)}" for edge in prediction.edges
        )
        margin = abs(prediction.edges[0].shift_points)
        lines.append(f"safe operating point with every percentile read ±{margin:g} ranks: {read}")
    lines.append(
        f"uncertainty: ±{prediction.cost.relative_error:.0%} on latencies and throughput ({prediction.cost.describe()})"
    )
    lines += [f"note: {note}" for note in prediction.notes]
    return "\n".join(lines)
