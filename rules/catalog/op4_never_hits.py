"""OP-4.5: the prefix cache hits nothing, or cannot hit the prompts it is given.

Why apart from OP-4.1's low hit rate: a rate of exactly zero with the cache queried is not a workload that
shares little, it is a cache that cannot match, and vLLM's own structure says why. It caches whole blocks
only (a prefix shorter than one block is never reused); a hybrid (attention + Mamba) model sets its
attention block so one page holds a Mamba state page, which can make a block thousands of tokens long
(`Setting attention block size to N tokens …`, vllm/platforms/interface.py in 0.32, the model config
before); and from 0.28 vLLM turns off sub-block ("fine-grained") hits when a KV cache group's manager can
only look up whole blocks (`Disabling fine-grained prefix-cache hits …`). A person who sees the counter
at 0 usually suspects a misconfiguration; the finding says which of these it is, or that the counter is
right.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

# A block longer than this is one no ordinary shared prefix (a system prompt, a tool list) fills.
LONG_BLOCK_TOKENS = 1024
# vLLM's warning when a KV cache group can only be looked up in whole blocks (0.28–0.31 kv_cache_coordinator.py,
# 0.32+ kv_cache_utils.py).
PARTIAL_HITS_OFF = "Disabling fine-grained prefix-cache hits"
REFS = [
    "https://docs.vllm.ai/en/latest/design/prefix_caching.html",
    "https://github.com/vllm-project/vllm/issues/54607",
    "https://github.com/vllm-project/vllm/issues/54504",
]


def _zero_hits(facts: Facts) -> tuple[Evidence, float | None] | None:
    """Hits of exactly 0 where the cache was queried (or the queries are not known): the evidence and the
    queried tokens. A window's rates first, else the counters since start (quoted or scraped)."""
    if facts.window is not None:
        queries = facts.window.total.rate("vllm:prefix_cache_queries_total")
        hits = facts.window.total.rate("vllm:prefix_cache_hits_total")
        if queries and hits == 0:
            return Evidence(source="metrics", name="rate(prefix_cache_hits)", value=0.0, comparison="=="), None
    if facts.snapshot is None:
        return None
    hits = facts.snapshot.value("vllm:prefix_cache_hits_total")
    queries = facts.snapshot.value("vllm:prefix_cache_queries_total")
    if hits != 0 or queries == 0:
        return None
    evidence = Evidence(source="metrics", name="vllm:prefix_cache_hits_total", value=0.0)
    if queries is not None:
        evidence.description = f"prefix-cache hits, of {queries:,.0f} queried prompt tokens"
    return evidence, queries


def _partial_hits_off(facts: Facts) -> LogEvent | None:
    events = facts.events_of(LogEventKind.VLLM_MESSAGE)
    return next((e for e in events if e.catalog and e.catalog.template.startswith(PARTIAL_HITS_OFF)), None)


def _mamba_block(facts: Facts) -> LogEvent | None:
    events = [e for e in facts.events_of(LogEventKind.ATTENTION_BLOCK_SIZE) if e.mamba_aligned and e.block_size]
    return events[-1] if events else None


def _check_never_hits(facts: Facts) -> list[Finding]:
    if facts.config is not None and facts.config.enable_prefix_caching is False:
        return []
    zero = _zero_hits(facts)
    gate = _partial_hits_off(facts)
    if zero is not None and gate is not None:
        return [_gated(facts, zero, gate)]
    block_event = _mamba_block(facts)
    if block_event is not None and (zero is not None or _too_long(facts, block_event.block_size or 0)):
        return [_hybrid_block(facts, zero, block_event)]
    return [_whole_blocks_only(facts, zero)] if zero is not None else []


def _too_long(facts: Facts, block: int) -> bool:
    limit = facts.config.max_model_len if facts.config else None
    return block > LONG_BLOCK_TOKENS or (limit is not None and block >= limit)


def _zero_text(zero: tuple[Evidence, float | None] | None) -> str:
    if zero is None:
        return ""
    queries = zero[1]
    return f"0 prefix-cache hits in {queries:,.0f} queried tokens" if queries else "0 prefix-cache hits"


def _gated(facts: Facts, zero: tuple[Evidence, float | None], gate: LogEvent) -> Finding:
    ref = gate.catalog
    assert ref is not None
    managers = next(iter(ref.captured.values()), "").strip(" .") or "a KV cache manager"
    return RULE_NEVER_HITS.finding(
        Severity.MEDIUM,
        f"{_zero_text(zero)}: vLLM turned fine-grained prefix-cache hits off for {managers}",
        summary=f"vLLM warned ({ref.location()}) that the KV cache managers {managers} need block-aligned lookups, "
        "and turned sub-block prefix-cache hits off for every group. vLLM 0.32's check counts only groups that "
        "take part in prefix caching (`prefix_cacheable`, vllm/v1/core/kv_cache_utils.py); a build whose check "
        "also counted a group that opts out (a scratch or draft pool) lost the hits of the real groups too, "
        "which is how byte-identical prompts still miss.",
        evidence=[zero[0], c.log_evidence(gate, "vllm_message", gate.message)],
        actions=[
            "Upgrade vLLM to a release whose check skips groups that opt out of prefix caching (0.32 does; on a "
            "patched build, one with '[Bugfix] Ignore cache opt-outs in partial-hit gating').",
            f"If {managers} does take part in prefix caching, hits come only in whole blocks: compare the shared "
            f"prefix with the block size ({_block_text(facts)}).",
        ],
        confidence=0.75,
    )


