"""OP-1.1, OP-1.2: the server does not start because the KV cache does not fit its budget.

Each reads the typed log event the collector produced from vLLM's error text (docs/reference.md
§2.6; every version's wording maps to the same event kind) and proposes concrete flag values
computed from the numbers in that text: the estimated maximum length rounded down to the block
size, the utilisation that would fit, more GPUs or smaller weights when nothing is left for KV.
The other startup failures: free memory and profiling in op1_free_memory.py, CUDA out-of-memory
by phase (OP-1.4 … OP-1.6, OP-1.8) in op1_oom.py, an unrecognised failure (OP-1.9) in
op1_unexplained.py, CUDA-graph memory (OP-1.10) in op1_cudagraph.py.
"""

from __future__ import annotations

import math

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

MIB_BYTES = 1 << 20
# vLLM's estimate within this share of --max-model-len: a little more memory keeps the context the operator
# chose, so that change leads and the shorter length is the alternative (a DGX Spark 3 % short raised the
# share 0.80 -> 0.85, tests/fixtures/incidents/startup/startup-v1-kv-cache-short-for-max-seq-len-dgx-spark.yaml).
CLOSE_FIT = 0.9
# Rounding up to whole GiB may land exactly on the need; this much more keeps vLLM's null block and rounding.
KV_SPACE_MARGIN = 0.02


# --- OP-1.1 max-model-len does not fit ------------------------------------------------------


def _check_max_model_len(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.MAX_MODEL_LEN_TOO_LARGE, LogEventKind.V0_MAX_SEQ_LEN_TOO_LARGE)
    if event is None:
        return []
    current = event.max_model_len or (facts.config.max_model_len if facts.config else None)
    estimated, how = _estimated_length(event, current)
    evidence = [_max_len_evidence(event)]
    if estimated is None or current is None:
        return [_length_unknown(event, current, evidence)]
    if c.workload_tokens_p95(facts):
        evidence.append(c.workload_evidence(facts))
    title = (
        f"max-model-len {fmt(current)} needs {fmt(event.kv_needed_gib)} GiB KV > "
        f"{fmt(event.available_kv_gib)} GiB available; {fmt(estimated)} tokens fit"
        if event.kv_needed_gib
        else f"max-model-len {fmt(current)} > {fmt(estimated)} tokens the KV cache holds"
    )
    changes, alternatives = _max_len_changes(facts, event, current, estimated, how)
    return [
        RULE_MAX_MODEL_LEN.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence,
            changes=changes,
            alternatives=alternatives,
            summary="vLLM refuses to start when a single request of --max-model-len tokens does not fit the KV cache.",
            confidence=0.95,
        )
    ]


def _length_unknown(event, current: int | None, evidence: list[Evidence]) -> Finding:
    """The refusal without the length it was for (a retold line keeps only the GiB): the share of the
    length that fits is still the ratio of the two, and the missing GiB is what the budget lacks."""
    actions = ["Lower --max-model-len or raise --gpu-memory-utilization."]
    title = f"max-model-len {fmt(current)} does not fit the KV cache"
    needed, available = event.kv_needed_gib, event.available_kv_gib
    if needed and available is not None:
        title = f"one max-model-len request needs {fmt(needed)} GiB KV > {fmt(available)} GiB available"
        actions = [
            f"Raise --gpu-memory-utilization by the missing {fmt(needed - available)} GiB as a share of the GPU, or "
            f"lower --max-model-len to about {available / needed:.0%} of its value (the share of one request's KV "
            "that fits).",
            "If the value you set seems to be ignored: vLLM keeps the last of a flag given twice, and wrappers that "
            "start vLLM for you can append their own --gpu-memory-utilization after yours.",
        ]
    return RULE_MAX_MODEL_LEN.finding(
        Severity.CRITICAL,
        title,
        summary="vLLM refused to start: one request of the maximum length does not fit the KV cache.",
        evidence=evidence,
        actions=actions,
        confidence=0.7,
    )


def _estimated_length(event, current: int | None) -> tuple[int | None, str]:
    """The length that fits, and how it was had: vLLM's own estimate (V1 since 0.8.1, or V0's token
    count), else scaled from the GiB the 0.8.0 wording gives, since KV grows linearly with length."""
    estimated = event.estimated_max_model_len or event.max_seq_len_tokens
    if not estimated and current and event.kv_needed_gib and event.available_kv_gib is not None:
        return int(current * event.available_kv_gib / event.kv_needed_gib), "max-model-len × available / needed"
    return estimated, "vLLM's estimate"


