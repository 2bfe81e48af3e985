"""What several rule families share: vLLM's defaults, the latency targets, shared thresholds, helpers.

Kept in one public place so that "what is the current --gpu-memory-utilization?" or "what is the
ITL target?" has one answer across the catalog, and so that a threshold two families compare against
is one constant, formatted into both their pages. vLLM's defaults themselves are rules/vllm_defaults.py's
table (shared with the advisor); the functions here read it for the server the facts describe.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from rules import signals, vllm_defaults
from rules.events import STARTUP_FAILURE_KINDS, CatalogRef, LogEvent, LogEventKind
from rules.facts import ConfigSource, Facts
from rules.model import ConfigChange, Evidence, Finding, Severity

# Names the families quote in proposals and pages, bound to the table (rules/vllm_defaults.py):
# 2048 is the API server's budget below 70 GiB, the one OP-5 offers for ITL and OP-1 for activations.
DEFAULT_MAX_NUM_BATCHED_TOKENS = vllm_defaults.BASE_MAX_NUM_BATCHED_TOKENS
DEFAULT_GPU_MEMORY_UTILIZATION = vllm_defaults.GPU_MEMORY_UTILIZATION  # vLLM 0.20 and later
DEFAULT_GPU_MEMORY_UTILIZATION_BEFORE_0_20 = vllm_defaults.GPU_MEMORY_UTILIZATION_BEFORE_0_20
SAFE_MAX_GPU_MEMORY_UTILIZATION = 0.95
# How far a proposal lowers --gpu-memory-utilization to make room outside the KV pool when nothing sizes it
# (an OOM with its allocation figures is sized from them: rules/catalog/op1_oom.py).
UTIL_STEP = 0.05
# Latency targets when the workload gives none (workload SLOs replace them).
DEFAULT_TTFT_SLO_S = 2.0
DEFAULT_ITL_SLO_S = 0.1
# Thresholds two families compare against (docs/reference.md §5 pairs).
KV_HIGH = 0.90  # KV usage: the cache is full (OP-5.2 saturation, OP-5.3 preemptions)
WEIGHTS_SHARE_HIGH = 0.75  # weights above this share of GPU memory leave little for KV (OP-1.2, OP-2.1)
REUSE_WORTH_CACHING = 0.30  # prefix reuse share worth a cache (OP-4, AP-3)
FITS_ONE_GPU_SHARE = 0.6  # weights below this share of one GPU leave room for KV on a single GPU (OP-3, AP-7)
NVLINK_DOMAIN_GPUS = 8  # GPUs on one HGX/DGX NVLink board (assumption: no NVL72-class racks)
# Events that name why a start failed: the failures OP-1 explains, vLLM's own messages (VC-1) and any exception
# (VC-2). OP-1.9 ("no known cause") and OP-1.11 (a dying API server read as the engine-ready wait) stay silent when
# one is in the text.
STARTUP_CAUSE_KINDS = (*STARTUP_FAILURE_KINDS, LogEventKind.VLLM_MESSAGE, LogEventKind.UNPLACED_ERROR)
# The environment variable that forces vLLM's attention backend (HL-4, HL-6, OP-5.29).
ATTENTION_BACKEND_ENV = "VLLM_ATTENTION_BACKEND"
OPTIMIZATION_DOCS = "https://docs.vllm.ai/en/latest/configuration/optimization.html"
CONSERVING_MEMORY_DOCS = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"  # OP-1
METRICS_DOCS = "https://docs.vllm.ai/en/latest/design/metrics.html"
TTFT = "vllm:time_to_first_token_seconds"
ITL = "vllm:inter_token_latency_seconds"
PROMPT_TOKENS = "vllm:request_prompt_tokens"


def clock(seconds: float | None) -> str:
    """A duration as people read one in a log: `9 min 36 s`, or `42 s` under a minute."""
    minutes, rest = divmod(int(seconds or 0), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def percent(share: float) -> str:
    """A share as pages write it: 0.3 -> "30 %" (titles use Python's `:.0%`, "30%")."""
    return f"{round(share * 100, 6):g} %"


def ttft_slo(facts: Facts) -> float:
    return facts.workload.ttft_slo_s if facts.workload and facts.workload.ttft_slo_s else DEFAULT_TTFT_SLO_S


def itl_slo(facts: Facts) -> float:
    return facts.workload.itl_slo_s if facts.workload and facts.workload.itl_slo_s else DEFAULT_ITL_SLO_S


def over(signal: signals.Signal | None, threshold: float, unit: str = "s") -> Evidence | None:
    """The signal's evidence with the threshold it is compared against (">" when above, else "<=")."""
    if signal is None:
        return None
    return signal.evidence.model_copy(
        update={"threshold": threshold, "comparison": ">" if signal.value > threshold else "<=", "unit": unit}
    )


def _version_text(facts: Facts) -> str | None:
    """The server's version as it stated it: the config, else the version log line, else /version."""
    text = facts.config.vllm_version if facts.config and facts.config.vllm_version else None
    if text is None:
        event = facts.last_event(LogEventKind.VERSION)
        text = event.version if event else None
    if text is None and facts.endpoint is not None:
        text = facts.endpoint.version
    return text or None


def vllm_version(facts: Facts) -> tuple[int, int] | None:
    """(major, minor) from the config or the version log line; None if unknown."""
    release = vllm_release(facts)
    return release[:2] if release else None


def vllm_release(facts: Facts) -> vllm_defaults.Version | None:
    """(major, minor, patch) as vllm_version reads it, the patch 0 where none is given (the defaults
    table tells 0.8.0 from 0.8.5); None if unknown."""
    return release_of(_version_text(facts))


def defaults_release(facts: Facts) -> vllm_defaults.Version | None:
    """The release whose defaults a flag left out takes: the stated version, else the earliest release that prints
    every vLLM message the log holds word for word. Why: a paste with no version line is still dated by its own
    lines; a message vLLM first printed in 0.20 says the server is 0.20 or later, so the share it runs at unset is
    0.20's 0.92, not the 0.90 an unknown version reads as. None when neither says, or the lines disagree (a message
    whose last release is before another's first: a mixed paste)."""
    stated = vllm_release(facts)
    return stated if stated is not None else release_floor(facts)


def release_floor(facts: Facts) -> vllm_defaults.Version | None:
    """The earliest release the text's own words allow: the latest first release among the vLLM messages it holds
    word for word, and 0.34 where it speaks of the extensible KV cache. None when nothing dates it, or the lines
    disagree. A floor, not a version: the server may be any release from it to the newest that prints them all."""
    refs = [e.catalog for e in facts.events if e.catalog is not None and not (e.catalog.partial or e.catalog.predicted)]
    firsts = [r for r in (release_of(ref.wording_first) for ref in refs) if r is not None]
    lasts = [r for r in (release_of(ref.wording_last) for ref in refs) if r is not None]
    if _extensible_said(facts) is not None:  # only 0.34 and later speak of the extensible KV cache
        firsts.append(vllm_defaults.EXTENSIBLE_KV_CACHE_FROM)
    if not firsts or (lasts and max(firsts)[:2] > min(lasts)[:2]):
        return None
    return max(firsts)


def release_of(text: str | None) -> vllm_defaults.Version | None:
    """(major, minor, patch) of a version's text (`0.3.2`, `v0.10.1.1`, `0.8`: patch 0); None if it is none."""
    if not text:
        return None
    parts = text.lstrip("v").split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None
    patch = re.match(r"\d+", parts[2]) if len(parts) > 2 else None
    return major, minor, int(patch[0]) if patch else 0


def vllm_device(facts: Facts) -> vllm_defaults.Device:
    """Whose defaults the server runs with: vLLM's CPU backend (device_config=cpu), the bundled engine
    (its version carries `+servops`, engine/api/server.py), else vLLM on a GPU."""
    if on_cpu_backend(facts):
        return "cpu"
    if vllm_defaults.BUNDLED_VERSION_MARK in (_version_text(facts) or ""):
        return "bundled"
    return "cuda"


def _server(facts: Facts) -> dict:
    """The server as the defaults table takes it: version, device, one GPU's memory and name, world size."""
    hardware = facts.hardware
    return {
        "version": defaults_release(facts),
        "device": vllm_device(facts),
        "usable_gib": total_gib(facts),  # measured first: a log's own figure decides the tier, not the catalog's
        "gpu_name": hardware.gpu_name if hardware else None,
        "world_size": tensor_parallel_size(facts) * pipeline_parallel_size(facts),
    }


def on_cpu_backend(facts: Facts) -> bool:
    """vLLM's CPU backend (device_config=cpu): no GPU, no CUDA graphs, KV space given in bytes."""
    return facts.config is not None and facts.config.device == "cpu"


def gpu_memory_utilization(facts: Facts) -> float:
    """The configured value, else the value a startup error printed, else vLLM's default."""
    if facts.config and facts.config.gpu_memory_utilization is not None:
        return facts.config.gpu_memory_utilization
    event = facts.last_event(LogEventKind.FREE_MEMORY_BELOW_REQUESTED)
    if event and event.gpu_memory_utilization is not None:
        return event.gpu_memory_utilization
    return vllm_defaults.gpu_memory_utilization(defaults_release(facts), vllm_device(facts), extensible_kv_cache(facts))


# What turns vLLM 0.34's extensible KV cache off (vllm/config/vllm.py _resolve_extensible_kv_cache), besides
# `--no-enable-extensible-kv-cache` (read as the flag set to false): a KV size given outright, which "sizes the KV
# cache from measured memory" cannot honour; elastic EP, whose scale-up skips the warmup that measures; and a KV
# connector, which keeps it off where the connector shares the cache through legacy CUDA IPC or its own memory
# pool, registers it on ROCm, or moves it within a host without an IMEX channel (most hosts but NVLink-fabric
# racks; vLLM logs "Extensible KV cache off: …" then, and a log that says otherwise wins).
_EXTENSIBLE_OFF_FLAGS = ("--kv-cache-memory-bytes", "--num-gpu-blocks-override", "--kv-transfer-config")
_EXTENSIBLE_OFF_SWITCHES = ("--enable-elastic-ep",)
# device_config values of the platforms vLLM calls CUDA-alike (ROCm prints cuda too); others never extend
_CUDA_ALIKE_DEVICES = frozenset({"cuda"})


_EXTENSIBLE_HINT = "extensible KV cache"
_KV_REFUSALS = (LogEventKind.MAX_MODEL_LEN_TOO_LARGE, LogEventKind.NO_CACHE_BLOCKS)


def extensible_kv_cache(facts: Facts) -> bool:
    """Whether the server sizes its KV cache from the memory measured after warmup (vLLM 0.34's extensible KV
    cache): its own lines say so when the log has them ("Extended KV cache to N blocks", "Disabling the extensible
    KV cache: …"), else the flags that turn it off, else its default (on for a GPU server from 0.34). Why it
    matters: such a server takes the whole GPU by default and needs no share below 1.0 for its own transients,
    so a lower --gpu-memory-utilization only takes memory from its KV cache."""
    said = _extensible_said(facts)
    if said is not None:
        return said
    if vllm_device(facts) != "cuda" or not _cuda_alike(facts):
        return False
    flags = facts.config.flags if facts.config else {}
    if any(flag in flags for flag in _EXTENSIBLE_OFF_FLAGS) or (facts.config and facts.config.kv_cache_memory_bytes):
        return False
    if any(str(flags.get(switch, "false")).lower() != "false" for switch in _EXTENSIBLE_OFF_SWITCHES):
        return False
    if str(flags.get("--enable-extensible-kv-cache", "")).lower() == "false":
        return False
    return vllm_defaults.extensible_kv_cache_default(defaults_release(facts))


def _extensible_said(facts: Facts) -> bool | None:
    """What the server's own lines say of 0.34's extensible KV cache: on ("Extended KV cache to N blocks", or a KV
    refusal whose hint names it: v1/core/kv_cache_planning.py), off ("Disabling the extensible KV cache: …",
    "Extensible KV cache off: …"), or None when they say nothing."""
    said = facts.last_event(LogEventKind.KV_CACHE_EXTENDED, LogEventKind.EXTENSIBLE_KV_OFF)
    if said is not None:
        return said.kind == LogEventKind.KV_CACHE_EXTENDED
    if any(_EXTENSIBLE_HINT in (e.raw or "") for e in facts.events_of(*_KV_REFUSALS)):
        return True
    return None


def _cuda_alike(facts: Facts) -> bool:
    """Whether the server runs on CUDA or ROCm, as far as its text says: not where its engine line printed another
    device_config (tpu, xpu, hpu …) or an out-of-tree platform plugin (vllm-ascend, vllm-metal …) ran the model."""
    device = facts.config.device if facts.config else None
    if device is not None and device.lower() not in _CUDA_ALIKE_DEVICES:
        return False
    return not facts.events_of(LogEventKind.PLATFORM_PLUGIN)


def max_share(facts: Facts) -> float:
    """The highest --gpu-memory-utilization a proposal may raise the share to: SAFE_MAX_GPU_MEMORY_UTILIZATION,
    which leaves vLLM's unmeasured transients room, or the whole GPU where the extensible KV cache measures them."""
    if extensible_kv_cache(facts):
        return vllm_defaults.GPU_MEMORY_UTILIZATION_EXTENSIBLE
    return SAFE_MAX_GPU_MEMORY_UTILIZATION


def block_size(facts: Facts) -> int:
    if facts.config and facts.config.block_size:
        return facts.config.block_size
    if facts.memory and facts.memory.block_size:
        return facts.memory.block_size
    # the GPU's arch is not in the facts: CacheConfig's default on CUDA for the release
    return vllm_defaults.block_size(vllm_device(facts), version=defaults_release(facts))


def max_num_seqs(facts: Facts) -> int | None:
    return facts.config.max_num_seqs if facts.config else None


def default_max_num_seqs(facts: Facts) -> int:
    """vLLM's default --max-num-seqs for this server: by version and device memory (1024 on GPUs with
    >= 70 GiB, not A100 from 0.9, else 256), 128 x world size on the CPU backend (rules/vllm_defaults.py)."""
    return vllm_defaults.max_num_seqs(**_server(facts))


def tensor_parallel_size(facts: Facts) -> int:
    if facts.config and facts.config.tensor_parallel_size:
        return facts.config.tensor_parallel_size
    return 1


def pipeline_parallel_size(facts: Facts) -> int:
    if facts.config and facts.config.pipeline_parallel_size:
        return facts.config.pipeline_parallel_size
    return 1


def data_parallel_size(facts: Facts) -> int:
    if facts.config and facts.config.data_parallel_size:
        return facts.config.data_parallel_size
    return 1


def tp_divides_heads(attention_heads: int, kv_heads: int, tp: int, mla: bool = False) -> bool:
    """Whether vLLM accepts `tp` for a model: the attention heads split evenly, and the KV heads either
    split evenly or are replicated a whole number of times (MLA's one latent is replicated on every GPU).
    One source for the rules and the advisor (plan_search.valid_tp)."""
    kv_ok = mla or (kv_heads % tp == 0 if kv_heads >= tp else tp % kv_heads == 0)
    return attention_heads % tp == 0 and kv_ok


def batched_tokens(facts: Facts) -> int:
    """--max-num-batched-tokens: the configured value, else vLLM's default for this server
    (rules/vllm_defaults.py: by version and device memory, the CPU backend's, the bundled engine's)."""
    config = facts.config
    if config and config.max_num_batched_tokens:
        return config.max_num_batched_tokens
    return default_batched_tokens(facts)


def default_batched_tokens(facts: Facts) -> int:
    """vLLM's own --max-num-batched-tokens for this server, whatever the launch set."""
    config = facts.config
    return vllm_defaults.max_num_batched_tokens(
        **_server(facts),
        chunked_prefill=config is None or config.enable_chunked_prefill is not False,
        max_model_len=config.max_model_len if config else None,
    )


def total_gib(facts: Facts) -> float | None:
    """Usable memory of one GPU: measured (memory facts, startup error) before catalog."""
    if facts.memory and facts.memory.total_gib:
        return facts.memory.total_gib
    for kind in (LogEventKind.FREE_MEMORY_BELOW_REQUESTED, LogEventKind.CUDA_OOM):
        sized = [event.total_gib for event in facts.events_of(kind) if event.total_gib]
        if sized:
            return sized[-1]
    if facts.hardware and facts.hardware.usable_gib:
        return facts.hardware.usable_gib
    return None


def kv_pool(facts: Facts) -> tuple[int, float] | None:
    """The KV pool as (tokens, GiB per GPU): what vLLM printed at start-up, else what the advisor sized.

    Why: a proposal that shrinks the pool states its cost in tokens, the unit the operator sizes by."""
    if facts.memory and facts.memory.kv_cache_tokens and facts.memory.available_kv_gib:
        return facts.memory.kv_cache_tokens, facts.memory.available_kv_gib
    size = facts.last_event(LogEventKind.KV_CACHE_SIZE)
    available = facts.last_event(LogEventKind.KV_CACHE_EXTENDED, LogEventKind.AVAILABLE_KV_MEMORY)
    if size and size.kv_cache_tokens and available and available.available_kv_gib and available.available_kv_gib > 0:
        return size.kv_cache_tokens, available.available_kv_gib
    return None


def weights_gib(facts: Facts) -> float | None:
    """Weights per GPU: the model-loading log line, else the advisor's figure."""
    event = facts.last_event(LogEventKind.MODEL_LOADING)
    if event and event.weights_gib:
        return event.weights_gib
    if facts.memory and facts.memory.weights_gib:
        return facts.memory.weights_gib
    return None


def fp8_supported(facts: Facts) -> bool | None:
    return facts.hardware.fp8_supported if facts.hardware else None


def gpu_count(facts: Facts) -> int | None:
    return facts.hardware.gpu_count if facts.hardware else None


def host_has_gpus(facts: Facts, needed: int) -> bool:
    """Whether a change needing `needed` GPUs per replica fits the host: the count --gpus gives (else the launch's
    TP x PP, which triage fills in), an unknown count taken as yes. One test for every rule that proposes a wider
    tensor-parallel split, so a fix that needs more hardware is ordered after the fixes that fit."""
    count = gpu_count(facts)
    return count is None or count >= needed


# This host's own addresses: the loopback ones (a server bound to one takes connections from this host only) and
# 0.0.0.0, which a client calling it reaches on this host too. A client's failed connection (OP-5.34, and the
# collector deciding whether its target is a server of the user's) and torch.distributed's rendezvous (OP-7.25).
LOOPBACK = re.compile(r"^(?:localhost\b|(?:::ffff:)?127\.|::1$)")  # IPv4-mapped IPv6 (`::ffff:127.0.0.1`) too


def is_local_host(host: str) -> bool:
    """Whether `host` (without IPv6 brackets) is this host's own address."""
    return host == "0.0.0.0" or LOOPBACK.match(host) is not None


def split_address(address: str | None) -> tuple[str, int | None]:
    """The host (without IPv6 brackets) and port of `host:port`; a host named alone (a name that did not resolve)
    has no port."""
    host, _, tail = (address or "").rpartition(":")
    if host and tail.isdigit():
        return host.strip("[]"), int(tail)
    return (address or "").strip("[]"), None


_SERVED_URL = re.compile(r"^https?://(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>\d+))?")


def served_address(listen_address: str | None) -> tuple[str, int | None] | None:
    """The host (without IPv6 brackets) and port of the URL vLLM says it listens on (`Starting vLLM API server on
    http://0.0.0.0:8000`); None for words that are no such URL."""
    served = _SERVED_URL.match(listen_address or "")
    if served is None:
        return None
    return served["host"].strip("[]"), int(served["port"]) if served["port"] else None


def round_down(value: float, step: int) -> int:
    return max(step, int(value // step) * step)


def next_power_of_two(value: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1.0, value))))


