"""OP-1: the server does not start. One sub-rule per startup failure vLLM reports (docs/reference.md §2.6).

Each reads the typed log event the collector produced from vLLM's error text (every version's
wording maps to the same event kind) and proposes concrete flag values computed from the
numbers in that text: the estimated maximum length rounded down to the block size, the
utilisation that would fit, and so on. CUDA out-of-memory by phase (OP-1.4 … OP-1.6, OP-1.8)
is in op1_oom.py, CUDA-graph memory (OP-1.10) in op1_cudagraph.py.
"""

from __future__ import annotations

import math

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

DOCS = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"
MIB_BYTES = 1 << 20
# vLLM's CPU backend without an explicit KV size reserves --gpu-memory-utilization of the NUMA node;
# an explicit --kv-cache-memory-bytes skips that check (v1/worker/cpu_worker.py). Give KV this share
# of the memory that was free, leaving the rest to the host.
CPU_KV_SHARE_OF_FREE = 0.5
# The proposed utilisation stays this far below the share of memory that was free.
FREE_MEMORY_MARGIN = 0.01


# --- OP-1.1 max-model-len does not fit ------------------------------------------------------


def _check_max_model_len(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.MAX_MODEL_LEN_TOO_LARGE, LogEventKind.V0_MAX_SEQ_LEN_TOO_LARGE)
    if event is None:
        return []
    block = c.block_size(facts)
    current = event.max_model_len or (facts.config.max_model_len if facts.config else None)
    estimated = event.estimated_max_model_len or event.max_seq_len_tokens
    how = "vLLM's estimate"
    if not estimated and current and event.kv_needed_gib and event.available_kv_gib is not None:
        estimated = int(current * event.available_kv_gib / event.kv_needed_gib)  # KV grows linearly with length
        how = "max-model-len × available / needed"
    if event.kv_needed_gib is not None:
        evidence = [
            c.log_evidence(
                event,
                "KV cache needed for one max-length request",
                event.kv_needed_gib,
                event.available_kv_gib,
                ">",
                "GiB",
            )
        ]
    else:  # V0: tokens, not GiB
        evidence = [
            c.log_evidence(
                event,
                "max-model-len vs tokens the KV cache holds",
                event.max_model_len,
                event.max_seq_len_tokens,
                ">",
                "tokens",
            )
        ]
    if estimated is None or current is None:
        return [
            RULE_MAX_MODEL_LEN.finding(
                Severity.CRITICAL,
                f"max-model-len {fmt(current)} does not fit the KV cache",
                summary="vLLM refused to start: one request of the maximum length does not fit the KV cache.",
                evidence=evidence,
                actions=["Lower --max-model-len or raise --gpu-memory-utilization."],
                confidence=0.7,
            )
        ]
    proposed = c.round_down(estimated, block)
    workload = c.workload_tokens_p95(facts)
    if workload:
        evidence.append(c.workload_evidence(facts))
    title = (
        f"max-model-len {fmt(current)} needs {fmt(event.kv_needed_gib)} GiB KV > "
        f"{fmt(event.available_kv_gib)} GiB available; {fmt(estimated)} tokens fit"
        if event.kv_needed_gib
        else f"max-model-len {fmt(current)} > {fmt(estimated)} tokens the KV cache holds"
    )
    change = ConfigChange(
        flag="--max-model-len",
        current=str(current),
        proposed=str(proposed),
        reason=f"{how} is {estimated:,} tokens; rounded down to the block size {block}",
        cost="requests longer than this are rejected with HTTP 400",
        safety="unsafe" if workload is None or workload > proposed else "safe",
    )
    alternatives = [change for change in [_cpu_kv_space_change(facts, current, estimated, block)] if change]
    total, util = c.total_gib(facts), c.gpu_memory_utilization(facts)
    if total and event.kv_needed_gib and event.available_kv_gib is not None and not c.on_cpu_backend(facts):
        needed_util = math.ceil((util + (event.kv_needed_gib - event.available_kv_gib) / total) * 100) / 100
        if needed_util <= c.SAFE_MAX_GPU_MEMORY_UTILIZATION:
            alternatives.append(
                c.util_change(
                    facts,
                    needed_util,
                    f"{fmt(event.kv_needed_gib - event.available_kv_gib)} GiB more KV memory "
                    f"keeps max-model-len {current:,}",
                    "less headroom for other processes and activation spikes",
                )
            )
    return [
        RULE_MAX_MODEL_LEN.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence,
            changes=[change],
            alternatives=alternatives,
            summary="vLLM refuses to start when a single request of --max-model-len tokens does not fit the KV cache.",
            confidence=0.95,
        )
    ]


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
        "by the missing GiB / total GiB; or --kv-cache-dtype fp8 to halve KV bytes per token. vLLM 0.33 also "
        "accepts --max-model-len -1 (auto-fit).",
        limits="Without the estimate sentence (0.8.0) the length is scaled linearly, which is exact only for full "
        "attention; sliding-window and MLA models fit more.",
        references=[DOCS],
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
    util, tp = c.gpu_memory_utilization(facts), c.tensor_parallel_size(facts)
    changes, alternatives, actions = [], [], []
    if weights and total:
        evidence.append(
            Evidence(
                source="log" if facts.last_event(LogEventKind.MODEL_LOADING) else "advisor",
                name="weights per GPU",
                value=weights,
                threshold=round(c.WEIGHTS_SHARE_HIGH * total, 2),
                comparison=">" if weights > c.WEIGHTS_SHARE_HIGH * total else "<=",
                unit="GiB",
            )
        )
    if weights and total and weights > c.WEIGHTS_SHARE_HIGH * total * util:
        changes.append(
            ConfigChange(
                flag="--tensor-parallel-size",
                current=str(tp),
                proposed=str(tp * 2),
                reason=f"weights {fmt(weights)} GiB leave no KV room on one {fmt(total)} GiB GPU; "
                "TP splits weights and KV heads",
                cost=f"{tp * 2} GPUs per replica; NCCL buffers ~2 GiB/GPU",
            )
        )
        if c.fp8_supported(facts) is not False and not (facts.model and facts.model.prequantized):
            alternatives.append(
                ConfigChange(
                    flag="--quantization",
                    current=facts.config.quantization if facts.config else None,
                    proposed="fp8",
                    reason="halves weight memory",
                    safety="unsafe",
                    cost="small accuracy risk; W8A8 needs Ada/Hopper",
                )
            )
    else:
        proposed = c.SAFE_MAX_GPU_MEMORY_UTILIZATION
        if available and available.available_kv_gib is not None and total:
            proposed = min(proposed, math.ceil((util + (1.0 - available.available_kv_gib) / total) * 100) / 100)
        if proposed > util:
            changes.append(
                c.util_change(
                    facts,
                    proposed,
                    "the non-KV memory (weights, activations) used all of the requested budget",
                    "less headroom for other processes",
                )
            )
    version = c.vllm_version(facts)
    if version is None or version <= (0, 9):
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
        fix=f"When weights exceed {c.percent(c.WEIGHTS_SHARE_HIGH)} of the GPU: tensor parallelism or quantization; "
        f"else raise --gpu-memory-utilization (up to {c.SAFE_MAX_GPU_MEMORY_UTILIZATION:.2f}).",
        limits="On vLLM 0.8–0.9.0 other processes' memory is counted too; the weights share needs the model-loading "
        "line or the advisor's figure.",
        references=[DOCS],
    ),
)


