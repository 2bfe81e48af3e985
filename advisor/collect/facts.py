"""Assemble what the collectors read into the parts of `rules.facts.Facts` they imply.

The server's configuration and its memory figures are each told by several sources at
once — the user's `--server-args`, the log's `non-default args` line, the startup sizing
lines, `vllm:cache_config_info` — and this module decides, field by field, which one to
believe (explicit flags over effective values over nothing) and records where each came
from, so a rule can tell a user's choice from a default.
"""

from __future__ import annotations

import re

from advisor.catalog.vllm_versions import parse_bounds, version_of, vllm_cpu_defaults
from advisor.collect.kv_space import parse_kv_cache_memory_bytes
from advisor.collect.server_args import SHORT_FLAGS, ServeCommand, command_from_args, command_from_cache_config
from advisor.errors import UserError
from advisor.units import MAX_KV_TOKENS, MAX_MEMORY_GIB
from rules import vllm_defaults
from rules.events import LogEvent, LogEventKind
from rules.facts import ConfigSource, MemoryFacts, ServerConfig, flag_name
from rules.metrics import MetricSnapshot

# ServerConfig's typed fields, with the type their flag text converts to.
_TYPED_FIELDS: dict[str, type] = {
    "max_model_len": int,
    "max_num_seqs": int,
    "max_num_batched_tokens": int,
    "gpu_memory_utilization": float,
    "block_size": int,
    "enable_prefix_caching": bool,
    "enable_chunked_prefill": bool,
    "kv_cache_dtype": str,
    "enforce_eager": bool,
    "tensor_parallel_size": int,
    "pipeline_parallel_size": int,
    "data_parallel_size": int,
    "quantization": str,
    "dtype": str,
    "speculative_config": str,
    "api_server_count": int,
    "num_gpu_blocks_override": int,
    "device": str,
}
# startup lines that state max-model-len, the memory fraction or the device even at their defaults
_SIZING_KINDS = frozenset(
    {
        LogEventKind.KV_CACHE_SIZE,
        LogEventKind.MAX_CONCURRENCY,
        LogEventKind.MAX_MODEL_LEN_TOO_LARGE,
        LogEventKind.FREE_MEMORY_BELOW_REQUESTED,
        LogEventKind.MEMORY_BUDGET,
    }
)
# vLLM's device_config value for its CPU backend (the engine-config line, `CPU KV cache size`).
CPU_DEVICE = "cpu"
# The bundled engine also prints device_config=cpu, but it is not vLLM's CPU backend (other flags,
# other KV sizing): its banner says `0.33.0+servops.<ver>` (engine/api/server.py), its engine line
# servops' own version, older than any vLLM V1.
BUNDLED_ENGINE_MARK = vllm_defaults.BUNDLED_VERSION_MARK  # the bundled engine reports `0.33.0+servops.<ver>`
# keys of vLLM's "Initializing a V1 LLM engine … with config:" line → ServerConfig fields
_ENGINE_CONFIG_NAMES = {
    "dtype": "dtype",
    "max_seq_len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size",
    "data_parallel_size": "data_parallel_size",
    "quantization": "quantization",
    "enforce_eager": "enforce_eager",
    "kv_cache_dtype": "kv_cache_dtype",
    "enable_prefix_caching": "enable_prefix_caching",
    "chunked_prefill_enabled": "enable_chunked_prefill",
    "block_size": "block_size",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "device_config": "device",
}
_ENGINE_CONFIG_KEY = re.compile(r"(?:^|, )(\w+)=('[^']*'|[^,]*)")
# a modelled (advisor) figure must not stand in for these beside a measured source
_MEASURED_ONLY = frozenset(
    {"available_kv_gib", "kv_cache_tokens", "num_blocks", "max_concurrency", "max_model_len_that_fits"}
)
_ORIGIN_TO_SOURCE = {
    "server-args": ConfigSource.ARGS,
    "log": ConfigSource.ARGS,
    "metrics": ConfigSource.CACHE_CONFIG_INFO,
}


def effective_command(
    server_args: ServeCommand | None, events: list[LogEvent], snapshot: MetricSnapshot | None
) -> ServeCommand | None:
    """The server's flags from every source, the user's own command line winning."""
    layers: list[ServeCommand] = []
    cache_labels = cache_config_labels(snapshot)
    if cache_labels:
        layers.append(command_from_cache_config(cache_labels))
    for event in events:
        if event.kind == LogEventKind.NON_DEFAULT_ARGS and event.args:
            layers.append(command_from_args(event.args, origin="log"))
    if server_args is not None:
        layers.append(server_args)
    if not layers:
        return None
    merged = layers[0]
    for stronger in layers[1:]:
        merged = merged.merged_under(stronger)
    return merged