def _hybrid_block(facts: Facts, zero: tuple[Evidence, float | None] | None, event: LogEvent) -> Finding:
    block = event.block_size or 0
    limit = facts.config.max_model_len if facts.config else None
    beyond = f", longer than --max-model-len {limit:,}" if limit and block >= limit else ""
    lead = f"{_zero_text(zero)}: " if zero else ""
    evidence = [c.log_evidence(event, "attention block size", block, unit="tokens")]
    if zero is not None:
        evidence.insert(0, zero[0])
    return RULE_NEVER_HITS.finding(
        Severity.MEDIUM if zero is not None or beyond else Severity.LOW,
        f"{lead}a hybrid model's attention block size is {block:,} tokens{beyond}: only prompts past a whole "
        "block can reuse a cached prefix",
        summary="Prefix caching reuses whole blocks only. vLLM sets a hybrid (attention + Mamba) model's attention "
        "block so that one attention page holds a Mamba state page: the fewer bytes each token's KV takes, the more "
        "tokens a block needs. An fp8 KV cache halves those bytes and so doubles the block; a float32 Mamba state "
        "makes its page, and the block, larger.",
        evidence=evidence,
        changes=[_kv_dtype_change(facts, block)],
        actions=[
            "Where the model allows, a smaller Mamba state dtype (--mamba-ssm-cache-dtype) shrinks the page the block "
            "must match; some models pin it to float32."
        ],
        confidence=0.7,
    )


def _kv_dtype_change(facts: Facts, block: int) -> ConfigChange:
    current = facts.config.kv_cache_dtype if facts.config else None
    if current and "fp8" not in current.lower():
        reason = f"already {current}: the block cannot shrink by the KV dtype; only a smaller Mamba page helps"
    else:
        reason = (
            f"the model's own dtype takes twice an fp8 KV cache's bytes per token, so the block that holds a Mamba "
            f"page is about half as long ({block:,} → about {block // 2:,} tokens) where the KV cache is fp8 now"
        )
    return ConfigChange(
        flag="--kv-cache-dtype",
        current=current,
        proposed="auto",
        reason=reason,
        cost="twice the KV memory per token: about half the tokens in the same pool",
    )


def _block_text(facts: Facts) -> str:
    """The block size and where it is known from: a flag or the startup log, else vLLM's default."""
    known = (facts.config and facts.config.block_size) or (facts.memory and facts.memory.block_size)
    return f"{c.block_size(facts)} tokens" if known else f"vLLM's default is {c.block_size(facts)} tokens"


def _whole_blocks_only(facts: Facts, zero: tuple[Evidence, float | None]) -> Finding:
    return RULE_NEVER_HITS.finding(
        Severity.LOW,
        f"{_zero_text(zero)}: the prefix cache matched nothing",
        summary=f"vLLM caches and reuses whole blocks only ({_block_text(facts)}; a hybrid model's is far larger, "
        "and its startup log says so). A shared prefix shorter than one block is "
        "never reused, and prompts that differ within their first block (a timestamp, a request id, a per-request "
        "cache_salt) never match: the counter can be right.",
        evidence=[zero[0]],
        actions=[
            "Find the real block size: the startup line 'Setting attention block size to N tokens', or the "
            "block_size label of vllm:cache_config_info.",
            "Compare it with the shared prefix in tokens; put the shared part first and byte-identical.",
        ],
        confidence=0.6,
    )


RULE_NEVER_HITS = Rule(
    code="OP-4.5",
    title="the prefix cache hits nothing, or cannot hit these prompts",
    category=Category.PREFIX_CACHE,
    check=_check_never_hits,
    needs=("snapshot", "window", "events"),
    page=RulePage(
        checks="Prefix-cache hits of exactly 0 with the cache queried (a window, the counters, or figures quoted "
        "in the text), read with what vLLM printed at startup: the warning that it turned fine-grained hits off "
        "for some KV cache managers, and a hybrid model's attention block size. A hybrid block longer than "
        f"{LONG_BLOCK_TOKENS} tokens (or --max-model-len) is reported even without hit figures.",
        why="Zero hits is a structure, not a workload: vLLM caches whole blocks only, a hybrid model's block can be "
        "thousands of tokens, and a gating bug turned hits off for every group.",
        example="vllm:prefix_cache_hits_total 0 of 442,227 queried, and 'Disabling fine-grained prefix-cache hits "
        "because these KV cache managers require block-aligned lookups: KpoolTailManager'.",
        fix="The gate: upgrade to a vLLM whose check skips groups that opt out of prefix caching (0.32). A hybrid "
        "block: --kv-cache-dtype auto where the KV cache is fp8 (half the block). Otherwise none: compare the "
        "shared prefix with the block.",
        limits="The block size servops assumes without a startup log is vLLM's default; a hybrid model's is only "
        "known from its startup line.",
        references=REFS,
    ),
)

RULES: list[Rule] = [RULE_NEVER_HITS]