def _max_len_evidence(event) -> Evidence:
    """V1 words the shortfall in GiB, V0 in tokens: the evidence compares what the text gives."""
    if event.kv_needed_gib is not None:
        return c.log_evidence(
            event, "KV cache needed for one max-length request", event.kv_needed_gib, event.available_kv_gib, ">", "GiB"
        )
    return c.log_evidence(
        event,
        "max-model-len vs tokens the KV cache holds",
        event.max_model_len,
        event.max_seq_len_tokens,
        ">",
        "tokens",
    )


def _max_len_changes(
    facts: Facts, event, current: int, estimated: int, how: str
) -> tuple[list[ConfigChange], list[ConfigChange]]:
    """The changes in the order an operator should try them: the shorter length by default; more memory
    first when the estimate is close, so the context the operator chose is kept; on the CPU backend its
    KV space variable before anything, since the share of memory does not size that pool."""
    block = c.block_size(facts)
    proposed = c.round_down(estimated, block)
    workload = c.workload_tokens_p95(facts)
    shorter = ConfigChange(
        flag="--max-model-len",
        current=str(current),
        proposed=str(proposed),
        reason=f"{how} is {estimated:,} tokens; rounded down to the block size {block}",
        cost="requests longer than this are rejected with HTTP 400",
        safety="unsafe" if workload is None or workload > proposed else "safe",
    )
    alternatives = [change for change in [_cpu_kv_space_change(facts, current, estimated, block)] if change]
    changes = [shorter]
    more_memory = _util_to_fit(facts, event, current) or _util_for_tokens(facts, event, current, estimated)
    if more_memory is not None and estimated >= CLOSE_FIT * current:
        changes, alternatives = [more_memory], [shorter, *alternatives]
    elif more_memory is not None:
        alternatives.append(more_memory)
    cpu_space = _cpu_kv_env_change(facts, event, current)
    if cpu_space is not None:
        changes, alternatives = [cpu_space], [*changes, *alternatives]
    return changes, alternatives


def _util_to_fit(facts: Facts, event, length: int) -> ConfigChange | None:
    """The --gpu-memory-utilization whose pool holds one `length`-token request, when at most
    SAFE_MAX_GPU_MEMORY_UTILIZATION: from the device's size when known, else from the least size the
    text allows (the pool it printed is part of the share, so the device holds at least pool / share),
    which gives a share that is, if anything, higher than needed."""
    if c.on_cpu_backend(facts) or not event.kv_needed_gib or event.available_kv_gib is None:
        return None
    util, total = c.gpu_memory_utilization(facts), c.total_gib(facts)
    missing = event.kv_needed_gib - event.available_kv_gib
    device_gib = total or (event.available_kv_gib / util if event.available_kv_gib > 0 else None)
    if not device_gib:
        return None
    needed_util = c.share_for_kv(util, event.kv_needed_gib, event.available_kv_gib, device_gib)
    if needed_util > c.max_share(facts):
        return None
    bound = "" if total else f" (at most: the device holds at least {fmt(device_gib)} GiB, the pool / the share)"
    return c.util_change(
        facts,
        needed_util,
        f"{fmt(missing)} GiB more KV memory keeps max-model-len {length:,}{bound}",
        "less headroom for other processes and activation spikes",
    )


def _util_for_tokens(facts: Facts, event, length: int, fitting: int) -> ConfigChange | None:
    """V0's wording gives tokens, not GiB (`max seq len (4096) is larger than the maximum number of tokens
    that can be stored in KV cache (3664)`): the share that fits cannot be computed without the device's
    free memory, so the direction vLLM's own message advises (`Try increasing gpu_memory_utilization`) is
    offered up to the safe maximum, with how much more KV it must add."""
    util = c.gpu_memory_utilization(facts)
    if event.kv_needed_gib or c.on_cpu_backend(facts) or util >= c.SAFE_MAX_GPU_MEMORY_UTILIZATION or fitting <= 0:
        return None
    more = length / fitting - 1
    return c.util_change(
        facts,
        c.SAFE_MAX_GPU_MEMORY_UTILIZATION,
        f"the KV cache must hold {more:.0%} more tokens ({length:,}, not {fitting:,}); a larger share of the GPU "
        "grows it by the share's extra GiB, which the log does not give, so check the next start's 'KV cache' line",
        "less headroom for other processes and activation spikes",
    )


