"""The human view of an `AdviseResult`: what `servops advise` prints without --json.

The budget as a subtraction, the verdict (or vLLM's exact error), then the recommended command
with a reason per flag and the warnings. Apart from the command as triage_text.py is for
triage: what a reader sees in a terminal changes on its own schedule, the JSON keys do not.
"""

from __future__ import annotations

from advisor.advise.result import AdviseResult
from advisor.memory.cpu_backend import CpuKvSizing


def render_text(result: AdviseResult) -> str:
    """The on-call view: the budget as a subtraction, the verdict, the command, the reasons."""
    if result.vllm_cpu is not None:
        return render_cpu_text(result, result.vllm_cpu)
    m, launch, gpu = result.memory, result.launch, result.gpu
    assert gpu is not None  # only vLLM's CPU backend has none
    lines = [
        (
            f"{result.model['name']} on {result.inputs['gpus']}× {gpu.name} ({gpu.usable_gib:.2f} GiB), "
            f"vLLM {launch['vllm_version']}"
        ),
        "",
        (
            f"As given (TP {launch['tensor_parallel_size']}, PP {launch['pipeline_parallel_size']}, "
            f"util {launch['gpu_memory_utilization']}, max-model-len {launch['max_model_len']:,}), per GPU:"
        ),
        f"  requested      {m['total_gib']:8.2f} GiB × {launch['gpu_memory_utilization']} = "
        f"{m['requested_gib']:.2f} GiB",
        f"  − weights      {m['weights_gib']:8.2f} GiB",
        f"  − activation   {m['activation_gib']:8.2f} GiB  (profiling peak, calibrated; see docs/advisor.md)",
        f"  − non-torch    {m['non_torch_gib']:8.2f} GiB",
        f"  − CUDA graphs  {m['cudagraph_gib']:8.2f} GiB",
        f"  = KV pool      {m['kv_pool_gib']:8.2f} GiB",
        (
            f"  KV {m['kv_bytes_per_token']:,} B/token → {m['num_blocks']:,} blocks → {m['kv_cache_tokens']:,} tokens; "
            f"max concurrency {m['max_concurrency']:.2f}x at {launch['max_model_len']:,} tokens"
        ),
        f"  largest max-model-len that fits: {result.max_model_len_that_fits:,}",
        "  starts: yes" if result.fits else f"  starts: NO — vLLM would fail with:\n    {result.failure}",
    ]
    return "\n".join(lines + _recommended_lines(result, "per replica")) + "\n"


def render_cpu_text(result: AdviseResult, cpu: CpuKvSizing) -> str:
    """vLLM's CPU backend: the KV space divided into blocks, vLLM's capacity line or its error."""
    lines = [
        f"{result.model['name']} on vLLM's CPU backend, vLLM {cpu.vllm_version} (KV sizing replayed from 0.32.0)",
        "",
        f"As given ({cpu.kv_space_source}, block size {cpu.block_size}, max-model-len {cpu.max_model_len:,}):",
        (
            f"  KV space     {cpu.kv_space_bytes:>15,} B  ({cpu.kv_space_bytes / 1024**3:.2f} GiB; "
            f"the weights' {cpu.weights_gib:.2f} GiB are held beside it)"
        ),
        (
            f"  ÷ block      {cpu.bytes_per_block:>15,} B  ({cpu.block_size} tokens × "
            f"{cpu.kv_bytes_per_token:,} B/token)"
        ),
        f"  = blocks     {cpu.num_blocks:>15,}    (one is vLLM's null block)",
        f"  one request of {cpu.max_model_len:,} tokens: {cpu.blocks_per_request:,} blocks",
        f"  {cpu.log_line}"
        if cpu.log_line
        else (
            f"  would be {cpu.kv_cache_tokens:,} tokens, {cpu.max_concurrency:.2f}x at {cpu.max_model_len:,} tokens "
            "(vLLM stops before logging it)"
        ),
        f"  largest max-model-len that fits: {cpu.max_model_len_that_fits:,}",
        "  starts: yes" if cpu.fits else f"  starts: NO — vLLM would fail with:\n    {cpu.failure}",
    ]
    return "\n".join(lines + _recommended_lines(result, "")) + "\n"


def _recommended_lines(result: AdviseResult, scope: str) -> list[str]:
    """The recommended command with a reason per flag, what it holds, and the warnings."""
    lines = ["", "Recommended launch:", f"  {result.command}"]
    lines += [f"    {r.flag} {r.value}".rstrip() + f"  — {r.reason}" for r in result.recommendations]
    rec = result.recommended["memory"]
    lines.append(
        f"  → {rec['kv_cache_tokens']:,} KV tokens{' ' + scope if scope else ''}, max concurrency "
        f"{rec['max_concurrency']:.2f}x at {result.recommended['launch']['max_model_len']:,} tokens"
    )
    if result.warnings:
        lines += ["", "Warnings:"] + [f"  ! {w}" for w in result.warnings]
    return lines
