"""AP-1 … AP-7: launch-configuration anti-patterns, visible before anything goes wrong.

Defined from docs/reference.md's signal → remedy pairs (§5) and pitfalls (§1.7, §2.1, §2.4,
§2.5, §2.7), read the other way round: a configuration that sets up one of those signals. They
fire on configuration (plus workload/memory facts where the cost depends on them) and are low severity unless a measured
symptom (preemptions, OOM, high ITL) is present too, in which case they rise to medium.
AP-1 and AP-5 fire only on values the user set; AP-2 and AP-6 also fire on vLLM's defaults
(the default --max-model-len *is* the model maximum; the default --max-num-seqs is 256 or
1024 whatever the KV cache holds), and say so.
"""

from __future__ import annotations

from rules import signals
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import ConfigSource, Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

UTIL_TOO_HIGH = 0.98
SMALL_WORKLOAD_SHARE = 0.25
SEQS_OVER_CAPACITY = 2.0
MAX_LEN_OVER_P95 = 2  # a proposed --max-model-len is this many p95 requests, rounded up to a power of two


def _config_evidence(facts: Facts, field: str) -> Evidence:
    value, evidence = signals.config_value(facts, field)
    return evidence or Evidence(source="config", name=field, value=str(value))


def _explicit(facts: Facts, field: str) -> bool:
    source = facts.config.source_of(field) if facts.config else None
    return source is None or source != ConfigSource.DEFAULT


def _preempting(facts: Facts) -> signals.Signal | None:
    rate = signals.preemption_rate(facts)
    return rate if rate is not None and rate.value > 0 else None


def _check_util(facts: Facts) -> list[Finding]:
    util = facts.config.gpu_memory_utilization if facts.config else None
    if util is None or util < UTIL_TOO_HIGH or not _explicit(facts, "gpu_memory_utilization"):
        return []
    oom = facts.events_of(LogEventKind.CUDA_OOM, LogEventKind.FREE_MEMORY_BELOW_REQUESTED, LogEventKind.NCCL_ERROR)
    evidence = [
        _config_evidence(facts, "gpu_memory_utilization").model_copy(
            update={"threshold": UTIL_TOO_HIGH, "comparison": ">="}
        )
    ] + [c.log_evidence(e) for e in oom[:1]]
    return [
        RULE_UTIL.finding(
            Severity.MEDIUM if oom else Severity.LOW,
            f"--gpu-memory-utilization {fmt(util)} >= {UTIL_TOO_HIGH}",
            evidence=evidence,
            confidence=0.8 if oom else 0.6,
            changes=[
                ConfigChange(
                    flag="--gpu-memory-utilization",
                    current=c.util_text(util),
                    proposed=c.util_text(c.DEFAULT_GPU_MEMORY_UTILIZATION),
                    reason="leaves room for activation peaks, CUDA graphs, NCCL and the CUDA context",
                    cost="about 6 % less KV cache",
                )
            ],
            summary="No headroom: any allocation outside the profile (graphs, NCCL, a second process) is an OOM.",
        )
    ]


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
        limits="Severity rises to medium only with an OOM in the log.",
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
        _config_evidence(facts, "max_model_len"),
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


def _check_prefix_off(facts: Facts) -> list[Finding]:
    if not facts.config or facts.config.enable_prefix_caching is not False:
        return []
    reuse = facts.workload.prefix_reuse_share if facts.workload else None
    if reuse is not None and reuse < c.REUSE_WORTH_CACHING:
        return []
    evidence = [_config_evidence(facts, "enable_prefix_caching")]
    if reuse is not None:
        evidence.append(
            Evidence(
                source="workload",
                name="prefix reuse share",
                value=reuse,
                threshold=c.REUSE_WORTH_CACHING,
                comparison=">=",
            )
        )
    title = "prefix caching disabled" + (
        f" while {reuse:.0%} of prompt tokens are shared >= {c.REUSE_WORTH_CACHING:.0%}" if reuse is not None else ""
    )
    return [
        RULE_PREFIX_OFF.finding(
            Severity.MEDIUM if reuse is not None else Severity.LOW,
            title,
            evidence=evidence,
            confidence=0.8 if reuse is not None else 0.4,
            changes=[
                ConfigChange(
                    flag="--enable-prefix-caching",
                    current="false",
                    proposed="true",
                    reason="shared prefixes are computed once and reused",
                    cost="negligible (hashing)",
                )
            ],
            summary="Every request recomputes prefixes it shares with others.",
        )
    ]


