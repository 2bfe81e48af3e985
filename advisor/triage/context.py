"""The deployment behind a triage: which model, which device, and the memory model's view.

Separate from the decision (`run.py`) because it is where the advisor's catalogs meet the collected
facts: a model named on the command line must resolve (or the user hears why), while one
merely mentioned in a log may be unknown to the catalog — then triage carries on without
predictions and says so. The device comes from `--gpu`, `--gpu-memory-gib`, the bundled
engine's `--device-memory-gib`, or the total a startup error printed, in that order.
"""

from __future__ import annotations

import re
from pathlib import Path

from advisor.catalog.gpus import GpuSpec, gpu_from_memory, resolve_gpu
from advisor.catalog.models import ModelSpec, active_params, resolve_model
from advisor.collect.host import load_profile
from advisor.errors import UserError
from advisor.memory.budget import estimate_memory
from advisor.memory.kv_change import Deployment, launch_from_config
from advisor.memory.terms import GIB, blocks_per_request
from rules.events import LogEventKind
from rules.facts import Facts, Hardware, MemoryFacts, ModelFacts

ENGINE_DEFAULT_UTIL = 0.92  # the bundled engine's and vLLM ≥0.20's default
LOGGED_GIB_ROUNDING = 0.005  # vLLM logs memory as {:.2f} GiB


def gpu_spec_for(request, facts: Facts) -> GpuSpec | None:
    """The device one replica runs on, from the most explicit source available."""
    if request.gpu:
        return resolve_gpu(request.gpu)
    if request.gpu_memory_gib:
        return gpu_from_memory(request.gpu_memory_gib)
    device = facts.config.flags.get("--device-memory-gib") if facts.config else None
    if device:
        try:
            return gpu_from_memory(float(device))
        except (UserError, ValueError):
            return None
    event = facts.last_event(LogEventKind.FREE_MEMORY_BELOW_REQUESTED)
    if event is not None and event.total_gib and (event.device or "").upper() != "CPU":  # a CPU node is no GPU
        return gpu_from_memory(event.total_gib)
    return None


def model_spec_for(request, facts: Facts) -> tuple[ModelSpec | None, str | None]:
    """The model's architecture; an explicit --model must resolve, a logged name may not."""
    if request.model:
        return resolve_model(request.model), None
    name = facts.config.model if facts.config else None
    if not name:
        return None, None
    try:
        return resolve_model(name), None
    except UserError:
        pass
    # A logged path (vLLM logs `--model` as given) names a directory on the server's machine, which
    # this one may not have; its last part is the HF repository name the catalog knows it by.
    basename = Path(name).name
    if basename and basename != name:
        try:
            return resolve_model(basename), None
        except UserError:
            pass
    if _SHELL_VARIABLE.fullmatch(name):
        return None, (
            f"model {name!r} is a shell variable the pasted launch left unexpanded; pass --model (a catalog name or "
            "config.json) for predictions"
        )
    return None, f"model {name!r} is not in the catalog; pass --model (a catalog name or config.json) for predictions"


# `${MODEL}`, `$MODEL_PATH`: a launch copied from a script or a README before its shell expanded it.
_SHELL_VARIABLE = re.compile(r"\$\{?[A-Za-z_]\w*\}?")


def hardware_for(request, facts: Facts) -> Hardware | None:
    gpu = gpu_spec_for(request, facts)
    if gpu is None:
        return host_hardware(request.host_profile, facts) if request.host_profile else None
    tp = (facts.config.tensor_parallel_size if facts.config else None) or 1
    pp = (facts.config.pipeline_parallel_size if facts.config else None) or 1
    return Hardware(
        gpu_name=gpu.name,
        usable_gib=gpu.usable_gib,
        gpu_count=request.gpus or tp * pp,
        interconnect=gpu.interconnect,
        interconnect_gbps=gpu.interconnect_gbps_per_direction,
        fp8_supported=gpu.fp8_w8a8,
        memory_bandwidth_gbps=gpu.memory_bandwidth_tbps * 1000 if gpu.memory_bandwidth_tbps else None,
        bf16_tflops=gpu.bf16_tflops,
    )


def host_hardware(path: str, facts: Facts) -> Hardware:
    """A CPU server's device: the measured host at the cores its engine is bound to (vLLM's CPU backend
    logs them; otherwise every core the probe used)."""
    profile = load_profile(path)
    bound = facts.last_event(LogEventKind.CPU_THREADS_BIND)
    cores = bound.cpu_cores if bound is not None else None
    figures = profile.at(cores)
    where = f"{cores} bound core(s) per the log" if cores else "all probed cores (the log names no binding)"
    return Hardware(
        gpu_name=f"{profile.cpu_model}, {figures.threads} thread(s) measured ({where})",
        gpu_count=1,
        memory_bandwidth_gbps=figures.read_gbps,
        bf16_tflops=figures.peak_gflops / 1000,
        host_profile=path,
    )