# --- OP-1.3 free memory below the requested budget ------------------------------------------


def _check_free_memory(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.FREE_MEMORY_BELOW_REQUESTED)
    if event is None:
        return []
    util = event.gpu_memory_utilization or c.gpu_memory_utilization(facts)
    evidence = [c.log_evidence(event, "free memory at startup", event.free_gib, event.requested_gib, "<", "GiB")]
    util_change = None
    if event.free_gib and event.total_gib:
        proposed = math.floor(event.free_gib / event.total_gib * 100) / 100 - FREE_MEMORY_MARGIN
        util_change = c.util_change(
            facts,
            proposed,
            f"{fmt(event.free_gib)} of {fmt(event.total_gib)} GiB are free; the budget must fit in free memory",
            "a smaller KV cache (fewer concurrent tokens)",
        )
    title = (
        f"free memory {fmt(event.free_gib)} GiB < requested {fmt(event.requested_gib)} GiB "
        f"(gpu-memory-utilization {fmt(util)})"
    )
    if (event.device or "").upper() == "CPU" or c.on_cpu_backend(facts):
        return [_cpu_free_memory(facts, event, util, title, evidence, util_change)]
    return [
        RULE_FREE_MEMORY.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence,
            changes=[util_change] if util_change else [],
            confidence=0.95,
            summary="Another process (often a second vLLM instance) holds memory on this GPU.",
            actions=["Find and stop other processes on the GPU (nvidia-smi), or give this instance its own GPU."],
        )
    ]


