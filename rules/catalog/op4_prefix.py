"""OP-4: prefix caching — is the reuse the workload offers actually turned into cache hits?

Hit rate = rate(prefix_cache_hits)/rate(prefix_cache_queries) (tokens; 0.8.x counted blocks,
the ratio is the same). A low hit rate is only a problem when the workload reuses prefixes:
unique prompts legitimately miss. So these rules weigh the measured rate against the
workload's reuse share when it is known, and stay low-severity when it is not.
"""

from __future__ import annotations

from rules import signals
from rules.alerts import BY, Alert, spellings
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

LOW_HIT_RATE = 0.30
CACHED_PREFIX_SHARE = 0.75  # a shared prefix should sit at least this much in full (cacheable) blocks
ROUTED_HIT_SHARE = 0.6  # across replicas the hit rate should reach this share of the reuse share
CUDA_BLOCK_SIZES = (8, 16, 32)
REFS = ["https://docs.vllm.ai/en/latest/design/prefix_caching.html"]


def _caching_disabled(facts: Facts) -> bool:
    return facts.config is not None and facts.config.enable_prefix_caching is False


def _reuse(facts: Facts) -> float | None:
    return facts.workload.prefix_reuse_share if facts.workload else None


# --- OP-4.1 low hit rate -----------------------------------------------------------------------


def _check_low_hit_rate(facts: Facts) -> list[Finding]:
    hit = signals.prefix_hit_rate(facts)
    if hit is None or _caching_disabled(facts) or hit.value >= LOW_HIT_RATE:
        return []
    if hit.value == 0 and not hit.strong:
        return []  # counters at exactly 0 since start: OP-4.5 says why nothing can hit
    if hit.value == 0 and _no_prompt_in_any_interval(facts):
        return []  # vLLM prints 0.0% for no query at all (0/0) too: an idle server's lines say nothing
    reuse = _reuse(facts)
    if reuse is not None and reuse < c.REUSE_WORTH_CACHING:
        return []  # little to reuse: a low hit rate is expected
    evidence = [hit.evidence.model_copy(update={"threshold": LOW_HIT_RATE, "comparison": "<"})]
    severity, confidence = Severity.LOW, 0.4
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
        severity, confidence = Severity.MEDIUM, 0.7 if hit.strong else 0.5
    title = f"prefix cache hit rate {hit.value:.0%} < {LOW_HIT_RATE:.0%}" + (
        f" while {reuse:.0%} of prompt tokens are shared" if reuse is not None else ""
    )
    return [
        RULE_LOW_HIT.finding(
            severity,
            title,
            evidence=evidence,
            confidence=confidence,
            summary="Shared prompt prefixes are being recomputed instead of read from the cache."
            if reuse is not None
            else "The prefix cache finds little of what it is asked for. Whether the prompts share prefixes is not "
            "in the inputs: prompts that share none hit nothing, and that is no fault (--prefix-reuse, the share of "
            "prompt tokens in shared prefixes, tells the two apart).",
            actions=[
                "Put the shared part (system prompt, documents) first and byte-identical; no timestamps or "
                "request ids before it.",
                "If KV usage is high, cached blocks are evicted early: more KV memory helps (OP-5.3).",
                "With several replicas, route by prefix (OP-4.3).",
            ],
        )
    ]


def _no_prompt_in_any_interval(facts: Facts) -> bool:
    """The hit rate comes from stats lines (no window) and none of them processed a prompt token."""
    stats = facts.events_of(LogEventKind.STATS_LINE)
    return facts.window is None and bool(stats) and not any(e.prompt_throughput_tps for e in stats)


# The hit rate over 15 minutes where the cache was queried at all (0/0 is no rate, never an alert).
HIT_WINDOW = "15m"
ALERT_LOW_HIT = Alert(
    name="VllmPrefixCacheHitRateLow",
    expr=" or ".join(
        f"(sum by ({BY}) (rate({hits}[{HIT_WINDOW}])) / sum by ({BY}) (rate({queries}[{HIT_WINDOW}])) "
        f"< {LOW_HIT_RATE:g}) and on ({BY}) (sum by ({BY}) (rate({queries}[{HIT_WINDOW}])) > 0)"
        for hits, queries in zip(
            spellings("vllm:prefix_cache_hits_total"), spellings("vllm:prefix_cache_queries_total"), strict=True
        )
    ),
    for_="30m",
    severity=Severity.LOW,
    description=f"{{{{ $labels.instance }}}} ({{{{ $labels.model_name }}}}): prefix cache hit rate "
    f"{{{{ $value | humanizePercentage }}}} < {LOW_HIT_RATE:.0%}; worth a look where prompts share prefixes.",
)