def model_facts(request, facts: Facts) -> ModelFacts | None:
    spec, _ = model_spec_for(request, facts)
    if spec is None:
        return None
    return ModelFacts(
        name=spec.name,
        num_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_kv_heads=spec.num_key_value_heads,
        head_dim=spec.head_dim,
        hidden_size=spec.hidden_size,
        params_billion=spec.param_count / 1e9,
        active_params_billion=active_params(spec) / 1e9,
        max_position_embeddings=spec.max_position_embeddings,
        dtype_bytes=4.0 if spec.torch_dtype in ("float32", "float") else 2.0,
        is_mla=spec.attention == "mla",
        is_moe=spec.is_moe,
        sliding_window=spec.sliding_window,
        prequantized=spec.native_quantization,
    )


def memory_from_advisor(request, facts: Facts) -> MemoryFacts | None:
    """The memory model's figures when the log did not print vLLM's own."""
    deployment, _ = resolve_deployment(request, facts)
    if deployment is None:
        return None
    try:
        breakdown = estimate_memory(deployment.model, deployment.gpu, deployment.launch)
    except UserError:
        return None
    return MemoryFacts(
        total_gib=breakdown.total_gib,
        requested_gib=breakdown.requested_gib,
        weights_gib=breakdown.weights_gib,
        activation_peak_gib=breakdown.activation_gib,
        non_torch_gib=breakdown.non_torch_gib,
        cudagraph_gib=breakdown.cudagraph_gib,
        available_kv_gib=breakdown.kv_pool_gib,
        kv_bytes_per_token=float(breakdown.kv_bytes_per_token),
        kv_cache_tokens=breakdown.kv_cache_tokens,
        num_blocks=breakdown.num_blocks,
        block_size=breakdown.block_size,
        max_concurrency=breakdown.max_concurrency,
        max_model_len_that_fits=breakdown.max_model_len_that_fits,
        source="advisor",
    )


def resolve_deployment(request, facts: Facts) -> tuple[Deployment | None, list[str]]:
    """Model + device + launch (+ the KV pool the log measured), or None and why."""
    notes: list[str] = []
    try:
        spec, note = model_spec_for(request, facts)
    except UserError:
        raise
    if note:
        notes.append(note)
    gpu = gpu_spec_for(request, facts)
    if spec is None or gpu is None:
        if spec is not None and gpu is None:
            notes.append(_no_device_note(facts))
        return None, notes
    is_engine = bool(facts.config and "--device-memory-gib" in facts.config.flags)
    launch = launch_from_config(facts.config, ENGINE_DEFAULT_UTIL if is_engine else None)
    measured = None
    if facts.memory is not None and facts.memory.source == "startup_log":
        measured = _logged_pool_gib(Deployment(model=spec, gpu=gpu, launch=launch), facts.memory)
    return Deployment(model=spec, gpu=gpu, launch=launch, measured_kv_pool_gib=measured), notes


def _logged_pool_gib(deployment: Deployment, memory: MemoryFacts) -> float | None:
    """The KV pool the startup log measured, as finely as the log pins it.

    vLLM prints the available KV memory rounded to 0.01 GiB; on a small pool that rounding is
    worth thousands of tokens (0.005 GiB of a 135M model's KV is about 20,000). When the same
    error also printed its estimated maximum model length, one request of that length fits, so
    the pool holds at least its blocks, and (the estimate being the longest that fits) less than
    one block more; the midpoint, when larger than the printed figure (within its rounding),
    keeps a proposal of vLLM's own estimate predicted to start, as it does. V0 prints no GiB, only the tokens its
    blocks hold (`… maximum number of tokens that can be stored in KV cache (22688)`): the pool is those blocks.
    """
    printed = memory.available_kv_gib
    if not memory.max_model_len_that_fits:
        return printed
    try:
        breakdown = estimate_memory(deployment.model, deployment.gpu, deployment.launch)
    except UserError:
        return printed
    blocks = blocks_per_request(
        deployment.model, memory.max_model_len_that_fits, breakdown.block_size, breakdown.max_num_batched_tokens
    )
    implied = (blocks + 0.5) * breakdown.block_size * breakdown.kv_bytes_per_token / GIB
    if printed is None:  # V0 states the pool in tokens only: "… can be stored in KV cache (22688)"
        return implied
    return max(printed, min(implied, printed + LOGGED_GIB_ROUNDING))


def _no_device_note(facts: Facts) -> str:
    """Why no change is predicted; vLLM's CPU backend is sized by `servops advise --device cpu`, not --gpu."""
    if facts.config is not None and facts.config.device == "cpu":
        return (
            "vLLM's CPU backend: its KV space is given (VLLM_CPU_KVCACHE_SPACE / --kv-cache-memory-bytes), "
            "not a device size; `servops advise --device cpu --kv-cache-memory-bytes N` sizes a change"
        )
    return "device size unknown; pass --gpu or --gpu-memory-gib for predicted effects"
