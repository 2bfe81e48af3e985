"""`servops advise`: size a vLLM launch from memory math and recommend flags.

Two answers in one run: what the launch *as given* does on the GPU (the KV budget, KV
tokens, max concurrency, and whether vLLM starts or which exact error it raises), and the
launch we recommend for the hardware and workload, as a `vllm serve` command with a reason
per flag. Human-readable by default; `--json PATH` (or `-`) writes the JSON document.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from advisor import __version__
from advisor.errors import UserError
from advisor.hardware import GpuSpec, gpu_from_memory, resolve_gpu
from advisor.memory import DTYPES, KV_DTYPES, LaunchConfig, MemoryBreakdown, estimate_memory
from advisor.modelspec import ModelSpec, resolve_model
from advisor.plan import Plan, Recommendation, Workload, recommend
from advisor.versions import NEWEST_VLLM

# CLI dest → LaunchConfig field; a dest the user set is "pinned" (kept by the planner).
LAUNCH_FIELDS = (
    "tensor_parallel_size", "pipeline_parallel_size", "dtype", "quantization", "kv_cache_dtype",
    "gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
    "block_size", "enforce_eager",
)
WORKLOAD_FIELDS = ("p95_input_tokens", "p95_output_tokens", "prefix_reuse", "target_concurrency")


class AdviseResult(BaseModel):
    """The JSON document `servops advise --json` writes (stable keys, issue #2)."""

    kind: str = "advise"
    servops_version: str = __version__
    created_at: str
    inputs: dict[str, Any]
    model: dict[str, Any]
    gpu: GpuSpec
    memory: dict[str, float | int]
    fits: bool
    failure: str | None
    max_model_len_that_fits: int
    launch: dict[str, Any]  # the launch as given, vLLM defaults resolved
    command: str
    recommendations: list[Recommendation]
    warnings: list[str]
    recommended: dict[str, Any]  # launch, data_parallel_size and memory of the recommendation


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "advise",
        help="size a vLLM launch from memory math and recommend flags",
        description=(
            "Replays vLLM's KV-cache budget for a model on a GPU (weights, activation, non-torch, "
            "CUDA graphs → KV tokens, max concurrency, or the exact startup error), then "
            "recommends a `vllm serve` command with a reason for each flag."
        ),
    )
    add = parser.add_argument
    add("--model", required=True, help="catalog name (Llama-3.1-8B, DeepSeek-V3, …), HF id, config.json or model dir")
    device = parser.add_mutually_exclusive_group(required=True)
    device.add_argument("--gpu", help="catalog GPU: H100-SXM-80GB, H100-PCIe-80GB, H200, A100-SXM-80GB, "
                        "A100-PCIe-80GB, L40S, L4, A10G, MI300X, MI325X, B200")
    device.add_argument("--gpu-memory-gib", type=_positive_float, metavar="GIB",
                        help="device memory as torch reports it, for unlisted GPUs or the bundled engine's budget")
    add("--device", choices=["cuda", "cpu"], default="cuda",
        help="with --gpu-memory-gib: 'cpu' sizes the bundled engine's CPU budget (servops serve "
             "--device cpu --device-memory-gib GIB): no CUDA context or graphs, the engine's activation estimate")
    add("--gpus", type=_positive_int, metavar="N", help="GPUs available to the deployment (default: TP × PP)")
    add("--interconnect", choices=["nvlink", "pcie", "xgmi"], help="GPU-to-GPU link (default: the GPU's usual one)")
    add("--tensor-parallel-size", "-tp", type=_positive_int, metavar="N", help="vLLM --tensor-parallel-size (default 1)")
    add("--pipeline-parallel-size", "-pp", type=_positive_int, metavar="N", help="vLLM --pipeline-parallel-size (default 1)")
    add("--dtype", choices=DTYPES, help="vLLM --dtype (default auto: the checkpoint's)")
    add("--quantization", "-q", help="vLLM --quantization, e.g. fp8, awq, gptq (default: none / the checkpoint's)")
    add("--kv-cache-dtype", choices=KV_DTYPES, help="vLLM --kv-cache-dtype (default auto = model dtype; fp8 halves KV)")
    add("--gpu-memory-utilization", type=_fraction, metavar="F", help="vLLM fraction of total memory (default 0.92, 0.9 before 0.20)")
    add("--max-model-len", type=_positive_int, metavar="TOKENS", help="vLLM --max-model-len (default: the model's max_position_embeddings)")
    add("--max-num-seqs", type=_positive_int, metavar="N", help="vLLM --max-num-seqs (default by GPU size and version)")
    add("--max-num-batched-tokens", type=_positive_int, metavar="N", help="vLLM --max-num-batched-tokens (default by GPU size and version)")
    add("--block-size", type=_positive_int, metavar="TOKENS", help="vLLM --block-size (default 16; 64 for MLA on Hopper/Blackwell)")
    add("--enforce-eager", action="store_true", default=None, help="vLLM --enforce-eager: no CUDA graphs (frees their pool)")
    add("--free-memory-gib", type=_positive_float, metavar="GIB",
        help="free device memory at startup, if known (checks vLLM's free-memory startup error)")
    add("--p95-input-tokens", type=_positive_int, metavar="TOKENS", help="workload: p95 prompt length")
    add("--p95-output-tokens", type=_positive_int, metavar="TOKENS", help="workload: p95 output length")
    add("--prefix-reuse", type=_unit_interval, metavar="F", help="workload: share of prompt tokens that repeat (0–1)")
    add("--target-concurrency", type=_positive_int, metavar="N", help="workload: concurrent requests to serve")
    add("--vllm-version", default=NEWEST_VLLM, help=f"vLLM version whose defaults and texts apply (default {NEWEST_VLLM})")
    add("--json", metavar="PATH", help="write the JSON result to PATH ('-' for stdout) instead of the text report")
    return parser