def _cpu_free_memory(
    facts: Facts, event, util: float, title: str, evidence: list[Evidence], util_change: ConfigChange | None
) -> Finding:
    """On the CPU backend the fraction is of the NUMA node's RAM; an explicit KV size avoids the check."""
    changes = []
    if event.free_gib:
        kv_gib = int(event.free_gib * CPU_KV_SHARE_OF_FREE)
        size = f"{kv_gib}G" if kv_gib >= 1 else f"{int(event.free_gib * CPU_KV_SHARE_OF_FREE * 1024)}M"
        current = facts.config.kv_cache_memory_bytes if facts.config else None
        changes.append(
            ConfigChange(
                flag="--kv-cache-memory-bytes",
                current=str(current) if current else None,
                proposed=size,
                reason=f"an explicit KV space skips the utilization check: {size} is about half of the "
                f"{fmt(event.free_gib)} GiB free, instead of {fmt(util)} of the node",
                cost="a fixed KV cache: fewer concurrent tokens than a node-sized one",
            )
        )
    if util_change is not None:
        util_change = util_change.model_copy(
            update={
                "reason": f"on the CPU backend it is the share of the node's memory vLLM reserves; "
                f"{fmt(event.free_gib)} of {fmt(event.total_gib)} GiB are free",
                "cost": "reserves most of the node: other processes may push free memory below it again",
            }
        )
    return RULE_FREE_MEMORY.finding(
        Severity.CRITICAL,
        f"CPU backend: {title}",
        evidence=evidence,
        changes=changes,
        alternatives=[util_change] if util_change else [],
        confidence=0.95,
        summary="vLLM's CPU backend reserves --gpu-memory-utilization of the NUMA node's memory when no KV size "
        "is given (VLLM_CPU_KVCACHE_SPACE unset); less than that was free.",
        actions=[
            "Or set VLLM_CPU_KVCACHE_SPACE (whole GiB) in the server's environment: it sets the same KV size.",
            "Check what else holds the node's memory (free -g, ps aux --sort=-rss).",
        ],
    )