RULE_LOW_HIT = Rule(
    code="OP-4.1",
    title="low prefix-cache hit rate",
    category=Category.PREFIX_CACHE,
    check=_check_low_hit_rate,
    alerts=(ALERT_LOW_HIT,),
    needs=("window", "snapshot", "events"),
    page=RulePage(
        checks="Prefix-cache hit rate (window, stats line, or since-start counters) below "
        f"{c.percent(LOW_HIT_RATE)}, with prefix caching on.",
        why="Every missed shared prefix is recomputed: higher TTFT and prefill load.",
        example="hit rate 8 % while 70 % of prompt tokens are a shared system prompt.",
        fix="Make prefixes byte-identical and first; keep enough free KV; route by prefix across replicas.",
        limits="Without workload facts a low rate may simply mean unique prompts: reported as low severity. A 0 % "
        "on stats lines none of which processed a prompt is not read: vLLM prints 0.0 % for no query at all.",
        references=REFS,
    ),
)


# --- OP-4.2 blocks larger than what is shared --------------------------------------------------


def _check_prompts_shorter_than_a_block(facts: Facts) -> list[Finding]:
    """The configuration smell: a block so large that no prompt fills one, so nothing can ever hit."""
    prompt = c.prompt_p95(facts)
    block = c.block_size(facts)
    if prompt is None or prompt.value >= block:
        return []
    p95, evidence = prompt.value, prompt.evidence
    fitting = [b for b in CUDA_BLOCK_SIZES if b <= p95 / 2]
    changes = (
        []
        if not fitting or c.on_cpu_backend(facts)
        else [
            ConfigChange(
                flag="--block-size",
                current=str(block),
                proposed=str(max(fitting)),
                reason=f"a p95 prompt of {fmt(p95)} tokens then fills at least two blocks, "
                "which later requests can reuse",
                cost="more blocks to manage; some attention backends/models force their size",
            )
        ]
    )
    return [
        RULE_BLOCK_SIZE.finding(
            Severity.LOW,
            f"block size {block} > p95 prompt {fmt(p95)} tokens: no prompt fills a block, the prefix cache cannot hit",
            evidence=[
                evidence.model_copy(update={"threshold": block, "comparison": "<"}),
                Evidence(source="config", name="--block-size", value=block),
            ],
            changes=changes,
            confidence=0.7,
            summary="Prefix caching hashes full blocks only: with prompts shorter than a block, prefix caching costs "
            "its bookkeeping and never saves a token.",
        )
    ]