def run(args: argparse.Namespace) -> int:
    result = advise(args)
    if args.json:
        text = result.model_dump_json(indent=2)
        if args.json == "-":
            sys.stdout.write(text + "\n")
        else:
            try:
                Path(args.json).write_text(text + "\n")
            except OSError as exc:
                raise UserError(f"--json {args.json!r}: cannot write ({exc.strerror}); pass a writable path") from None
    else:
        sys.stdout.write(render_text(result))
    return 0


def advise(args: argparse.Namespace) -> AdviseResult:
    """Build the result from parsed arguments (pure apart from reading a model path)."""
    model = resolve_model(args.model)
    if args.gpu and args.device == "cpu":
        raise UserError("--device cpu: goes with --gpu-memory-gib (the engine's CPU budget), not --gpu")
    gpu = resolve_gpu(args.gpu) if args.gpu else gpu_from_memory(args.gpu_memory_gib, device=args.device)
    interconnect = args.interconnect or gpu.interconnect
    set_fields = {f: getattr(args, f) for f in LAUNCH_FIELDS if getattr(args, f) is not None}
    try:
        given = LaunchConfig(vllm_version=args.vllm_version, **set_fields)
        workload = Workload(**{f: getattr(args, f) for f in WORKLOAD_FIELDS})
    except ValidationError as exc:
        error = exc.errors()[0]
        flag = "--" + str(error["loc"][0]).replace("_", "-")
        raise UserError(f"{flag}: {error['msg']}; see 'servops advise --help'") from None
    gpus = args.gpus or given.tensor_parallel_size * given.pipeline_parallel_size
    if gpus < given.tensor_parallel_size * given.pipeline_parallel_size:
        raise UserError(
            f"--gpus {gpus}: fewer than TP × PP = {given.tensor_parallel_size * given.pipeline_parallel_size}; "
            "raise --gpus or lower the parallel sizes"
        )
    memory = estimate_memory(model, gpu, given, free_memory_gib=args.free_memory_gib)
    plan = recommend(model, gpu, gpus, interconnect, given, frozenset(set_fields), workload)
    inputs = {"model": args.model, "gpu": args.gpu, "gpu_memory_gib": args.gpu_memory_gib, "device": args.device,
              "gpus": gpus,
              "interconnect": interconnect, "free_memory_gib": args.free_memory_gib,
              "vllm_version": args.vllm_version, **{f: getattr(args, f) for f in LAUNCH_FIELDS},
              **{f: getattr(args, f) for f in WORKLOAD_FIELDS}}
    return AdviseResult(
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        inputs=inputs,
        model=_model_summary(model),
        gpu=gpu,
        memory=memory.memory_section(),
        fits=memory.fits,
        failure=memory.failure,
        max_model_len_that_fits=memory.max_model_len_that_fits,
        launch=_resolved_launch(given, memory),
        command=plan.command,
        recommendations=plan.recommendations,
        warnings=plan.warnings,
        recommended=_recommended(plan),
    )


