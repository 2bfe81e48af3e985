"""vLLM's log wording, every version, as regexes that fill `rules.events.LogEvent` fields.

Kept apart from the reader (logs.py) because this is the part that grows with each vLLM
release: one `Pattern` per wording, matched against the message text only (never the
`[file.py:NNN]` location or the `(EngineCore_DP0 pid=…)` prefix, which change between
releases and processes). Numbers are normalised as the events contract asks: comma
thousands removed, percentages turned into fractions 0–1, GiB as floats.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rules.events import LogEventKind as K
from rules.events import OomPhase

Fields = dict[str, object]

NUM = r"-?[\d,]*\.?\d+"  # 162,704 · 24.0 · 3.18 · -1.44


def to_int(text: str | None) -> int | None:
    return int(float(text.replace(",", ""))) if text else None


def to_float(text: str | None) -> float | None:
    return float(text.replace(",", "")) if text else None


def to_gib(amount: str | None, unit: str | None) -> float | None:
    """`2.00 MiB` → 0.00195…; vLLM and torch print GiB, MiB or KiB (and 0.8.0 'GB')."""
    if amount is None:
        return None
    scale = {"GiB": 1.0, "GB": 1.0, "MiB": 1 / 1024, "KiB": 1 / 1024**2, "B": 1 / 1024**3}
    return to_float(amount) * scale.get(unit or "GiB", 1.0)


@dataclass(frozen=True, slots=True)
class Pattern:
    """One wording of one event kind, and how its groups become event fields."""

    kind: K
    regex: re.Pattern[str]
    fields: Callable[[re.Match[str]], Fields]
    keys: tuple[str, ...] = ()


def _p(
    keys: tuple[str, ...], kind: K, pattern: str, fields: Callable[[re.Match[str]], Fields] = lambda m: {}
) -> Pattern:
    """`keys`: literal texts one of which every line of this wording contains (the prefilter)."""
    return Pattern(kind, re.compile(pattern), fields, keys)


def _stats_fields(match: re.Match[str]) -> Fields:
    """The periodic stats line: 0.8.0 (no prefix), `Engine 000:`, DP-aggregated, V0 (Pending)."""
    text = match.string
    fields: Fields = {
        "engine": match.group("engine") or ("all" if match.group("engines") else None),
        "prompt_throughput_tps": to_float(match.group("prompt")),
        "generation_throughput_tps": to_float(match.group("gen")),
        "running": to_int(match.group("running")),
        "waiting": to_int(match.group("waiting")),
    }
    optional = {
        "deferred": (r"Deferred: (\d+) reqs", to_int),
        "preemptions": (r"Preemptions: (\d+)", to_int),
        "kv_usage": (r"(?:GPU|[A-Z][\w+ ]*?) KV cache usage: ([\d.]+)%", lambda t: to_float(t) / 100),
        "prefix_hit_rate": (r"Prefix cache hit rate: (?:GPU: )?([\d.]+)%", lambda t: to_float(t) / 100),
    }
    for name, (pattern, convert) in optional.items():
        found = re.search(pattern, text)
        if found:
            fields[name] = convert(found.group(1))
    return fields


def _spec_fields(match: re.Match[str]) -> Fields:
    text = match.string
    wanted = {
        "mean_acceptance_length": (r"Mean acceptance length: ([\d.]+)", to_float),
        "accepted_tps": (r"Accepted throughput: ([\d.]+)", to_float),
        "drafted_tps": (r"Drafted throughput: ([\d.]+)", to_float),
        "accepted_tokens": (r"Accepted: (\d+) tokens", to_int),
        "drafted_tokens": (r"Drafted: (\d+) tokens", to_int),
        "acceptance_rate": (r"Draft acceptance rate: ([\d.]+)%", lambda t: to_float(t) / 100),
    }
    fields: Fields = {}
    for name, (pattern, convert) in wanted.items():
        found = re.search(pattern, text)
        if found:
            fields[name] = convert(found.group(1))
    return fields


def _request_too_long(match: re.Match[str]) -> Fields:
    groups = match.groupdict()
    prompt = groups.get("prompt") or groups.get("prompt2") or groups.get("prompt3")
    total = groups.get("total") or groups.get("total2")
    return {
        "max_model_len": to_int(groups.get("limit")),
        "prompt_tokens": to_int(prompt),
        "requested_tokens": to_int(total),
    }


def _memory_below_requested(match: re.Match[str]) -> Fields:
    """vLLM's start-up memory check, worded for a GPU or a CPU NUMA node; the fraction is
    --gpu-memory-utilization on both (it also sets CPU memory on the CPU backend)."""
    return {
        "free_gib": to_float(match["free"]),
        "total_gib": to_float(match["total"]),
        "gpu_memory_utilization": to_float(match["util"]),
        "requested_gib": to_float(match["req"]),
    }


# Order matters only where one wording contains another: the first match of a line wins.
PATTERNS: tuple[Pattern, ...] = (
    # --- identity and configuration ---------------------------------------------------------
    _p(
        ("vLLM server version",),
        K.VERSION,
        r"vLLM server version (?P<v>\S+?),? serving model (?P<m>\S+)",
        lambda m: {"version": m["v"], "model": m["m"]},
    ),
    _p(
        ("vLLM API server version",),
        K.VERSION,
        r"vLLM API server version (?P<v>[^\s,]+)",
        lambda m: {"version": m["v"]},
    ),
    _p(  # the ASCII-art banner of 0.32 (entrypoints/utils api_utils.py) replaced "vLLM API server version X"
        ("█  version ",),
        K.VERSION,
        r"█\s+version (?P<v>\d[\w.+-]*)\s*$",
        lambda m: {"version": m["v"]},
    ),
    _p(
        ("Initializing a V1 LLM engine",),
        K.VERSION,
        r"Initializing a V1 LLM engine \(v(?P<v>[^)]+)\) with config: model='(?P<m>[^']*)'",
        lambda m: {"version": m["v"], "model": m["m"]},
    ),
    _p(("non-default args: ",), K.NON_DEFAULT_ARGS, r"non-default args: (?P<args>\{.*\})\s*$"),
    _p(("args: Namespace(",), K.NON_DEFAULT_ARGS, r"\bargs: (?P<args>Namespace\(.*\))\s*$"),
    _p(
        ("Chunked prefill is enabled",),
        K.CHUNKED_PREFILL,
        r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>[\d,]+)",
        lambda m: {"max_num_batched_tokens": to_int(m["n"])},
    ),
    # --- startup sizing ---------------------------------------------------------------------
    _p(
        ("Model loading took",),
        K.MODEL_LOADING,
        rf"Model loading took (?P<gib>{NUM}) (?P<unit>GiB|GB)(?: memory)? and (?P<s>{NUM}) seconds",
        lambda m: {"weights_gib": to_gib(m["gib"], m["unit"]), "load_seconds": to_float(m["s"])},
    ),
    _p(
        ("Available KV cache memory",),
        K.AVAILABLE_KV_MEMORY,
        rf"Available KV cache memory: (?P<gib>{NUM}) GiB",
        lambda m: {"available_kv_gib": to_float(m["gib"])},
    ),
    _p(  # vLLM's CPU backend (v1/worker/cpu_worker.py): the KV space it was given or derived, per NUMA node
        ("GiB for KV cache on node",),
        K.AVAILABLE_KV_MEMORY,
        rf"(?:Explicitly|Auto) set \((?P<gib>{NUM})/{NUM}\) GiB for KV cache on node \d+",
        lambda m: {"available_kv_gib": to_float(m["gib"])},
    ),
    _p(
        (" KV cache size: ",),
        K.KV_CACHE_SIZE,
        r"(?P<dev>[A-Za-z][\w+ ]*?) KV cache size: (?P<tok>[\d,]+) tokens"
        r"(?:, Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x)?",
        lambda m: {
            "device": m["dev"].strip(),
            "kv_cache_tokens": to_int(m["tok"]),
            "max_model_len": to_int(m["len"]),
            "max_concurrency": to_float(m["conc"]),
        },
    ),
    _p(
        ("Maximum concurrency for",),
        K.MAX_CONCURRENCY,
        r"Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x",
        lambda m: {"max_model_len": to_int(m["len"]), "max_concurrency": to_float(m["conc"])},
    ),
    _p(
        (" CPU blocks: ",),
        K.V0_GPU_BLOCKS,
        r"# (?P<dev>\w+) blocks: (?P<n>\d+), # CPU blocks: \d+",
        lambda m: {"device": m["dev"], "num_gpu_blocks": int(m["n"])},
    ),
    _p(
        ("Graph capturing finished",),
        K.CUDA_GRAPH_MEMORY,
        rf"Graph capturing finished in {NUM} secs?, took (?P<gib>{NUM}) GiB",
        lambda m: {"cudagraph_gib": to_float(m["gib"])},
    ),
    _p(
        ("CUDA graph pool memory",),
        K.CUDA_GRAPH_MEMORY,
        rf"CUDA graph pool memory: (?P<gib>{NUM}) GiB \(actual\)(?:, (?P<est>{NUM}) GiB \(estimated\))?",
        lambda m: {"cudagraph_gib": to_float(m["gib"]), "cudagraph_estimated_gib": to_float(m["est"])},
    ),
    _p(
        ("CUDA graph memory profiling is enabled",),
        K.CUDAGRAPH_PROFILING,
        rf"CUDA graph memory profiling is enabled.*?current --gpu-memory-utilization=(?P<cur>{NUM}) is equivalent "
        rf"to --gpu-memory-utilization=(?P<eq>{NUM})",
        lambda m: {
            "cudagraph_profiling": True,
            "gpu_memory_utilization": to_float(m["cur"]),
            "equivalent_utilization": to_float(m["eq"]),
        },
    ),
    _p(
        ("CUDA graph memory profiling is disabled",),
        K.CUDAGRAPH_PROFILING,
        r"CUDA graph memory profiling is disabled",
        lambda m: {"cudagraph_profiling": False},
    ),
    _p(
        ("Auto-fit max_model_len",),
        K.AUTO_FIT,
        r"Auto-fit max_model_len: reduced from (?P<a>[\d,]+) to (?P<b>[\d,]+) to fit in available KV cache memory"
        rf"(?: \((?P<gib>{NUM}) ?GiB\))?",
        lambda m: {
            "max_model_len": to_int(m["a"]),
            "estimated_max_model_len": to_int(m["b"]),
            "available_kv_gib": to_float(m["gib"]),
        },
    ),
    _p(  # v1/engine/core.py: the engine finished starting ("took 67.93 s" in 0.32, "seconds" before)
        ("init engine (profile, create kv cache, warmup model) took",),
        K.ENGINE_READY,
        rf"init engine \(profile, create kv cache, warmup model\) took (?P<s>{NUM}) s",
        lambda m: {"init_seconds": to_float(m["s"])},
    ),
    # --- periodic stats -----------------------------------------------------------------------
    _p(
        ("Avg prompt throughput",),
        K.STATS_LINE,
        r"(?:Engine (?P<engine>\d+): |(?P<engines>\d+) Engines Aggregated: )?"
        r"Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
        r"Running: (?P<running>\d+) reqs, (?:Swapped: \d+ reqs, Pending|Waiting): (?P<waiting>\d+) reqs",
        _stats_fields,
    ),
    _p(("SpecDecoding metrics",), K.SPEC_DECODE_METRICS, r"SpecDecoding metrics: ", _spec_fields),
    _p(
        ("is preempted by PreemptionMode",),
        K.V0_PREEMPTION_WARNING,
        r"Sequence group \S+ is preempted by PreemptionMode\.\w+.*?"
        r"(?:total_(?:num_)?cumulative_preemption(?:_cnt)?=(?P<n>\d+))?$",
        lambda m: {"total_preemptions": to_int(m["n"])},
    ),
    _p(("disabling stats logging",), K.STATS_DISABLED, r"disabling stats logging"),
    # --- startup failures ---------------------------------------------------------------------
    _p(
        ("To serve at least one request",),
        K.MAX_MODEL_LEN_TOO_LARGE,
        r"To serve at least one request with the models?'s max seq len \((?P<len>[\d,]+)\), "
        rf"\((?P<need>{NUM}) GiB KV cache is needed, which is larger than the available KV cache memory "
        rf"\((?P<avail>{NUM}) GiB\)(?:.*?estimated maximum model length is (?P<est>[\d,]+))?",
        lambda m: {
            "max_model_len": to_int(m["len"]),
            "kv_needed_gib": to_float(m["need"]),
            "available_kv_gib": to_float(m["avail"]),
            "estimated_max_model_len": to_int(m["est"]),
        },
    ),
    _p(
        ("maximum number of tokens that can be stored",),
        K.V0_MAX_SEQ_LEN_TOO_LARGE,
        r"The model's max seq len \((?P<len>[\d,]+)\) is larger than the maximum number of tokens that can be "
        r"stored in KV cache \((?P<kv>[\d,]+)\)",
        lambda m: {"max_model_len": to_int(m["len"]), "max_seq_len_tokens": to_int(m["kv"])},
    ),
    _p(("No available memory for the cache blocks",), K.NO_CACHE_BLOCKS, r"No available memory for the cache blocks"),
    _p(
        ("less than desired GPU memory utilization",),
        K.FREE_MEMORY_BELOW_REQUESTED,
        rf"Free memory on device(?: \S+)? \((?P<free>{NUM})/(?P<total>{NUM}) GiB\) on startup is less than "
        rf"desired GPU memory utilization \((?P<util>{NUM}), (?P<req>{NUM}) GiB\)",
        _memory_below_requested,
    ),
    _p(  # vLLM's CPU backend (v1/worker/cpu_worker.py, 0.32): the same check against the NUMA node's memory
        ("less than desired CPU memory utilization",),
        K.FREE_MEMORY_BELOW_REQUESTED,
        rf"Available memory on node \d+ \((?P<free>{NUM})/(?P<total>{NUM}) GiB\) on startup is less than "
        rf"desired CPU memory utilization \((?P<util>{NUM}), (?P<req>{NUM}) GiB\)",
        lambda m: {**_memory_below_requested(m), "device": "CPU"},
    ),
    _p(
        ("Error in memory profiling",),
        K.MEMORY_PROFILING_ERROR,
        rf"Error in memory profiling\. Initial free memory (?P<a>{NUM}) ?GiB, current free memory (?P<b>{NUM}) ?GiB",
        lambda m: {"initial_free_gib": to_float(m["a"]), "current_free_gib": to_float(m["b"])},
    ),
    _p(
        ("Failed to load model - not enough GPU memory",),
        K.CUDA_OOM,
        r"Failed to load model - not enough GPU memory",
        lambda m: {"oom_phase": OomPhase.WEIGHT_LOAD},
    ),
    _p(
        ("out of memory occurred when warming up",),
        K.CUDA_OOM,
        r"out of memory occurred when warming up (?:sampler|pooler).*? with (?P<n>\d+) dummy requests",
        lambda m: {"oom_phase": OomPhase.SAMPLER_WARMUP, "num_dummy_requests": int(m["n"])},
    ),
    _p(
        ("CUDA out of memory",),
        K.CUDA_OOM,
        rf"CUDA out of memory\. Tried to allocate (?P<try>{NUM}) (?P<tu>[KMG]iB)\. GPU \d+ has a total capac(?:i)?ty "
        rf"of (?P<total>{NUM}) GiB of which (?P<free>{NUM}) (?P<fu>[KMG]iB|bytes) is free",
        lambda m: {
            "tried_to_allocate_gib": to_gib(m["try"], m["tu"]),
            "total_gib": to_float(m["total"]),
            "free_gib": to_gib(m["free"], "B" if m["fu"] == "bytes" else m["fu"]),
        },
    ),
    _p(
        ("OutOfMemoryError", "CUDA out of memory"),
        K.CUDA_OOM,
        r"(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory)",
    ),
    _p(
        ("Engine core initialization failed", "EngineCore failed to start"),
        K.ENGINE_CORE_FAILED,
        r"Engine core initialization failed.*|EngineCore failed to start\.?",
        lambda m: {"message": m.group(0)},
    ),
    # --- runtime failures ---------------------------------------------------------------------
    _p(
        ("EngineCore encountered a fatal error",),
        K.FATAL_ERROR,
        r"EngineCore encountered a fatal error",
        lambda m: {"message": m.group(0)},
    ),
    _p(
        ("EngineDeadError", "AsyncLLM output_handler failed"),
        K.ENGINE_DEAD,
        r"EngineDeadError.*|AsyncLLM output_handler failed\.?",
        lambda m: {"message": m.group(0)},
    ),
    _p(
        ("RPC call to ",),
        K.RPC_TIMEOUT,
        r"RPC call to (?P<method>\w+) timed out",
        lambda m: {"rpc_method": m["method"]},
    ),
    _p(
        ("No available shared memory broadcast block",),
        K.SHM_BROADCAST_HANG,
        r"No available shared memory broadcast block found in (?P<s>[\d.]+) seconds?",
        lambda m: {"hang_seconds": to_float(m["s"])},
    ),
    _p(
        ("died unexpectedly",),
        K.WORKER_DIED,
        r"(?P<who>Worker proc|Engine core proc(?:ess)?) (?P<name>\S+) died unexpectedly"
        r"(?:.*?exit code:? (?P<code>-?\d+))?",
        lambda m: {"process": m["name"], "exit_code": to_int(m["code"])},
    ),
    _p(
        ("Watchdog caught collective operation timeout",),
        K.NCCL_WATCHDOG_TIMEOUT,
        r"\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(.*?OpType=(?P<op>\w+)"
        r".*?Timeout\(ms\)=(?P<t>\d+)\) ran for (?P<ran>\d+) milliseconds",
        lambda m: {"rank": int(m["rank"]), "op_type": m["op"], "timeout_ms": int(m["t"]), "ran_ms": int(m["ran"])},
    ),
    _p(("NCCL error in: ",), K.NCCL_ERROR, r"NCCL error in: .*", lambda m: {"message": m.group(0)}),
    # --- request errors (client-facing text that also reaches logs) -----------------------------
    _p(
        ("is too large: ",),
        K.REQUEST_TOO_LONG,
        r"'max_tokens' or 'max_completion_tokens' is too large: (?P<maxtok>\d+)\. This model's maximum context "
        r"length is (?P<limit>[\d,]+) tokens and your request has (?P<prompt>[\d,]+) input tokens",
        _request_too_long,
    ),
    _p(
        ("maximum context length is",),
        K.REQUEST_TOO_LONG,
        r"This model's maximum context length is (?P<limit>[\d,]+) tokens\. However, (?:"
        r"you requested (?P<total>[\d,]+) tokens(?: \((?P<prompt>[\d,]+) in the messages)?"
        r"|your request has (?P<prompt2>[\d,]+) input tokens"
        r"|you requested \d+ output tokens and your prompt contains (?:at least )?(?P<prompt3>[\d,]+) input tokens, "
        r"for a total of (?:at least )?(?P<total2>[\d,]+) tokens"
        r"|your prompt contains (?:at least )?(?P<prompt4>[\d,]+) input tokens)",
        lambda m: {
            **_request_too_long(m),
            "prompt_tokens": to_int(m["prompt"] or m["prompt2"] or m["prompt3"] or m["prompt4"]),
        },
    ),
    _p(
        ("The decoder prompt",),
        K.REQUEST_TOO_LONG,
        r"The decoder prompt \(length (?P<prompt>\d+)\) is longer than the maximum model length of (?P<limit>\d+)",
        _request_too_long,
    ),
)


# One pass over a line finds which wordings can possibly match: most lines of a busy server's log
# (access lines, request logs) contain none of the keys and cost one regex search, not one per wording.
_BY_KEY: dict[str, list[int]] = {}
for _index, _pattern in enumerate(PATTERNS):
    for _key in _pattern.keys:
        _BY_KEY.setdefault(_key, []).append(_index)
_TRIGGER = re.compile("|".join(re.escape(key) for key in sorted(_BY_KEY, key=len, reverse=True)))


def candidates(message: str) -> list[Pattern]:
    """The patterns worth trying on `message`, in table order (first match wins).

    One combined search rejects the common line; for the rest, plain substring tests (keys can
    overlap in one line, e.g. "CUDA out of memory occurred when warming up", which a single
    non-overlapping scan would miss).
    """
    if _TRIGGER.search(message) is None:
        return []
    found = {index for key, indexes in _BY_KEY.items() if key in message for index in indexes}
    return [PATTERNS[index] for index in sorted(found)]