def _cpu_kv_env_change(facts: Facts, event, length: int) -> ConfigChange | None:
    """VLLM_CPU_KVCACHE_SPACE (whole GiB) that holds one `length`-token request, on vLLM's CPU backend when
    --kv-cache-memory-bytes is not given (that one has `_cpu_kv_space_change`). The backend is known from the
    log or the command, or told by the pool itself: exactly the 4 GiB it took with the variable unset before
    0.14, when nothing says the server had a GPU. vLLM's own message says to raise gpu_memory_utilization,
    which on that backend does not size the KV cache at all."""
    config = facts.config
    if not event.kv_needed_gib or event.available_kv_gib is None:
        return None
    if config is not None and config.is_explicit("kv_cache_memory_bytes"):
        return None
    on_cpu = c.on_cpu_backend(facts)
    known_gpu = (config is not None and config.device is not None and not on_cpu) or bool(c.total_gib(facts))
    unset_default = not known_gpu and event.available_kv_gib == vllm_defaults.CPU_KV_SPACE_UNSET_GIB
    if not (on_cpu or unset_default):
        return None
    env = vllm_defaults.CPU_KV_SPACE_ENV
    given = config.env.get(env) if config is not None else None
    current = given or f"{event.available_kv_gib:g}"
    why = (
        f"the pool is exactly the {vllm_defaults.CPU_KV_SPACE_UNSET_GIB} GiB vLLM's CPU backend takes with {env} "
        "unset (before 0.14; later, a share of the node's memory): on that backend"
        if unset_default and not on_cpu
        else "on vLLM's CPU backend"
    )
    return ConfigChange(
        flag=env,
        current=current,
        proposed=str(math.ceil(event.kv_needed_gib * (1 + KV_SPACE_MARGIN))),
        reason=f"{why} the KV cache is the GiB {env} gives, not a share of memory (--gpu-memory-utilization does "
        f"not size it); max-model-len {length:,} needs {fmt(event.kv_needed_gib)} GiB, in whole GiB",
        cost="that much more host memory for the KV cache (the node must have it free)",
        kind="env",
    )


def _cpu_kv_space_change(facts: Facts, length: int, estimated: int, block: int) -> ConfigChange | None:
    """CPU backend with an explicit --kv-cache-memory-bytes B: the bytes that keep `length`.

    vLLM's estimate E says B less one null block holds E // block blocks, so a block takes at most
    B / (E // block + 1) bytes; `length` needs ceil(length / block) blocks plus the null one.
    """
    config = facts.config
    space = config.kv_cache_memory_bytes if config else None
    if not c.on_cpu_backend(facts) or not space or not config.is_explicit("kv_cache_memory_bytes"):
        return None
    fitting_blocks = estimated // block
    needed = math.ceil(space * (math.ceil(length / block) + 1) / (fitting_blocks + 1))
    proposed = f"{math.ceil(needed / MIB_BYTES)}M"
    return ConfigChange(
        flag="--kv-cache-memory-bytes",
        current=str(space),
        proposed=proposed,
        reason=f"keeps max-model-len {length:,}: {fitting_blocks} blocks of {block} tokens fit "
        f"{space:,} bytes, {math.ceil(length / block)} are needed (plus vLLM's null block)",
        cost="that much more host memory for the KV cache",
    )