def render_text(result: AdviseResult) -> str:
    """The on-call view: the budget as a subtraction, the verdict, the command, the reasons."""
    m, launch, gpu = result.memory, result.launch, result.gpu
    lines = [
        f"{result.model['name']} on {result.inputs['gpus']}× {gpu.name} ({gpu.usable_gib:.2f} GiB), "
        f"vLLM {launch['vllm_version']}",
        "",
        f"As given (TP {launch['tensor_parallel_size']}, PP {launch['pipeline_parallel_size']}, "
        f"util {launch['gpu_memory_utilization']}, max-model-len {launch['max_model_len']:,}), per GPU:",
        f"  requested      {m['total_gib']:8.2f} GiB × {launch['gpu_memory_utilization']} = {m['requested_gib']:.2f} GiB",
        f"  − weights      {m['weights_gib']:8.2f} GiB",
        f"  − activation   {m['activation_gib']:8.2f} GiB  (profiling peak, calibrated; see docs/advisor.md)",
        f"  − non-torch    {m['non_torch_gib']:8.2f} GiB",
        f"  − CUDA graphs  {m['cudagraph_gib']:8.2f} GiB",
        f"  = KV pool      {m['kv_pool_gib']:8.2f} GiB",
        f"  KV {m['kv_bytes_per_token']:,} B/token → {m['num_blocks']:,} blocks → {m['kv_cache_tokens']:,} tokens; "
        f"max concurrency {m['max_concurrency']:.2f}x at {launch['max_model_len']:,} tokens",
        f"  largest max-model-len that fits: {result.max_model_len_that_fits:,}",
        "  starts: yes" if result.fits else f"  starts: NO — vLLM would fail with:\n    {result.failure}",
        "",
        "Recommended launch:",
        f"  {result.command}",
    ]
    lines += [f"    {r.flag} {r.value}".rstrip() + f"  — {r.reason}" for r in result.recommendations]
    rec = result.recommended["memory"]
    lines.append(f"  → {rec['kv_cache_tokens']:,} KV tokens per replica, max concurrency "
                 f"{rec['max_concurrency']:.2f}x at {result.recommended['launch']['max_model_len']:,} tokens")
    if result.warnings:
        lines += ["", "Warnings:"] + [f"  ! {w}" for w in result.warnings]
    return "\n".join(lines) + "\n"


def _resolved_launch(config: LaunchConfig, memory: MemoryBreakdown) -> dict[str, Any]:
    resolved = config.model_dump()
    resolved.update({k: getattr(memory, k) for k in (
        "max_model_len", "block_size", "gpu_memory_utilization", "max_num_seqs",
        "max_num_batched_tokens", "vllm_version")})
    return resolved


def _recommended(plan: Plan) -> dict[str, Any]:
    return {"launch": _resolved_launch(plan.launch, plan.memory), "data_parallel_size": plan.data_parallel_size,
            "memory": plan.memory.memory_section(), "fits": plan.memory.fits, "failure": plan.memory.failure}


def _model_summary(model: ModelSpec) -> dict[str, Any]:
    return model.model_dump(include={
        "name", "hf_id", "attention", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "head_dim", "max_position_embeddings", "sliding_window", "param_count", "native_quantization",
        "num_experts"})


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def _fraction(text: str) -> float:
    value = _positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a fraction in (0, 1], e.g. 0.9")
    return value


def _unit_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1, e.g. 0.5")
    return value