def workload_tokens_p95(facts: Facts) -> float | None:
    """p95 input + p95 output tokens per request (an upper bound on one request's KV)."""
    work = facts.workload
    if work is None or work.p95_input_tokens is None:
        return None
    return work.p95_input_tokens + (work.p95_output_tokens or 0.0)


def workload_evidence(facts: Facts) -> Evidence | None:
    tokens = workload_tokens_p95(facts)
    if tokens is None:
        return None
    return Evidence(source="workload", name="p95 input + p95 output tokens", value=tokens, unit="tokens")


def config_evidence(facts: Facts, field: str) -> Evidence:
    """A configured flag as evidence, from the best source that gave it (else the bare value)."""
    value, evidence = signals.config_value(facts, field)
    return evidence or Evidence(source="config", name=field, value=str(value))


def explicitly_set(facts: Facts, field: str) -> bool:
    """The flag's value is not vLLM's default (or its source is unknown): the user chose it."""
    source = facts.config.source_of(field) if facts.config else None
    return source is None or source != ConfigSource.DEFAULT


def phase_severity(event) -> Severity:
    """A failure's severity by when it struck: CRITICAL at start (the server never comes up), HIGH while serving
    (the server runs, and the requests or callers that meet it fail)."""
    return Severity.CRITICAL if event.phase != "serving" else Severity.HIGH