RULE_FREE_MEMORY = Rule(
    code="OP-1.3",
    title="free GPU memory below the requested budget",
    category=Category.STARTUP,
    check=_check_free_memory,
    needs=("events",),
    page=RulePage(
        checks="`Free memory on device (F/T GiB) on startup is less than desired GPU memory utilization (U, R "
        "GiB)`; on vLLM's CPU backend (0.32) `Available memory on node N (F/T GiB) on startup is less than "
        "desired CPU memory utilization (U, R GiB)`.",
        why="The budget is a fraction of total memory and must be free at startup; another process holds the rest. "
        "On the CPU backend the fraction is of the NUMA node's RAM, taken when no KV size is given.",
        example="Free 31.44/47.38 GiB, util 0.95 (45.01 GiB) -> --gpu-memory-utilization 0.65. CPU: 10.65/12.34 GiB "
        "free, 0.92 (11.35 GiB) -> --kv-cache-memory-bytes 5G (or --gpu-memory-utilization 0.85).",
        fix=f"Free the GPU, or set --gpu-memory-utilization to (free / total) − {FREE_MEMORY_MARGIN:g}. CPU backend: "
        "an explicit --kv-cache-memory-bytes (half the free memory) or VLLM_CPU_KVCACHE_SPACE skips the check.",
        limits="A lower budget shrinks the KV cache; two instances on one GPU each need their own share. Half the "
        "free memory is a first step, not sized for the workload.",
        references=[DOCS],
    ),
)


# --- OP-1.7 memory profiling error, OP-1.9 unexplained startup failure ----------------------


def _check_profiling(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.MEMORY_PROFILING_ERROR)
    if event is None:
        return []
    evidence = [
        c.log_evidence(
            event, "free memory grew during profiling", event.current_free_gib, event.initial_free_gib, ">", "GiB"
        )
    ]
    return [
        RULE_PROFILING.finding(
            Severity.CRITICAL,
            f"free memory changed during profiling ({fmt(event.initial_free_gib)} -> "
            f"{fmt(event.current_free_gib)} GiB)",
            evidence=evidence,
            confidence=0.9,
            summary="Another process released GPU memory while vLLM measured its own use.",
            actions=["Run vLLM in its own container/GPU, or set --kv-cache-memory-bytes (0.10.2+) to skip profiling."],
        )
    ]


RULE_PROFILING = Rule(
    code="OP-1.7",
    title="GPU memory changed during profiling",
    category=Category.STARTUP,
    check=_check_profiling,
    needs=("events",),
    page=RulePage(
        checks="`Error in memory profiling. Initial free memory X GiB, current free memory Y GiB`.",
        why="vLLM sizes the KV cache from a measurement that another process disturbed.",
        example="Initial free memory 40.1 GiB, current free memory 44.3 GiB.",
        fix="Isolate vLLM on its GPU; or pass --kv-cache-memory-bytes to skip profiling (0.10.2+).",
        limits="No flag fixes a neighbour that allocates and frees memory.",
        references=[DOCS],
    ),
)


def _check_unexplained(facts: Facts) -> list[Finding]:
    failed = facts.last_event(LogEventKind.ENGINE_CORE_FAILED)
    if failed is None or facts.events_of(*c.STARTUP_FAILURE_KINDS):
        return []
    return [
        RULE_UNEXPLAINED.finding(
            Severity.CRITICAL,
            "engine core failed to start; no known cause in the log",
            evidence=[c.log_evidence(failed)],
            confidence=0.5,
            summary="The log says the engine failed to start but shows none of the known causes.",
            actions=["Read the traceback above 'EngineCore failed to start.' in the EngineCore/worker output."],
        )
    ]


RULE_UNEXPLAINED = Rule(
    code="OP-1.9",
    title="engine failed to start for an unrecognised reason",
    category=Category.STARTUP,
    check=_check_unexplained,
    needs=("events",),
    page=RulePage(
        checks="`Engine core initialization failed` / `EngineCore failed to start.` with no other startup-failure "
        "event.",
        why="The real cause is in a traceback the collector did not recognise.",
        example="Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
        fix="Read the traceback above that line; re-run triage with the worker logs.",
        limits="Only says that something failed.",
        references=[DOCS],
    ),
)

RULES: list[Rule] = [RULE_MAX_MODEL_LEN, RULE_NO_CACHE_BLOCKS, RULE_FREE_MEMORY, RULE_PROFILING, RULE_UNEXPLAINED]