def server_config(
    command: ServeCommand | None, events: list[LogEvent], snapshot: MetricSnapshot | None
) -> ServerConfig | None:
    """A `ServerConfig` from the effective command, startup log lines and cache_config_info."""
    config = ServerConfig()
    if command is not None:
        config.model = command.model
        config.env = dict(command.env)
        for raw_flag, value in command.flags.items():
            flag = SHORT_FLAGS.get(raw_flag, raw_flag)
            text, flag = ("false", "--" + flag[5:]) if flag.startswith("--no-") else (value or "true", flag)
            config.flags[flag] = text
            source = _ORIGIN_TO_SOURCE.get(command.origin.get(raw_flag, "server-args"), ConfigSource.ARGS)
            if _set_typed(config, flag, text):
                config.sources[flag] = source
    _fill_from_log(config, events)
    config.model = config.model or served_model_name(snapshot)
    labels = cache_config_labels(snapshot)
    if labels.get("num_gpu_blocks") not in (None, "", "None"):
        config.num_gpu_blocks = _int(labels["num_gpu_blocks"])
    if config.block_size is None and _int(labels.get("block_size")):
        config.block_size = _int(labels["block_size"])  # the effective size, also when not the user's flag
        config.sources[flag_name("block_size")] = ConfigSource.CACHE_CONFIG_INFO
    _settle_cpu_backend(config)
    empty = ServerConfig()
    return None if config == empty else config


def _settle_cpu_backend(config: ServerConfig) -> None:
    """On vLLM's CPU backend, fill the batch defaults and block size it picks (advisor/catalog/vllm_versions.py):
    its log never prints them, so without this triage would assume the GPU's. The bundled engine
    also runs on a CPU but is not that backend: its device is left unset."""
    if config.device != CPU_DEVICE:
        return
    version = version_of(config.vllm_version)
    if version is not None and (version < parse_bounds()[0] or BUNDLED_ENGINE_MARK in config.vllm_version):
        config.device = None  # the bundled engine: CPU, but none of vLLM's CPU-backend rules apply
        config.sources.pop(flag_name("device"), None)
        return
    world_size = (config.tensor_parallel_size or 1) * (config.pipeline_parallel_size or 1)
    defaults = vllm_cpu_defaults(version, world_size) if version else None
    for name, value in (defaults or {}).items():
        if getattr(config, name) is None:
            setattr(config, name, value)
            config.sources[flag_name(name)] = ConfigSource.DEFAULT


def startup_compile_note(events: list[LogEvent]) -> str | None:
    """A shm_broadcast wait before the engine finished starting is compilation (HL-1 skips it): say so."""
    waits = [e for e in events if e.kind == LogEventKind.SHM_BROADCAST_HANG and e.during_startup]
    if not waits:
        return None
    ready = next((e for e in events if e.kind == LogEventKind.ENGINE_READY and e.init_seconds is not None), None)
    took = f"; init engine took {ready.init_seconds:g} s" if ready else "; the engine had not finished starting"
    where = waits[0].where() or "the log"
    return (
        f"start-up compiled: {len(waits)} shm_broadcast wait(s) before the engine was ready ({where}){took}; "
        "compilation at start, not a hang"
    )


def cpu_backend_note(config: ServerConfig | None) -> str | None:
    """Say that the server is vLLM's CPU backend and which of its own defaults triage assumed."""
    if config is None or config.device != CPU_DEVICE:
        return None
    assumed = [
        f"{flag} {getattr(config, flag.lstrip('-').replace('-', '_'))}"
        for flag, source in config.sources.items()
        if source == ConfigSource.DEFAULT
    ]
    defaults = f"; its defaults there, not in the log: {', '.join(assumed)}" if assumed else ""
    return f"vLLM {config.vllm_version or '?'} on its CPU backend (device_config=cpu){defaults}"