RULE_PREFIX_OFF = Rule(
    code="AP-3",
    title="prefix caching disabled",
    category=Category.CONFIGURATION,
    check=_check_prefix_off,
    needs=("config",),
    page=RulePage(
        checks="--enable-prefix-caching false (--no-enable-prefix-caching), unless the workload's reuse share is "
        f"under {c.percent(c.REUSE_WORTH_CACHING)}.",
        why="V1 enables it by default; turning it off recomputes every shared system prompt.",
        example="--no-enable-prefix-caching with a 2,000-token shared system prompt.",
        fix="--enable-prefix-caching.",
        limits="Pooling and some hybrid models do not support it.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


def _check_chunked_off(facts: Facts) -> list[Finding]:
    if not facts.config or facts.config.enable_chunked_prefill is not False:
        return []
    itl = signals.quantile(facts, c.ITL, "p99")
    slo = c.itl_slo(facts)
    slow = itl is not None and itl.value > slo
    evidence = [_config_evidence(facts, "enable_chunked_prefill")]
    if itl is not None:
        evidence.append(itl.evidence.model_copy(update={"threshold": slo, "comparison": ">" if slow else "<="}))
    return [
        RULE_CHUNKED_OFF.finding(
            Severity.MEDIUM if slow else Severity.LOW,
            "chunked prefill disabled" + (f"; ITL p99 {fmt(itl.value, 3)} s > {fmt(slo, 3)} s" if slow else ""),
            evidence=evidence,
            confidence=0.7 if slow else 0.5,
            changes=[
                ConfigChange(
                    flag="--enable-chunked-prefill",
                    current="false",
                    proposed="true",
                    reason="long prompts are split so running decodes keep producing tokens",
                    cost="slightly longer TTFT for the longest prompts",
                )
            ],
            summary="A long prompt's whole prefill stalls every running request for that step.",
        )
    ]


RULE_CHUNKED_OFF = Rule(
    code="AP-4",
    title="chunked prefill disabled",
    category=Category.CONFIGURATION,
    check=_check_chunked_off,
    needs=("config",),
    page=RulePage(
        checks="--enable-chunked-prefill false.",
        why="Without chunking a long prompt's whole prefill runs in one step and stalls all decodes (ITL spikes).",
        example="--no-enable-chunked-prefill with 30k-token prompts; ITL p99 0.9 s.",
        fix="--enable-chunked-prefill.",
        limits="Some models do not support disabling or enabling it (vLLM logs so).",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


def _check_eager(facts: Facts) -> list[Finding]:
    if not facts.config or not facts.config.enforce_eager or not _explicit(facts, "enforce_eager"):
        return []
    graph_oom = [
        e for e in facts.events_of(LogEventKind.CUDA_OOM) if e.oom_phase and e.oom_phase.value == "cudagraph_capture"
    ]
    if graph_oom:
        return []  # eager is the fix OP-1.6 proposes
    if c.on_cpu_backend(facts):  # no CUDA graphs there: eager turns off torch.compile (platforms/cpu.py)
        reason, cost = (
            "vLLM's CPU backend compiles the model with torch.compile (inductor) unless eager",
            "a longer start-up while it compiles (cached for the next start)",
        )
        summary = "Eager mode runs the model uncompiled on vLLM's CPU backend."
    else:
        reason, cost = (
            "CUDA graphs cut per-step launch overhead, most at small batch sizes",
            "0.5–1.9 GiB for the graph pool; longer startup",
        )
        summary = "Without CUDA graphs every decode step pays kernel-launch overhead."
    return [
        RULE_EAGER.finding(
            Severity.LOW,
            "--enforce-eager set in production",
            evidence=[_config_evidence(facts, "enforce_eager")],
            confidence=0.6,
            summary=summary,
            changes=[ConfigChange(flag="--enforce-eager", current="true", proposed="false", reason=reason, cost=cost)],
        )
    ]


RULE_EAGER = Rule(
    code="AP-5",
    title="enforce-eager in production",
    category=Category.CONFIGURATION,
    check=_check_eager,
    needs=("config",),
    page=RulePage(
        checks="--enforce-eager set explicitly, without a CUDA-graph capture OOM that would justify it.",
        why="CUDA graphs remove per-kernel launch overhead; eager mode is slower, most at small batch sizes.",
        example="--enforce-eager left over from debugging.",
        fix="Remove it; if capture ran out of memory, lower --max-num-seqs instead.",
        limits="Debugging and some models need eager.",
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
        _config_evidence(facts, "max_num_seqs").model_copy(
            update={"threshold": round(SEQS_OVER_CAPACITY * fits, 1), "comparison": ">"}
        ),
        kv_evidence,
        c.workload_evidence(facts),
    ] + ([preempting.evidence] if preempting else [])
    default = "" if _explicit(facts, "max_num_seqs") else " (vLLM's default)"
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
                _config_evidence(facts, "tensor_parallel_size"),
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


RULES: list[Rule] = [RULE_UTIL, RULE_MAX_LEN, RULE_PREFIX_OFF, RULE_CHUNKED_OFF, RULE_EAGER, RULE_SEQS, RULE_TP_PCIE]
