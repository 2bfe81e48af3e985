"""AP-1, AP-2, AP-6, AP-7: a launch sized past what the GPU, the workload or the link bears.

Launch-configuration anti-patterns, visible before anything goes wrong: no memory headroom
(AP-1), a context length far above the requests (AP-2), more sequences admitted than the KV
cache holds (AP-6), tensor parallelism over PCIe for a model one GPU holds (AP-7). Defined from
docs/reference.md's signal → remedy pairs (§5) and pitfalls (§1.7, §2.1, §2.4, §2.5, §2.7), read
the other way round: a configuration that sets up one of those signals. Low severity unless a measured symptom
(preemptions, OOM) is present too, then medium. AP-1 fires only on a value the user set; AP-2
and AP-6 also fire on vLLM's defaults (the default --max-model-len *is* the model maximum; the
default --max-num-seqs is 256 or 1024 whatever the KV cache holds), and say so. Speedups
switched off are in ap_features_off.py.
"""

from __future__ import annotations

from rules import signals, vllm_defaults
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

UTIL_TOO_HIGH = 0.98
SMALL_WORKLOAD_SHARE = 0.25
SEQS_OVER_CAPACITY = 2.0
MAX_LEN_OVER_P95 = 2  # a proposed --max-model-len is this many p95 requests, rounded up to a power of two


def _preempting(facts: Facts) -> signals.Signal | None:
    rate = signals.preemption_rate(facts)
    return rate if rate is not None and rate.value > 0 else None


def _check_util(facts: Facts) -> list[Finding]:
    util = facts.config.gpu_memory_utilization if facts.config else None
    if util is None or util < UTIL_TOO_HIGH or not c.explicitly_set(facts, "gpu_memory_utilization"):
        return []
    if c.extensible_kv_cache(facts):  # vLLM 0.34 measures its own transients: 1.0 is its default there
        return []
    oom = facts.events_of(LogEventKind.CUDA_OOM, LogEventKind.FREE_MEMORY_BELOW_REQUESTED, LogEventKind.NCCL_ERROR)
    evidence = [
        c.config_evidence(facts, "gpu_memory_utilization").model_copy(
            update={"threshold": UTIL_TOO_HIGH, "comparison": ">="}
        )
    ] + [c.log_evidence(e) for e in oom[:1]]
    release = c.vllm_release(facts)
    checked = release is None or release >= vllm_defaults.FREE_MEMORY_CHECK_FROM
    whole = util >= 1.0 and checked and not c.on_cpu_backend(facts)
    return [
        RULE_UTIL.finding(
            Severity.CRITICAL if whole else Severity.MEDIUM if oom else Severity.LOW,
            f"--gpu-memory-utilization {fmt(util)} >= {UTIL_TOO_HIGH}"
            + (": the whole GPU, which vLLM refuses at startup" if whole else ""),
            evidence=evidence,
            confidence=0.95 if whole else 0.8 if oom else 0.6,
            changes=[
                ConfigChange(
                    flag="--gpu-memory-utilization",
                    current=c.util_text(util),
                    proposed=c.util_text(c.DEFAULT_GPU_MEMORY_UTILIZATION),
                    reason="leaves room for activation peaks, CUDA graphs, NCCL and the CUDA context",
                    cost="about 6 % less KV cache",
                )
            ],
            summary=WHOLE_GPU if whole else NO_HEADROOM,
        )
    ]


NO_HEADROOM = "No headroom: any allocation outside the profile (graphs, NCCL, a second process) is an OOM."
# vllm/v1/worker/utils.py request_memory (0.32; gpu_worker.py from 0.9.1): free memory at startup must hold the share
WHOLE_GPU = (
    "vLLM checks at startup that the free memory holds its share; its own CUDA context is allocated before that "
    "check, so the free memory is always below the whole GPU and the start fails ('Free memory on device … is "
    "less than desired GPU memory utilization')."
)