def log_evidence(event, name: str | None = None, value=None, threshold=None, comparison=None, unit=None) -> Evidence:
    """Evidence quoting a log line with its file and line number."""
    catalog = getattr(event, "catalog", None)
    return Evidence(
        source="log",
        name=name or event.kind.value,
        description=f"vLLM's message at {catalog.location()}: {catalog.template}" if catalog is not None else "",
        value=value,
        threshold=threshold,
        comparison=comparison,
        unit=unit,
        location=event.where(),
        raw=event.raw or None,
    )


def util_text(value: float) -> str:
    return f"{value:.2f}"


# vLLM gives the KV cache what is left of --gpu-memory-utilization x device memory after weights,
# activations and CUDA graphs, and none of those moves with the share: a change of share moves the
# pool by that share of the device. OP-1.1, OP-5.3, advisor/memory/kv_change.py and advisor/perf/pool.py all
# size a share with these two.
def kv_gib_at_share(pool_gib: float, device_gib: float, share_before: float, share_after: float) -> float:
    """The KV pool per GPU at `share_after`, from the pool the server has at `share_before`."""
    return pool_gib + (share_after - share_before) * device_gib


def share_for_kv(share: float, kv_needed_gib: float, kv_available_gib: float, device_gib: float) -> float:
    """The share at which the pool grows from `kv_available_gib` to `kv_needed_gib`, rounded up to the
    hundredth that a proposal prints (util_text), so the printed share still holds what is needed."""
    return math.ceil((share + (kv_needed_gib - kv_available_gib) / device_gib) * 100) / 100