RULE_MAX_MODEL_LEN = Rule(
    code="OP-1.1",
    title="max-model-len does not fit the KV cache",
    category=Category.STARTUP,
    check=_check_max_model_len,
    needs=("events",),
    page=RulePage(
        checks="The startup error `To serve at least one request with the model's max seq len (N) …` (every V1 "
        "wording, with or without `estimated maximum model length is M`) and the V0 text `The model's max "
        "seq len (N) is larger than the maximum number of tokens that can be stored in KV cache (M)`.",
        why="vLLM refuses to start unless one request of --max-model-len tokens fits the KV cache.",
        example="max seq len (131072), (16.0 GiB KV cache is needed … available KV cache memory (3.18 GiB)… "
        "estimated maximum model length is 26048 -> --max-model-len 26048.",
        fix="Set --max-model-len to the estimate rounded down to the block size; or raise --gpu-memory-utilization "
        f"by the missing GiB / total GiB (proposed first when the estimate is within {1 - CLOSE_FIT:.0%} of the "
        "length and the share stays within the safe maximum; toward the safe maximum when the log gives tokens, "
        "not GiB, as V0's does); or --kv-cache-dtype fp8 to halve KV bytes per "
        "token. vLLM 0.33 also accepts --max-model-len -1 (auto-fit). On vLLM's CPU backend, or when the pool is "
        "exactly the 4 GiB that backend took with VLLM_CPU_KVCACHE_SPACE unset before 0.14 and nothing says GPU, "
        "VLLM_CPU_KVCACHE_SPACE raised to the whole GiB needed comes first (the share does not size that pool).",
        limits="Without the estimate sentence (0.8.0) the length is scaled linearly, which is exact only for full "
        "attention; sliding-window and MLA models fit more.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


# --- OP-1.2 no memory for the cache blocks --------------------------------------------------


def _check_no_cache_blocks(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.NO_CACHE_BLOCKS)
    available = facts.last_event(LogEventKind.AVAILABLE_KV_MEMORY)
    negative = available is not None and available.available_kv_gib is not None and available.available_kv_gib <= 0
    if event is None and not negative:
        return []
    evidence = []
    if negative:
        evidence.append(
            c.log_evidence(available, "available KV cache memory", available.available_kv_gib, 0, "<=", "GiB")
        )
    if event is not None:
        evidence.append(c.log_evidence(event, "No available memory for the cache blocks"))
    weights, total = c.weights_gib(facts), c.total_gib(facts)
    if weights and total:
        evidence.append(_weights_evidence(facts, weights, total))
    if weights and total and weights > c.WEIGHTS_SHARE_HIGH * total * c.gpu_memory_utilization(facts):
        changes, alternatives = _smaller_share_of_weights(facts, weights, total, available)
    else:
        changes, alternatives = _larger_budget(facts, available, total)
    actions = []
    version = c.vllm_version(facts)
    if version is not None:
        charges_others = (0, 8) <= version <= (0, 9)
    else:  # undated: what its own words date rules out the releases before them
        floor = c.release_floor(facts)
        charges_others = floor is None or floor[:2] <= (0, 9)
    if charges_others:
        actions.append(
            "vLLM 0.8–0.9.0 charges other processes' GPU memory to this instance: stop them or give "
            "this instance its own GPU."
        )
    title = "no GPU memory left for the KV cache" + (
        f" (available {fmt(available.available_kv_gib)} GiB <= 0)" if negative else ""
    )
    return [
        RULE_NO_CACHE_BLOCKS.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence,
            changes=changes,
            alternatives=alternatives,
            actions=actions,
            confidence=0.9,
            summary="After weights and activations nothing was left of the requested memory.",
        )
    ]


def _weights_evidence(facts: Facts, weights: float, total: float) -> Evidence:
    """The weights' share of one GPU, from the model-loading line when the log has it, else the advisor."""
    return Evidence(
        source="log" if facts.last_event(LogEventKind.MODEL_LOADING) else "advisor",
        name="weights per GPU",
        value=weights,
        threshold=round(c.WEIGHTS_SHARE_HIGH * total, 2),
        comparison=">" if weights > c.WEIGHTS_SHARE_HIGH * total else "<=",
        unit="GiB",
    )


def _smaller_share_of_weights(
    facts: Facts, weights: float, total: float, available: LogEvent | None
) -> tuple[list[ConfigChange], list[ConfigChange]]:
    """Weights take the budget: split them over more GPUs, or make them smaller unless they already are. When the
    host's GPUs are known and too few for the split, what fits the host comes first (a larger share, FP8 weights,
    fewer sequences) and the split follows, as the change that needs more hardware."""
    tp = c.tensor_parallel_size(facts)
    split = ConfigChange(
        flag="--tensor-parallel-size",
        current=str(tp),
        proposed=str(tp * 2),
        reason=f"weights {fmt(weights)} GiB leave no KV room on one {fmt(total)} GiB GPU; "
        "TP splits weights and KV heads",
        cost=f"{tp * 2} GPUs per replica; NCCL buffers ~2 GiB/GPU",
    )
    smaller = []
    if c.fp8_supported(facts) is not False and not c.quantized(facts):
        smaller.append(
            ConfigChange(
                flag="--quantization",
                current=facts.config.quantization if facts.config else None,
                proposed="fp8",
                reason="halves weight memory",
                safety="unsafe",
                cost="small accuracy risk; W8A8 needs Ada/Hopper",
            )
        )
    if c.host_has_gpus(facts, tp * 2):
        return [split], smaller
    larger, fewer = _larger_budget(facts, available, total)
    split.cost = f"{tp * 2} GPUs per replica: more than the {c.gpu_count(facts)} this host has (more hardware)"
    fitting = [*larger, *smaller, *fewer]
    return fitting[:1], [*fitting[1:], split]


def _larger_budget(
    facts: Facts, available: LogEvent | None, total: float | None
) -> tuple[list[ConfigChange], list[ConfigChange]]:
    """Weights fit but activations and the rest took the budget: a larger share (what one more GiB of KV
    needs, at most the safe maximum), or a smaller sampler warm-up peak (fewer sequences)."""
    util = c.gpu_memory_utilization(facts)
    proposed = c.max_share(facts)
    if available and available.available_kv_gib is not None and total:
        proposed = min(proposed, c.share_for_kv(util, 1.0, available.available_kv_gib, total))
    changes = []
    if proposed > util:
        changes.append(
            c.util_change(
                facts,
                proposed,
                "the non-KV memory (weights, activations) used all of the requested budget",
                "less headroom for other processes",
            )
        )
    return changes, [change for change in [_fewer_sequences(facts)] if change]


def _fewer_sequences(facts: Facts) -> ConfigChange | None:
    """--max-num-seqs down to vLLM's smaller default, when the server runs more or may run its larger one.

    Why: vLLM V1's memory profile ends with a dummy sampler pass over max_num_seqs requests, each with
    a vocabulary-sized row of logits (`_dummy_sampler_run`, vllm/v1/worker/gpu_model_runner.py); what
    that peak takes, the KV cache does not get. V1 raised the default from 256 to 1024 (every GPU in
    0.8.0-0.8.4, GPUs of 70 GiB or more since), and on vllm#14992 lowering it back to 256 was the
    maintainer's first advice and the reporter's fix. When the flag and the GPU are unknown, the
    default may be either, so the change is offered with the current value unknown."""
    if c.on_cpu_backend(facts):
        return None
    seqs = c.max_num_seqs(facts)
    explicit = facts.config is not None and facts.config.is_explicit("max_num_seqs")
    if not explicit and c.total_gib(facts):
        seqs = c.default_max_num_seqs(facts)  # the GPU is known: so is the default
    if seqs is not None and seqs <= vllm_defaults.BASE_MAX_NUM_SEQS:
        return None
    return ConfigChange(
        flag="--max-num-seqs",
        current=str(seqs) if seqs is not None else None,
        proposed=str(vllm_defaults.BASE_MAX_NUM_SEQS),
        reason="vLLM profiles its sampler over max_num_seqs requests at start-up, and that peak is taken "
        f"from the KV cache's share; V1 defaults to {vllm_defaults.LARGE_MAX_NUM_SEQS} on GPUs of "
        f"{vllm_defaults.LARGE_GPU_GIB} GiB or more (on every GPU in 0.8.0-0.8.4)",
        cost=f"at most {vllm_defaults.BASE_MAX_NUM_SEQS} requests run together; more wait in the queue",
    )


RULE_NO_CACHE_BLOCKS = Rule(
    code="OP-1.2",
    title="no memory left for the KV cache",
    category=Category.STARTUP,
    check=_check_no_cache_blocks,
    needs=("events",),
    page=RulePage(
        checks="`No available memory for the cache blocks` or `Available KV cache memory` <= 0 GiB.",
        why="Weights, activations and non-torch memory used the whole requested budget: no block can be allocated.",
        example="Llama-3.3-70B FP8 on one H100: weights 67.72 GiB, available KV -1.44 GiB -> --tensor-parallel-size 2.",
        fix=f"When weights exceed {c.percent(c.WEIGHTS_SHARE_HIGH)} of the GPU: tensor parallelism (the smallest size "
        "the memory model predicts to start, when triage knows the model and GPU) or quantization; on a host whose "
        "GPUs are known and too few for the split, what fits it first (a larger share, FP8 weights, fewer "
        "sequences) and the split after, as needing more hardware; "
        f"else raise --gpu-memory-utilization (up to {c.SAFE_MAX_GPU_MEMORY_UTILIZATION:.2f}), or lower "
        f"--max-num-seqs to {vllm_defaults.BASE_MAX_NUM_SEQS} where it is above (V1 profiles its sampler over "
        "max_num_seqs requests; its default is 1024 on large GPUs).",
        limits="On vLLM 0.8–0.9.0 other processes' memory is counted too; the weights share needs the model-loading "
        "line or the advisor's figure.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


RULES: list[Rule] = [RULE_MAX_MODEL_LEN, RULE_NO_CACHE_BLOCKS]