def _check_block_size(facts: Facts) -> list[Finding]:
    if _caching_disabled(facts):
        return []
    shared = facts.workload.shared_prefix_tokens if facts.workload else None
    if not shared:
        return _check_prompts_shorter_than_a_block(facts)
    block = c.block_size(facts)
    cached = (shared // block) * block
    if cached >= CACHED_PREFIX_SHARE * shared:
        return []
    evidence = [
        Evidence(source="workload", name="shared prefix tokens", value=shared),
        Evidence(source="config", name="--block-size", value=block),
        Evidence(
            source="advisor",
            name="share of the prefix in full blocks",
            value=round(cached / shared, 2),
            threshold=CACHED_PREFIX_SHARE,
            comparison="<",
        ),
    ]
    fitting = [b for b in CUDA_BLOCK_SIZES if b <= shared and b < block]
    changes = []
    if fitting:
        enough = [b for b in fitting if (shared // b) * b >= CACHED_PREFIX_SHARE * shared]
        proposed = max(enough) if enough else min(fitting)
        changes.append(
            ConfigChange(
                flag="--block-size",
                current=str(block),
                proposed=str(proposed),
                reason=f"only full blocks are cached: {(shared // proposed) * proposed} of {shared} shared tokens "
                f"would be, instead of {cached}",
                cost="more blocks to manage; some attention backends/models force their size",
            )
        )
    return [
        RULE_BLOCK_SIZE.finding(
            Severity.MEDIUM if cached == 0 else Severity.LOW,
            f"block size {block} caches {cached} of the {shared}-token shared prefix "
            f"(< {c.percent(CACHED_PREFIX_SHARE)})",
            summary="Prefix caching hashes full blocks only; a prefix shorter than a block is never reused.",
            evidence=evidence,
            changes=changes,
            confidence=0.7,
        )
    ]


RULE_BLOCK_SIZE = Rule(
    code="OP-4.2",
    title="block size larger than the shared prefix",
    category=Category.PREFIX_CACHE,
    check=_check_block_size,
    needs=("workload", "window", "snapshot"),
    page=RulePage(
        checks="The workload's shared prefix length against --block-size: the share of the prefix in full blocks, "
        f"below {c.percent(CACHED_PREFIX_SHARE)}. Without a known prefix: the p95 prompt "
        "(vllm:request_prompt_tokens, else the workload) against --block-size, since a prompt shorter than "
        "one block never leaves a cached block behind.",
        why="Prefix caching hashes full blocks; the tail of a prefix shorter than a block is recomputed.",
        example="40-token system prompt, --block-size 64 -> 0 tokens cached; --block-size 16 caches 32.",
        fix="A smaller --block-size (16 on CUDA) when the backend allows it.",
        limits="MLA and hybrid models force their own block size (64, 128, hundreds).",
        references=REFS,
    ),
)


# --- OP-4.3 replicas split the cache -----------------------------------------------------------


def _instance_hit_rates(facts: Facts) -> dict[str, float]:
    if facts.window is None:
        return {}
    rates = {}
    for part in facts.window.per_instance:
        ratio = part.ratio("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total")
        if ratio is not None:
            rates[part.instance] = ratio
    return rates


def _check_routing(facts: Facts) -> list[Finding]:
    per_instance = _instance_hit_rates(facts)
    replicas = max(len(per_instance), (facts.workload.num_replicas or 0) if facts.workload else 0)
    routing = facts.workload.routing if facts.workload else None
    hit = signals.prefix_hit_rate(facts)
    reuse = _reuse(facts)
    if replicas < 2 or routing in ("prefix_aware", "session_affinity") or hit is None or reuse is None:
        return []
    if reuse < c.REUSE_WORTH_CACHING or hit.value >= ROUTED_HIT_SHARE * reuse:
        return []
    evidence = [
        hit.evidence.model_copy(update={"threshold": round(ROUTED_HIT_SHARE * reuse, 3), "comparison": "<"}),
        Evidence(source="workload", name="replicas", value=replicas),
        Evidence(source="workload", name="routing", value=routing or "unknown"),
    ]
    evidence += [
        Evidence(source="prometheus", name="prefix cache hit rate", value=round(v, 3), location=k)
        for k, v in sorted(per_instance.items())
    ]
    return [
        RULE_ROUTING.finding(
            Severity.MEDIUM,
            f"hit rate {hit.value:.0%} across {replicas} replicas < {c.percent(ROUTED_HIT_SHARE)} of "
            f"the {reuse:.0%} reuse share",
            summary="Requests sharing a prefix land on different replicas, so each replica caches it separately.",
            evidence=evidence,
            confidence=0.75 if len(per_instance) >= 2 else 0.6,
            actions=[
                "Route by prefix or session (llm-d inference scheduler, vLLM production-stack router, "
                "consistent hashing on the system-prompt id)."
            ],
        )
    ]


RULE_ROUTING = Rule(
    code="OP-4.3",
    title="replicas split the prefix cache",
    category=Category.PREFIX_CACHE,
    check=_check_routing,
    needs=("window", "workload"),
    page=RulePage(
        checks="Two or more replicas, round-robin or unknown routing, fleet hit rate below "
        f"{c.percent(ROUTED_HIT_SHARE)} of the reuse share.",
        why="Each replica caches its own copy; with N replicas each sees 1/N of a prefix's traffic.",
        example="4 replicas, reuse 80 %, hit rate 25 %.",
        fix="Prefix-aware or session-affinity routing in the gateway.",
        limits="Needs the workload's reuse share; per-instance rates need Prometheus.",
        references=REFS,
    ),
)


# --- OP-4.4 cache salting ----------------------------------------------------------------------


def _check_salting(facts: Facts) -> list[Finding]:
    hit = signals.prefix_hit_rate(facts)
    if not (facts.workload and facts.workload.uses_cache_salt) or hit is None or hit.value >= LOW_HIT_RATE:
        return []
    return [
        RULE_SALT.finding(
            Severity.INFO,
            f"cache_salt in use and hit rate {hit.value:.0%} < {LOW_HIT_RATE:.0%}",
            summary="Salted requests only share cache entries with the same salt (per tenant, by design).",
            evidence=[hit.evidence, Evidence(source="workload", name="cache_salt", value=True)],
            confidence=0.6,
            actions=["Salt per tenant, not per request, if tenants may share their own prefixes."],
        )
    ]


RULE_SALT = Rule(
    code="OP-4.4",
    title="cache salting limits reuse",
    category=Category.PREFIX_CACHE,
    check=_check_salting,
    needs=("workload",),
    page=RulePage(
        checks=f"Requests carry cache_salt and the hit rate is below {c.percent(LOW_HIT_RATE)}.",
        why="vLLM mixes the salt into block hashes so tenants cannot probe each other's cache.",
        example="cache_salt = request id: no two requests ever share a block.",
        fix="Salt per tenant (or not at all) when reuse within a tenant is safe.",
        limits="Informational: salting is a security decision.",
        references=REFS,
    ),
)

RULES: list[Rule] = [RULE_LOW_HIT, RULE_BLOCK_SIZE, RULE_ROUTING, RULE_SALT]