def custom_all_reduce_off(reason: str) -> ConfigChange:
    """`--disable-custom-all-reduce`: NCCL does every all-reduce instead of vLLM's own kernel. Three rules
    propose it (a kernel that fails, a kernel fault to bisect, a collective that timed out), each for its
    own reason; the flag and what it costs are stated here once."""
    return ConfigChange(
        flag="--disable-custom-all-reduce",
        current=None,
        proposed="true",
        reason=reason,
        cost="slower all-reduces at small batch sizes",
    )


def eager_mode(reason: str, cost: str) -> ConfigChange:
    """`--enforce-eager`: no CUDA graphs (and, from V1, no torch.compile). Rules propose it for their own reasons
    (graph memory, a regression to bisect, collectives captured in graphs) at their own costs; the flag and
    its values are stated here once."""
    return ConfigChange(flag="--enforce-eager", current="false", proposed="true", reason=reason, cost=cost)


def float16_instead_of_bfloat16(dtype: str | None, reason: str) -> ConfigChange:
    """`--dtype float16` where the hardware has no bfloat16 for an operation (an RDNA2 dot product under Triton, an
    Atlas 300I's operators): each rule says why its hardware lacks it; the flag, its cost and its safety once."""
    return ConfigChange(
        flag="--dtype",
        current=dtype or "(auto: the checkpoint's bfloat16)",
        proposed="float16",
        reason=reason,
        cost="float16's narrower range: a model trained in bfloat16 can overflow in rare layers",
        safety="unsafe",
    )


