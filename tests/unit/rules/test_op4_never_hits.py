"""OP-4.5: a prefix cache at exactly zero hits, read with what vLLM printed at startup.

The facts are built the way triage builds them from a paste (advisor/collect/logs.py reads the quoted
figures and the startup lines), so the reading of a person's table or sentence is covered too."""

from __future__ import annotations

from advisor.collect.facts import server_config
from advisor.collect.logs import parse_lines
from advisor.collect.metrics import snapshot_from_samples
from rules.catalog import op4_never_hits as op4
from rules.catalog import op4_prefix
from rules.facts import Facts
from tests.unit.rules.factories import config

GATE = (
    "WARNING 05-01 14:24:50 [kv_cache_coordinator.py:611] Disabling fine-grained prefix-cache hits because these KV "
    "cache managers require block-aligned lookups: KpoolTailManager."
)
HYBRID = "Setting attention block size to 4224 tokens to ensure that attention page size is >= mamba page size."


def _facts(*lines: str) -> Facts:
    log = parse_lines(list(lines))
    samples = log.quoted_metrics.all()
    return Facts(
        events=log.events,
        snapshot=snapshot_from_samples(samples, "pasted", None) if samples else None,
        config=server_config(None, log.events, None),
    )


def test_zero_hits_with_the_partial_hit_gate_names_the_managers_and_an_upgrade():
    # tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark issue 13: a metrics table and the startup warning
    facts = _facts("vllm:prefix_cache_queries_total   442,227", "vllm:prefix_cache_hits_total            0", GATE)
    [finding] = op4.RULE_NEVER_HITS.evaluate(facts)
    assert "0 prefix-cache hits in 442,227 queried tokens" in finding.title and "KpoolTailManager" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM")
    assert op4_prefix.RULE_LOW_HIT.evaluate(facts) == []  # zero since start is this rule's, not a low rate


def test_a_hybrid_block_longer_than_any_prompt_is_reported_from_its_startup_line_alone():
    # vllm#54504: NemotronH with an fp8 KV cache, block 4224 > --max-model-len 4096
    [finding] = op4.RULE_NEVER_HITS.evaluate(_facts(HYBRID))
    assert "4,224 tokens" in finding.title
    [change] = finding.changes
    assert (change.flag, change.proposed) == ("--kv-cache-dtype", "auto") and "2,112" in change.reason
    facts = _facts(HYBRID)
    assert facts.config is not None and facts.config.block_size == 4224  # the block vLLM set, over the default


def test_a_short_hybrid_block_without_hit_figures_is_not_a_finding():
    line = "Setting attention block size to 528 tokens to ensure that attention page size is >= mamba page size."
    assert op4.RULE_NEVER_HITS.evaluate(_facts(line)) == []


def test_zero_hits_quoted_in_a_sentence_says_the_cache_reuses_whole_blocks_only():
    # vllm#54607: "came back with `prefix_cache_hits_total` at exactly 0"; a 240-token prefix, a 784-token block
    facts = _facts("vLLM came back with `prefix_cache_hits_total` at exactly 0, and the other engine reported 49.3%.")
    [finding] = op4.RULE_NEVER_HITS.evaluate(facts)
    assert "whole blocks only" in finding.summary and "shorter than one block" in finding.summary
    assert finding.changes == []


def test_hits_above_zero_or_caching_off_are_not_this_rule():
    assert (
        op4.RULE_NEVER_HITS.evaluate(_facts("vllm:prefix_cache_queries_total 100", "vllm:prefix_cache_hits_total 3"))
        == []
    )
    facts = _facts("vllm:prefix_cache_queries_total 100", "vllm:prefix_cache_hits_total 0")
    assert op4.RULE_NEVER_HITS.evaluate(facts)
    facts.config = config(enable_prefix_caching=False)
    assert op4.RULE_NEVER_HITS.evaluate(facts) == []
