"""OP-2: quantization — when weights or KV bytes per token, not compute, limit the deployment.

Pairs from docs/reference.md §5: "weights above 75 % of device memory → expect low concurrency;
larger GPU, TP, or a quantized model" and "KV capacity short, quality budget allows →
--kv-cache-dtype fp8 doubles KV tokens". FP8 W8A8 needs Ada/Hopper/AMD; Ampere only runs FP8
weight-only (Marlin).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

REFS = [
    "https://docs.vllm.ai/en/latest/features/quantization/supported_hardware.html",
    "https://docs.vllm.ai/en/latest/features/quantization/quantized_kvcache.html",
]


# --- OP-2.1 weights take most of the GPU -------------------------------------------------------


def _check_weights_share(facts: Facts) -> list[Finding]:
    weights, total = c.weights_gib(facts), c.total_gib(facts)
    if not weights or not total:
        return []
    share = weights / total
    if share <= c.WEIGHTS_SHARE_HIGH:
        return []
    source = "log" if facts.last_event(LogEventKind.MODEL_LOADING) else "advisor"
    evidence = [
        Evidence(
            source=source,
            name="weights / GPU memory",
            value=round(share, 3),
            threshold=c.WEIGHTS_SHARE_HIGH,
            comparison=">",
            description=f"{fmt(weights)} GiB of {fmt(total)} GiB",
        )
    ]
    changes, alternatives = _weights_relief(facts)
    return [
        RULE_WEIGHTS.finding(
            Severity.MEDIUM,
            f"weights take {share:.0%} of GPU memory > {c.WEIGHTS_SHARE_HIGH:.0%}",
            summary="Little memory is left for the KV cache, so few requests run at once.",
            evidence=evidence,
            changes=changes,
            alternatives=alternatives,
            confidence=0.75,
            actions=["Or move to a larger GPU."],
        )
    ]


def _weights_relief(facts: Facts) -> tuple[list[ConfigChange], list[ConfigChange]]:
    """What frees memory from the weights, in order: FP8 weights where the GPU has FP8 and the model is not
    already quantized (a change already in effect is never proposed), then twice the tensor parallelism,
    only when the host has the GPUs for it (a fix that needs more hardware is not proposed as one that fits)."""
    changes: list[ConfigChange] = []
    alternatives: list[ConfigChange] = []
    tp = c.tensor_parallel_size(facts)
    split_fits = c.host_has_gpus(facts, tp * 2)
    tp_change = ConfigChange(
        flag="--tensor-parallel-size",
        current=str(tp),
        proposed=str(tp * 2),
        reason="splits weights across GPUs, freeing KV memory on each",
        cost=f"{tp * 2} GPUs per replica; NCCL traffic each layer",
    )
    if not c.quantized(facts) and c.fp8_supported(facts):
        changes.append(
            ConfigChange(
                flag="--quantization",
                current=None,
                proposed="fp8",
                reason="FP8 weights halve weight memory; the freed memory becomes KV cache",
                cost="small accuracy risk; validate on your eval set",
                safety="unsafe",
            )
        )
        if split_fits:
            alternatives.append(tp_change)
    elif split_fits:
        changes.append(tp_change)
    return changes, alternatives


RULE_WEIGHTS = Rule(
    code="OP-2.1",
    title="weights leave too little memory for the KV cache",
    category=Category.QUANTIZATION,
    check=_check_weights_share,
    needs=("memory", "events", "hardware"),
    page=RulePage(
        checks="Weights per GPU (model-loading line or the advisor) against usable GPU memory: above "
        f"{c.percent(c.WEIGHTS_SHARE_HIGH)} of it.",
        why=f"Above {c.percent(c.WEIGHTS_SHARE_HIGH)} of VRAM in weights, the KV cache is small and concurrency low.",
        example="Llama-3.1-70B FP8 weights 67.72 GiB on a 79.2 GiB H100 (85 %) -> --quantization fp8 is already "
        "used, so --tensor-parallel-size 2.",
        fix="--quantization fp8 on FP8-capable GPUs (unsafe: accuracy), else double --tensor-parallel-size.",
        limits="Does not consider pre-quantized checkpoints other than those the model facts name.",
        references=REFS,
    ),
)


# --- OP-2.2 KV cache too small for the target concurrency ---------------------------------------


def _check_kv_capacity(facts: Facts) -> list[Finding]:
    memory, work = facts.memory, facts.workload
    tokens = c.workload_tokens_p95(facts)
    target = (work.target_concurrency or work.client_concurrency) if work else None
    if memory is None or not memory.kv_cache_tokens or not tokens or not target:
        return []
    fits = memory.kv_cache_tokens / tokens
    if fits >= target:
        return []
    dtype = facts.config.kv_cache_dtype if facts.config else None
    evidence = [
        Evidence(
            source="advisor",
            name="requests that fit the KV cache at p95 length",
            value=round(fits, 1),
            threshold=target,
            comparison="<",
            description=f"{memory.kv_cache_tokens:,} KV tokens / {fmt(tokens)} tokens per request",
        ),
        c.workload_evidence(facts),
    ]
    changes = []
    if dtype in (None, "auto"):
        changes.append(
            ConfigChange(
                flag="--kv-cache-dtype",
                current=dtype or "auto",
                proposed="fp8",
                reason=f"doubles KV tokens: about {fits * 2:.0f} requests fit instead of {fits:.0f}",
                cost="small accuracy risk (calibrate scales); backend support varies",
                safety="unsafe",
            )
        )
    return [
        RULE_KV_CAPACITY.finding(
            Severity.MEDIUM,
            f"KV cache holds {fits:.1f} requests at p95 length < target concurrency {target}",
            summary="At the target concurrency the server will preempt (recompute) requests.",
            evidence=evidence,
            changes=changes,
            confidence=0.7,
            actions=["Or add replicas / larger GPUs; see OP-5.3 for live preemptions."],
        )
    ]


RULE_KV_CAPACITY = Rule(
    code="OP-2.2",
    title="KV cache too small for the target concurrency",
    category=Category.QUANTIZATION,
    check=_check_kv_capacity,
    needs=("memory",),
    page=RulePage(
        checks="KV tokens (advisor/startup log) divided by p95 input+output tokens, against the target concurrency.",
        why="Running more requests than the KV cache holds makes vLLM preempt and recompute them.",
        example="162,704 KV tokens / 8,000 tokens = 20 requests < target 64 -> --kv-cache-dtype fp8 (40).",
        fix="--kv-cache-dtype fp8 (doubles KV tokens; unsafe: calibrate), or more GPUs/replicas.",
        limits="Uses p95 lengths for every request: pessimistic for mixed workloads; blocks are allocated as "
        "tokens arrive, so average use is lower.",
        references=REFS,
    ),
)


# --- OP-2.3 FP8 on a GPU without FP8 compute ---------------------------------------------------


def _check_fp8_without_support(facts: Facts) -> list[Finding]:
    quant = facts.config.quantization if facts.config else None
    if quant != "fp8" or c.fp8_supported(facts) is not False:
        return []
    gpu = facts.hardware.gpu_name if facts.hardware else "this GPU"
    evidence = [
        Evidence(source="config", name="--quantization", value=quant),
        Evidence(source="advisor", name="FP8 W8A8 support", value=False, description=str(gpu)),
    ]
    return [
        RULE_FP8_HARDWARE.finding(
            Severity.LOW,
            f"--quantization fp8 on {gpu}, which has no FP8 compute (weight-only Marlin)",
            summary="Weights are still halved, but matmuls run in BF16: expect no FP8 speed-up.",
            evidence=evidence,
            confidence=0.8,
            actions=["Expect memory savings only; for speed use Ada/Hopper GPUs."],
        )
    ]


RULE_FP8_HARDWARE = Rule(
    code="OP-2.3",
    title="FP8 quantization on a GPU without FP8 compute",
    category=Category.QUANTIZATION,
    check=_check_fp8_without_support,
    needs=("config",),
    page=RulePage(
        checks="--quantization fp8 on hardware whose facts say FP8 W8A8 is unsupported (Volta/Turing/Ampere).",
        why="vLLM falls back to FP8 weight-only (Marlin): memory is saved, compute is not faster.",
        example="--quantization fp8 on an A100.",
        fix="Keep it for memory; do not expect FP8 throughput. Use Ada/Hopper for FP8 compute.",
        limits="Support table as of vLLM's supported_hardware page.",
        references=REFS,
    ),
)

RULES: list[Rule] = [RULE_WEIGHTS, RULE_KV_CAPACITY, RULE_FP8_HARDWARE]