def halved_max_num_seqs(seqs: int, reason: str, cost: str = "") -> ConfigChange:
    """`--max-num-seqs` at half its value (at least 1): the batch's first lever for memory a batch shape sizes (CUDA
    graphs, a TPU kernel's block tables, XLA's programs); each rule gives its own reason."""
    return ConfigChange(
        flag="--max-num-seqs", current=str(seqs), proposed=str(max(1, seqs // 2)), reason=reason, cost=cost
    )


def util_change(facts: Facts, proposed: float, reason: str, cost: str) -> ConfigChange:
    """A --gpu-memory-utilization change from the current value (configured, printed or vLLM's default)."""
    return ConfigChange(
        flag="--gpu-memory-utilization",
        current=util_text(gpu_memory_utilization(facts)),
        proposed=util_text(proposed),
        reason=reason,
        cost=cost,
    )


def printed_after(facts: Facts, event: LogEvent, *kinds: LogEventKind) -> bool:
    """Whether an event of `kinds` was printed before `event` in the same log."""
    return event.line_no is not None and any(
        e.line_no is not None and e.line_no < event.line_no and e.source_file == event.source_file
        for e in facts.events_of(*kinds)
    )


def error_saying(facts: Facts, *words: str) -> LogEvent | None:
    """The first error whose words hold one of `words`: one servops could not place, a worker's, or a dead engine's
    root; for the rules that know an exception only by Python's or a library's words, wherever the text printed it."""
    kinds = (LogEventKind.UNPLACED_ERROR, LogEventKind.WORKER_EXCEPTION, LogEventKind.ENGINE_DEAD)
    return next((e for e in facts.events_of(*kinds) if any(w in (e.message or "") for w in words)), None)


def consequences(facts: Facts, pattern: re.Pattern[str], name: str) -> list[Evidence]:
    """The errors and vLLM messages `pattern` finds, as evidence of the finding that names their cause: the check
    that fails after it (vLLM asserting the FlashAttention version it was refused). Why: the finding shows the line it
    explains, and a fallback reading of that line (VC-2's, VC-4's) gives way to it (evaluate.unexplained); VC-1's
    reading of a catalogued message stays, so such a message carries the cause's fix in vc_remedies instead."""
    return [log_evidence(e, name=name) for e in facts.events_of(*RELAYED_TOO) if pattern.search(e.message or "")]


def death_severity(facts: Facts) -> Severity:
    """A serving-time failure's severity: CRITICAL when the text shows the engine died of it (a fatal error or an
    EngineDeadError: nothing is served until a restart), else HIGH (the request failed, the server goes on)."""
    died = facts.events_of(LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD)
    return Severity.CRITICAL if died else Severity.HIGH


def follows_engine_death(facts: Facts, event: LogEvent) -> bool:
    """A process death printed after `EngineCore encountered a fatal error` / EngineDeadError in the same
    log: vLLM's shutdown chain (fatal error -> EngineDeadError -> `Engine core proc … died unexpectedly`)."""
    return event.kind == LogEventKind.WORKER_DIED and printed_after(
        facts, event, LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD
    )


def prompt_p95(facts: Facts) -> signals.Signal | None:
    """p95 prompt tokens: vLLM's own histogram over the window, else the workload's figure."""
    measured = signals.quantile(facts, PROMPT_TOKENS, "p95")
    if measured is not None:
        return measured
    if facts.workload and facts.workload.p95_input_tokens:
        value = facts.workload.p95_input_tokens
        return signals.Signal(value, Evidence(source="workload", name="p95 input tokens", value=value, unit="tokens"))
    return None


def pcie_tp_changes(facts: Facts, reason: str) -> tuple[list[ConfigChange], list[ConfigChange]]:
    """TP=1 with data-parallel replicas when the model fits one GPU; else pipeline instead of tensor parallel."""
    tp, replicas = tensor_parallel_size(facts), data_parallel_size(facts)
    weights_per_gpu, total = weights_gib(facts), total_gib(facts)
    fits_one = weights_per_gpu is not None and total is not None and weights_per_gpu * tp < FITS_ONE_GPU_SHARE * total
    if fits_one:
        return (
            [
                ConfigChange(
                    flag="--tensor-parallel-size",
                    current=str(tp),
                    proposed="1",
                    reason=reason,
                    cost="each replica has one GPU's KV cache",
                ),
                ConfigChange(
                    flag="--data-parallel-size",
                    current=str(replicas),
                    proposed=str(tp * replicas),
                    reason=f"keeps all {tp * replicas} GPUs busy as independent replicas",
                    cost="no cross-GPU traffic",
                ),
            ],
            [],
        )
    return (
        [
            ConfigChange(
                flag="--pipeline-parallel-size",
                current="1",
                proposed=str(tp),
                reason=reason + "; PP sends activations only between stages",
                cost="pipeline bubbles at low concurrency",
            ),
            ConfigChange(
                flag="--tensor-parallel-size",
                current=str(tp),
                proposed="1",
                reason="replaced by pipeline parallelism",
                cost="",
            ),
        ],
        [],
    )


def quantized(facts: Facts) -> bool:
    """The weights are already quantized: the launch says so (`--quantization`, or the engine config the log
    printed) or the checkpoint is (its quantization_config). Proposing quantization then is a change already
    in effect."""
    return bool((facts.config and facts.config.quantization) or (facts.model and facts.model.prequantized))


# vLLM prints a stats line every VLLM_LOG_STATS_INTERVAL seconds, 10 unless set (vllm/envs.py).
STATS_INTERVAL_S = 10.0
# A prefill finished in an interval counts as long (chunked over several steps) past this many budgets.
LONG_PREFILL_BUDGETS = 2


def stats_lines(facts: Facts) -> list[LogEvent]:
    """The stats lines that report requests, in log order."""
    return [e for e in facts.events_of(LogEventKind.STATS_LINE) if e.running is not None]


def interval_s(lines: list[LogEvent], index: int) -> float:
    """Seconds the stats line at `index` covers: since the line before it when both carry a time, else vLLM's
    default interval."""
    now = lines[index].time_s
    before = lines[index - 1].time_s if index > 0 else None
    if now is not None and before is not None and 0 < now - before <= 6 * STATS_INTERVAL_S:
        return now - before
    return STATS_INTERVAL_S


def long_prefill_beside(facts: Facts, lines: list[LogEvent], index: int) -> tuple[int, LogEvent] | None:
    """A long prefill whose chunks shared the steps of the interval at `index`: prompt tokens finished in that
    interval or the next, more than LONG_PREFILL_BUDGETS steps' budget (--max-num-batched-tokens).

    Why the next interval counts: V1 adds a prompt's tokens to the prompt throughput in the interval its
    prefill finishes (vllm/v1/metrics/stats.py, 0.32), so the intervals its earlier chunks ran in print
    none at all."""
    budget = batched_tokens(facts)
    for at in (index, index + 1):
        if at < len(lines):
            tokens = int((lines[at].prompt_throughput_tps or 0.0) * interval_s(lines, at))
            if tokens > LONG_PREFILL_BUDGETS * budget:
                return tokens, lines[at]
    return None


# A frame's file inside an installed package: `…/site-packages/neural_compressor/…`.
_SITE_PACKAGE = re.compile(r"(?:site|dist)-packages[/\\](?P<package>[A-Za-z_][\w]*)[/\\]")


def installed_package(path: str | None) -> str | None:
    """The installed package a traceback's file belongs to (`vllm` included); None outside site-packages."""
    found = _SITE_PACKAGE.search(path or "")
    return found["package"] if found else None


UNPLACED = (LogEventKind.UNPLACED_ERROR, LogEventKind.UNPLACED_LINE)
# The same, and one of vLLM's messages that relays the words (`Worker failed with error '<a worker's error>'`, which the
# catalog reads as vLLM's own): a rule reading an error's words finds them either way
RELAYED_TOO = (LogEventKind.VLLM_MESSAGE, *UNPLACED)


def first_match(
    facts: Facts, pattern: re.Pattern[str], kinds: tuple[LogEventKind, ...] = UNPLACED
) -> tuple[LogEvent, re.Match[str]] | None:
    """The first unplaced error or line (or event of `kinds`) whose words (its message, else its raw line) `pattern`
    finds, with the match: how rules read a cause named by a phrase inside an error or line no wording of its own
    reads, or inside a kind of event that only gathers the lines a few rules tell apart."""
    for event in facts.events_of(*kinds):
        found = pattern.search(event.message or event.raw or "")
        if found is not None:
            return event, found
    return None


# What a phrase rule makes of the phrase it found: the facts (for the launch, the GPUs), the event and the match.
PhraseFinding = Callable[[Facts, LogEvent, "re.Match[str]"], Finding]


def on_phrase(
    pattern: re.Pattern[str], build: PhraseFinding, kinds: tuple[LogEventKind, ...] = UNPLACED
) -> Callable[[Facts], list[Finding]]:
    """A rule's check for a cause one phrase names: the first unplaced error or line (or event of `kinds`) `pattern`
    finds becomes the finding `build` makes of it, and no phrase, no finding. Why one helper: rules that read a
    phrase and nothing else all wrote the same lookup around their finding, and each new one copied it."""

    def check(facts: Facts) -> list[Finding]:
        found = first_match(facts, pattern, kinds)
        return [build(facts, *found)] if found is not None else []

    return check


# An event's whole words: what `on_kind` hands a rule as the match.
_WHOLE = re.compile(r".+")


def on_kind(kind: LogEventKind, build: PhraseFinding) -> Callable[[Facts], list[Finding]]:
    """A rule's check for a kind of event a wording already told apart (the wording's words are the cause): its first
    event becomes the finding `build` makes of it, with the event's whole words as the match. Why: the same check as
    `on_phrase`'s, for rules whose phrase is the event kind itself."""
    return on_phrase(_WHOLE, build, kinds=(kind,))


# vLLM's refusals of a model's architectures, and the field each holds the config's names in: the registry's (`Model
# architectures ['Qwen3_5MoeForConditionalGeneration'] are not supported for now. Supported architectures: …`, 0.2 to
# 0.34) and the model loader's, for a name neither its registry nor transformers knows (`Cannot find model module.
# 'FSDPQwen2ForCausalLM' is not a registered model in the Transformers library …`, 0.8.5 on)
ARCHITECTURE_REFUSALS = (
    ("Model architectures {architectures} are not supported for now", "architectures"),
    ("Cannot find model module. '{arch}' is not a registered model", "arch"),
    ("Cannot find model module. {architecture} is not a registered model", "architecture"),
)
_ARCHITECTURE = re.compile(r"[A-Za-z_]\w*")


def refused_architectures(ref: CatalogRef) -> list[str]:
    """The architectures vLLM refused, as the model's config names them; [] for any other message."""
    field = next((name for words, name in ARCHITECTURE_REFUSALS if ref.template.startswith(words)), None)
    return _ARCHITECTURE.findall(ref.captured.get(field, "")) if field else []