def memory_from_log(events: list[LogEvent]) -> MemoryFacts | None:
    """The memory figures vLLM itself printed at startup (its own truth, when present), less those no
    server can have (units.MAX_KV_TOKENS, MAX_MEMORY_GIB): a corrupt or hand-edited log's 10^13 tokens
    is a misreading, and taken as the pool it would size every replay by it."""
    memory = MemoryFacts(source="startup_log")
    for event in events:
        if event.kind == LogEventKind.MODEL_LOADING and event.weights_gib is not None:
            memory.weights_gib = _gib(event.weights_gib)
        elif event.kind == LogEventKind.AVAILABLE_KV_MEMORY:
            memory.available_kv_gib = _gib(event.available_kv_gib)
            memory.weights_gib = _gib(event.weights_gib) or memory.weights_gib  # V0's profile states them all
            memory.non_torch_gib = _gib(event.non_torch_gib) or memory.non_torch_gib
            memory.activation_peak_gib = _gib(event.activation_peak_gib) or memory.activation_peak_gib
        elif event.kind == LogEventKind.KV_CACHE_EXTENDED:  # 0.34: the measured pool replaces the estimate
            memory.available_kv_gib = _gib(event.available_kv_gib) or memory.available_kv_gib
            memory.num_blocks = _tokens(event.num_gpu_blocks) or memory.num_blocks
        elif event.kind == LogEventKind.MEMORY_BUDGET:
            memory.total_gib, memory.requested_gib = _gib(event.total_gib), _gib(event.requested_gib)
            memory.activation_peak_gib = _gib(event.activation_peak_gib) or memory.activation_peak_gib
            memory.cudagraph_gib = memory.cudagraph_gib or _gib(event.cudagraph_gib)
        elif event.kind == LogEventKind.KV_CACHE_SIZE:
            memory.kv_cache_tokens = _tokens(event.kv_cache_tokens)
            memory.max_concurrency = event.max_concurrency or memory.max_concurrency
        elif event.kind == LogEventKind.MAX_CONCURRENCY:
            memory.max_concurrency = event.max_concurrency
        elif event.kind == LogEventKind.V0_GPU_BLOCKS:
            memory.num_blocks = _tokens(event.num_gpu_blocks)
        elif event.kind == LogEventKind.CUDA_GRAPH_MEMORY:  # the estimate and old releases' capture time say no size
            memory.cudagraph_gib = _gib(event.cudagraph_gib) or memory.cudagraph_gib
        elif event.kind == LogEventKind.MAX_MODEL_LEN_TOO_LARGE:
            memory.available_kv_gib = _gib(event.available_kv_gib)
            memory.max_model_len_that_fits = _tokens(event.estimated_max_model_len)
        elif event.kind == LogEventKind.V0_MAX_SEQ_LEN_TOO_LARGE:
            memory.max_model_len_that_fits = _tokens(event.max_seq_len_tokens)
        elif event.kind == LogEventKind.FREE_MEMORY_BELOW_REQUESTED:
            memory.total_gib = _gib(event.total_gib)
            memory.requested_gib = _gib(event.requested_gib)
    return None if memory == MemoryFacts(source="startup_log") else memory


def _tokens(value: int | None) -> int | None:
    """A count of tokens or blocks a server can have, else None."""
    return value if value is not None and 0 <= value <= MAX_KV_TOKENS else None


def _gib(value: float | None) -> float | None:
    """A memory figure in GiB one server can have, else None."""
    return value if value is not None and 0 <= value <= MAX_MEMORY_GIB else None


def memory_from_metrics(snapshot: MetricSnapshot | None) -> MemoryFacts | None:
    """KV pool size from `vllm:cache_config_info`: measured, not modelled. vLLM 0.32 labels the
    tokens and concurrency it logged (`kv_cache_size_tokens`, `kv_cache_max_concurrency`); older
    servers give num_gpu_blocks × block_size."""
    labels = cache_config_labels(snapshot)
    blocks, block_size = _tokens(_int(labels.get("num_gpu_blocks", ""))), _int(labels.get("block_size", ""))
    if not blocks or not block_size or block_size > MAX_KV_TOKENS:
        return None
    tokens = _tokens(_int(labels.get("kv_cache_size_tokens")) or blocks * block_size)
    return MemoryFacts(
        num_blocks=blocks,
        block_size=block_size,
        kv_cache_tokens=tokens,
        max_concurrency=_float(labels.get("kv_cache_max_concurrency")),
        source="cache_config_info",
    )


def merge_memory(*layers: MemoryFacts | None) -> MemoryFacts | None:
    """The first layer's figures, gaps filled from the next ones (log › metrics › advisor)."""
    present = [layer for layer in layers if layer is not None]
    if not present:
        return None
    merged = present[0].model_copy()
    for layer in present[1:]:
        for name in MemoryFacts.model_fields:
            if name == "source" or (layer.source == "advisor" and name in _MEASURED_ONLY):
                continue
            if getattr(merged, name) is None:
                setattr(merged, name, getattr(layer, name))
    return merged


def cache_config_labels(snapshot: MetricSnapshot | None) -> dict[str, str]:
    """The labels of `vllm:cache_config_info` (engine 0's when there are several)."""
    if snapshot is None:
        return {}
    samples = snapshot.samples("vllm:cache_config_info")
    return dict(samples[0].labels) if samples else {}


