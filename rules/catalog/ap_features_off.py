"""AP-3, AP-4, AP-5: a speedup vLLM enables by default, switched off in the launch.

Launch-configuration anti-patterns, visible before anything goes wrong: prefix caching off
(AP-3), chunked prefill off (AP-4), CUDA graphs off by --enforce-eager (AP-5). Each costs
throughput or latency on every request; defined, like ap_sizing's, from docs/reference.md's
signal → remedy pairs (§5) and pitfalls (§1.7, §2.1, §2.4, §2.5, §2.7). Low severity unless
the workload or a measured symptom (shared prefixes, high ITL) shows the cost, then medium.
AP-5 fires only on a value the user set. Launches sized past what the hardware or workload
bears are in ap_sizing.py.
"""

from __future__ import annotations

from rules import signals
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt


def _check_prefix_off(facts: Facts) -> list[Finding]:
    if not facts.config or facts.config.enable_prefix_caching is not False:
        return []
    reuse = facts.workload.prefix_reuse_share if facts.workload else None
    if reuse is not None and reuse < c.REUSE_WORTH_CACHING:
        return []
    evidence = [c.config_evidence(facts, "enable_prefix_caching")]
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
    evidence = [c.config_evidence(facts, "enable_chunked_prefill")]
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
    if not facts.config or not facts.config.enforce_eager or not c.explicitly_set(facts, "enforce_eager"):
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
        title = "--enforce-eager set: the model runs uncompiled (no torch.compile)"
    else:
        reason, cost = (
            "CUDA graphs cut per-step launch overhead, most at small batch sizes",
            "0.5–1.9 GiB for the graph pool; longer startup",
        )
        summary = "Without CUDA graphs every decode step pays kernel-launch overhead."
        title = "--enforce-eager set: CUDA graphs off, every decode step pays kernel-launch overhead"
    return [
        RULE_EAGER.finding(
            Severity.LOW,
            title,
            evidence=[c.config_evidence(facts, "enforce_eager")],
            confidence=0.6,
            summary=summary,
            changes=[ConfigChange(flag="--enforce-eager", current="true", proposed="false", reason=reason, cost=cost)],
        )
    ]


RULE_EAGER = Rule(
    code="AP-5",
    title="enforce-eager set explicitly",
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


RULES: list[Rule] = [RULE_PREFIX_OFF, RULE_CHUNKED_OFF, RULE_EAGER]