RULE_UTIL = Rule(
    code="AP-1",
    title=f"gpu-memory-utilization at {UTIL_TOO_HIGH:.2f} or more",
    category=Category.CONFIGURATION,
    check=_check_util,
    needs=("config",),
    page=RulePage(
        checks=f"--gpu-memory-utilization >= {UTIL_TOO_HIGH:.2f} set explicitly.",
        why="The budget is a share of total memory; CUDA context, NCCL buffers and allocation spikes live outside it.",
        example=f"--gpu-memory-utilization 0.99 with a CUDA OOM at runtime -> {c.DEFAULT_GPU_MEMORY_UTILIZATION:.2f}.",
        fix=f"{c.DEFAULT_GPU_MEMORY_UTILIZATION:.2f} (vLLM's default from 0.20), or "
        f"{c.DEFAULT_GPU_MEMORY_UTILIZATION_BEFORE_0_20:.2f}–{c.SAFE_MAX_GPU_MEMORY_UTILIZATION:.2f}.",
        limits="Severity rises to medium only with an OOM in the log; at 1.0 on a GPU it is critical: vLLM's "
        "startup check (free memory at least the share) cannot pass once its own CUDA context is allocated. Not "
        "raised for vLLM 0.34 and later with the extensible KV cache (its default on a GPU): the cache is sized from "
        "the memory measured after warmup, 1.0 is the default share and the startup check is skipped.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


def _check_max_model_len(facts: Facts) -> list[Finding]:
    config, model, tokens = facts.config, facts.model, c.workload_tokens_p95(facts)
    if not config or not config.max_model_len or not tokens:
        return []
    at_max = (
        model is not None and model.max_position_embeddings and config.max_model_len >= model.max_position_embeddings
    )
    if not at_max or tokens >= SMALL_WORKLOAD_SHARE * config.max_model_len:
        return []
    proposed = min(config.max_model_len, c.next_power_of_two(MAX_LEN_OVER_P95 * tokens))
    preempting = _preempting(facts)
    evidence = [
        c.config_evidence(facts, "max_model_len"),
        Evidence(source="advisor", name="model maximum (max_position_embeddings)", value=model.max_position_embeddings),
        c.workload_evidence(facts).model_copy(
            update={"threshold": int(SMALL_WORKLOAD_SHARE * config.max_model_len), "comparison": "<"}
        ),
    ]
    if preempting:
        evidence.append(preempting.evidence)
    return [
        RULE_MAX_LEN.finding(
            Severity.MEDIUM if preempting else Severity.LOW,
            f"--max-model-len {config.max_model_len:,} (model maximum) while p95 requests use {fmt(tokens)} tokens "
            f"< {SMALL_WORKLOAD_SHARE:.0%}",
            evidence=evidence,
            confidence=0.6,
            changes=[
                ConfigChange(
                    flag="--max-model-len",
                    current=str(config.max_model_len),
                    proposed=str(proposed),
                    reason=f"{MAX_LEN_OVER_P95}x the p95 request, rounded up to a power of two",
                    cost="requests longer than this are rejected with HTTP 400",
                    safety="unsafe",
                )
            ],
            summary="A rare huge request can take most of the KV cache and preempt many short ones; "
            "the startup check also needs one max-length request to fit.",
        )
    ]


RULE_MAX_LEN = Rule(
    code="AP-2",
    title="max-model-len at the model maximum for short requests",
    category=Category.CONFIGURATION,
    check=_check_max_model_len,
    needs=("config",),
    page=RulePage(
        checks="--max-model-len equal to the model's max_position_embeddings while p95 input+output is below "
        f"{c.percent(SMALL_WORKLOAD_SHARE)} of it.",
        why="V1 allocates KV blocks as tokens arrive, so the cost is not reserved memory but: the startup check "
        "must fit one max-length request, and rare huge requests evict many short ones (preemptions).",
        example="Llama-3.1-8B at 131,072 with p95 requests of 3,000 tokens -> --max-model-len 8192.",
        fix=f"{MAX_LEN_OVER_P95}x the p95 request, rounded up to a power of two (unsafe: longer requests get HTTP "
        "400).",
        limits="Needs workload lengths; medium only when preemptions are observed.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


def _kv_tokens(facts: Facts) -> tuple[int | None, Evidence | None]:
    if facts.memory and facts.memory.kv_cache_tokens:
        return facts.memory.kv_cache_tokens, Evidence(
            source="advisor", name="KV cache tokens", value=facts.memory.kv_cache_tokens
        )
    event = facts.last_event(LogEventKind.KV_CACHE_SIZE)
    if event and event.kv_cache_tokens:
        return event.kv_cache_tokens, c.log_evidence(event, "KV cache tokens", event.kv_cache_tokens)
    return None, None


def _check_seqs_over_kv(facts: Facts) -> list[Finding]:
    seqs, tokens = c.max_num_seqs(facts), c.workload_tokens_p95(facts)
    kv, kv_evidence = _kv_tokens(facts)
    if not seqs or not tokens or not kv:
        return []
    fits = kv / tokens
    if seqs <= SEQS_OVER_CAPACITY * fits:
        return []
    preempting = _preempting(facts)
    evidence = [
        c.config_evidence(facts, "max_num_seqs").model_copy(
            update={"threshold": round(SEQS_OVER_CAPACITY * fits, 1), "comparison": ">"}
        ),
        kv_evidence,
        c.workload_evidence(facts),
    ] + ([preempting.evidence] if preempting else [])
    default = "" if c.explicitly_set(facts, "max_num_seqs") else " (vLLM's default)"
    return [
        RULE_SEQS.finding(
            Severity.MEDIUM if preempting else Severity.LOW,
            f"--max-num-seqs {seqs}{default} > {SEQS_OVER_CAPACITY:.0f}x the {fits:.0f} requests the KV cache holds "
            "at p95 length",
            evidence=evidence,
            confidence=0.7 if preempting else 0.5,
            changes=[
                ConfigChange(
                    flag="--max-num-seqs",
                    current=str(seqs),
                    proposed=str(max(1, int(fits))),
                    reason=f"{kv:,} KV tokens / {fmt(tokens)} tokens per p95 request",
                    cost="excess requests wait instead of being preempted",
                )
            ],
            summary="The scheduler admits more requests than the KV cache can grow: preemption storms under load.",
        )
    ]


RULE_SEQS = Rule(
    code="AP-6",
    title="max-num-seqs far above KV capacity",
    category=Category.CONFIGURATION,
    check=_check_seqs_over_kv,
    needs=("config",),
    page=RulePage(
        checks=f"--max-num-seqs above {SEQS_OVER_CAPACITY:g}x the requests the KV cache holds at p95 input+output "
        "length.",
        why="The scheduler admits requests whose KV cannot all grow; vLLM then preempts and recomputes them.",
        example="--max-num-seqs 1024 with 162,704 KV tokens and 8,000-token requests (20 fit).",
        fix="--max-num-seqs = KV tokens / p95 tokens.",
        limits="p95 lengths overstate average use; medium only with preemptions.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


def _check_tp_pcie_small(facts: Facts) -> list[Finding]:
    tp, link = c.tensor_parallel_size(facts), facts.hardware.interconnect if facts.hardware else None
    weights, total = c.weights_gib(facts), c.total_gib(facts)
    if tp < 2 or link != "pcie" or not weights or not total:
        return []
    if weights * tp >= c.FITS_ONE_GPU_SHARE * total:
        return []
    changes, _ = c.pcie_tp_changes(facts, f"the model ({fmt(weights * tp)} GiB) fits one GPU")
    return [
        RULE_TP_PCIE.finding(
            Severity.MEDIUM,
            f"TP={tp} over PCIe for a {fmt(weights * tp)} GiB model < "
            f"{c.FITS_ONE_GPU_SHARE:.0%} of one {fmt(total)} GiB GPU",
            evidence=[
                c.config_evidence(facts, "tensor_parallel_size"),
                Evidence(source="advisor", name="interconnect", value=link),
                Evidence(
                    source="advisor",
                    name="model weights",
                    value=round(weights * tp, 2),
                    unit="GiB",
                    threshold=round(c.FITS_ONE_GPU_SHARE * total, 2),
                    comparison="<",
                ),
            ],
            changes=changes,
            confidence=0.7,
            summary="All-reduces over PCIe slow every step; replicas of TP=1 would not pay that at all.",
        )
    ]


RULE_TP_PCIE = Rule(
    code="AP-7",
    title="tensor parallel over PCIe for a model that fits one GPU",
    category=Category.CONFIGURATION,
    check=_check_tp_pcie_small,
    needs=("config",),
    page=RulePage(
        checks=f"--tensor-parallel-size >= 2, PCIe interconnect, total weights under {c.percent(c.FITS_ONE_GPU_SHARE)} "
        "of one GPU.",
        why="TP pays two all-reduces per layer per step; over PCIe that is slower than running independent replicas.",
        example="Llama-3.1-8B (15 GiB) at TP=2 on two L40S (PCIe).",
        fix="--tensor-parallel-size 1 with --data-parallel-size N (or N separate replicas).",
        limits="Long-context workloads may still want TP for KV capacity.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


RULES: list[Rule] = [RULE_UTIL, RULE_MAX_LEN, RULE_SEQS, RULE_TP_PCIE]