def served_model_name(snapshot: MetricSnapshot | None) -> str | None:
    """The `model_name` label vLLM puts on every serving metric: the name it serves under, which is
    the model's repository id unless `--served-model-name` renamed it. Why: with only /metrics at
    hand (no log, no --server-args) it is the one place the model is named, and the physical floors
    need the model's size."""
    if snapshot is None:
        return None
    for sample in snapshot.samples("vllm:num_requests_running"):
        name = sample.labels.get("model_name")
        if name:
            return name
    return None


def _fill_from_log(config: ServerConfig, events: list[LogEvent]) -> None:
    """Figures the startup log states even when the flag was left at its default."""
    for event in events:
        if event.kind == LogEventKind.VERSION:
            # the server's banner comes first; the engine-config line may carry another number (0.2-0.3's none)
            config.vllm_version = config.vllm_version or event.version
            config.model = config.model or event.model
            _fill_from_engine_config(config, event.raw)
        elif event.kind == LogEventKind.CHUNKED_PREFILL and config.max_num_batched_tokens is None:
            config.max_num_batched_tokens = event.max_num_batched_tokens
            config.sources[flag_name("max_num_batched_tokens")] = ConfigSource.STARTUP_LOG
        elif event.kind in _SIZING_KINDS:
            _fill_device(config, event.device)
            _fill_from_sizing(config, event)
        elif event.kind == LogEventKind.ATTENTION_BLOCK_SIZE and event.block_size:
            config.block_size = event.block_size  # vLLM raised the user's --block-size (or its default) to this
            config.sources[flag_name("block_size")] = ConfigSource.STARTUP_LOG
        elif event.kind == LogEventKind.STATS_DISABLED and config.api_server_count is None:
            config.api_server_count = 2  # vLLM disables stats only when there is more than one
            config.sources[flag_name("api_server_count")] = ConfigSource.STARTUP_LOG


def _fill_device(config: ServerConfig, device: str | None) -> None:
    """`CPU KV cache size` / `… desired CPU memory utilization`: the device the sizing ran on."""
    if config.device is None and device and device.upper() in ("CPU", "GPU"):
        config.device = CPU_DEVICE if device.upper() == "CPU" else "cuda"
        config.sources[flag_name("device")] = ConfigSource.STARTUP_LOG


def _fill_from_sizing(config: ServerConfig, event: LogEvent) -> None:
    """Values a sizing line or startup error states: max-model-len, the memory fraction."""
    found = {"max_model_len": event.max_model_len, "gpu_memory_utilization": event.gpu_memory_utilization}
    for name, value in found.items():
        if value is not None and getattr(config, name) is None:
            setattr(config, name, value)
            config.sources[flag_name(name)] = ConfigSource.STARTUP_LOG


def _fill_from_engine_config(config: ServerConfig, raw: str) -> None:
    """`Initializing a V1 LLM engine (v…) with config: model=…, dtype=torch.bfloat16, max_seq_len=…`:
    the effective values, including those left at their defaults (dtype on a CPU is float32)."""
    _, found, text = raw.partition("with config: ")
    if not found:
        return
    for key, value in _ENGINE_CONFIG_KEY.findall(text):
        name = _ENGINE_CONFIG_NAMES.get(key)
        if name is None or getattr(config, name, None) is not None:
            continue
        value = value.strip().strip("'\"").removeprefix("torch.")
        if value in ("None", ""):
            continue
        flag = flag_name(name)
        if _set_typed(config, flag, value):
            config.sources[flag] = ConfigSource.STARTUP_LOG


def _set_typed(config: ServerConfig, flag: str, text: str) -> bool:
    name = flag.lstrip("-").replace("-", "_")
    if name == "model":
        config.model = text
        return True
    if name == "kv_cache_memory_bytes":  # takes vLLM's suffixes: 1G, 512M, 5e8 …
        config.kv_cache_memory_bytes = _bytes(text)
        return config.kv_cache_memory_bytes is not None
    kind = _TYPED_FIELDS.get(name)
    if kind is None or name not in ServerConfig.model_fields:
        return False
    value: object
    if kind is bool:
        value = text.lower() in ("true", "1", "yes", "on")
    elif kind is int:
        value = _int(text)
    elif kind is float:
        try:
            value = float(text)
        except ValueError:
            value = None
    else:
        value = text
    if value is None:
        return False
    setattr(config, name, value)
    return True


def _bytes(text: str) -> int | None:
    try:
        return parse_kv_cache_memory_bytes(text)
    except UserError:
        return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "", "None") else None
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return int(float(text.replace(",", "").replace("_", "")))
    except (ValueError, OverflowError):  # not a number; inf or NaN
        return None
