"""OP-4: prefix caching weighed against the reuse the workload offers."""

from rules.catalog import op4_prefix as op4
from rules.events import LogEventKind as K
from rules.facts import Facts, MetricSnapshot, MetricWindow, Sample, Workload
from tests.unit.rules.factories import config, event, live


def test_low_hit_rate_with_high_reuse_is_medium_with_both_numbers():
    facts = live(prefix=(10_000, 800))
    facts.workload = Workload(prefix_reuse_share=0.7)
    [finding] = op4.RULE_LOW_HIT.evaluate(facts)
    assert finding.severity.value == "medium"
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (0.08, 0.30)
    assert "8%" in finding.title and "70%" in finding.title


def test_low_hit_rate_without_workload_facts_is_only_low_and_does_not_claim_shared_prefixes():
    facts = live(prefix=(10_000, 800))
    [finding] = op4.RULE_LOW_HIT.evaluate(facts)
    assert finding.severity.value == "low"
    # the reuse is unknown: prompts that share nothing hit nothing, so the summary asks rather than asserts
    assert "Shared prompt prefixes are being recomputed" not in finding.summary
    assert "--prefix-reuse" in finding.summary
    facts.workload = Workload(prefix_reuse_share=0.7)
    assert op4.RULE_LOW_HIT.evaluate(facts)[0].summary.startswith("Shared prompt prefixes are being recomputed")


def test_low_hit_rate_with_unique_prompts_is_expected():
    facts = live(prefix=(10_000, 800))
    facts.workload = Workload(prefix_reuse_share=0.05)
    assert op4.RULE_LOW_HIT.evaluate(facts) == []


def test_hit_rate_falls_back_to_the_stats_line():
    facts = Facts(
        events=[event(K.STATS_LINE, running=4, waiting=0, prefix_hit_rate=0.12)],
        workload=Workload(prefix_reuse_share=0.6),
    )
    [finding] = op4.RULE_LOW_HIT.evaluate(facts)
    assert finding.evidence[0].source == "log" and finding.evidence[0].value == 0.12


def test_a_zero_rate_on_lines_that_processed_no_prompt_is_no_finding():
    """V1 prints 0.0% for no query at all (0/0): an idle server's lines are not a low hit rate; the same 0 % on a
    line that processed prompts is."""
    idle = [event(K.STATS_LINE, running=0, waiting=0, prefix_hit_rate=0.0, prompt_throughput_tps=0.0)] * 2
    assert op4.RULE_LOW_HIT.evaluate(Facts(events=idle)) == []
    busy = [*idle, event(K.STATS_LINE, running=2, waiting=0, prefix_hit_rate=0.0, prompt_throughput_tps=950.0)]
    [finding] = op4.RULE_LOW_HIT.evaluate(Facts(events=busy))
    assert finding.evidence[0].value == 0.0


def test_block_size_larger_than_the_shared_prefix_proposes_a_smaller_block():
    facts = Facts(config=config(block_size=64), workload=Workload(shared_prefix_tokens=40))
    [finding] = op4.RULE_BLOCK_SIZE.evaluate(facts)
    # 32 is the largest CUDA block size that keeps >= 75 % of the prefix in full blocks (32 of 40)
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--block-size", "32")]
    assert "caches 0 of the 40-token" in finding.title


def test_block_size_is_fine_when_most_of_the_prefix_fills_whole_blocks():
    assert (
        op4.RULE_BLOCK_SIZE.evaluate(Facts(config=config(block_size=16), workload=Workload(shared_prefix_tokens=1200)))
        == []
    )


def test_prompts_shorter_than_a_block_can_never_hit_the_prefix_cache():
    """The configuration smell: --block-size 128 with 40-token p95 prompts leaves no full block to reuse."""
    facts = Facts(config=config(block_size=128), workload=Workload(p95_input_tokens=40))
    [finding] = op4.RULE_BLOCK_SIZE.evaluate(facts)
    assert finding.severity.value == "low" and "no prompt fills a block" in finding.title
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--block-size", "16")]


def test_on_vllms_cpu_backend_the_smell_is_named_without_a_block_size_it_cannot_take():
    facts = Facts(config=config(block_size=128, device="cpu"), workload=Workload(p95_input_tokens=40))
    [finding] = op4.RULE_BLOCK_SIZE.evaluate(facts)
    assert finding.changes == []


def test_prompts_longer_than_a_block_are_no_smell():
    assert (
        op4.RULE_BLOCK_SIZE.evaluate(Facts(config=config(block_size=16), workload=Workload(p95_input_tokens=40))) == []
    )


def _fleet(hit_a: float, hit_b: float) -> Facts:
    def snap(scale):
        samples = {"vllm:prefix_cache_queries_total": [], "vllm:prefix_cache_hits_total": []}
        for inst, hit in (("a:8000", hit_a), ("b:8000", hit_b)):
            samples["vllm:prefix_cache_queries_total"].append(Sample(labels={"instance": inst}, value=10_000 * scale))
            samples["vllm:prefix_cache_hits_total"].append(
                Sample(labels={"instance": inst}, value=10_000 * hit * scale)
            )
        return MetricSnapshot(counters=samples)

    return Facts(
        window=MetricWindow.from_snapshots(snap(1), snap(2), 10.0),
        workload=Workload(prefix_reuse_share=0.7, routing="round_robin"),
    )


def test_replicas_with_round_robin_routing_split_the_cache():
    [finding] = op4.RULE_ROUTING.evaluate(_fleet(0.2, 0.24))
    assert "2 replicas" in finding.title
    assert {e.location for e in finding.evidence if e.location} == {"a:8000", "b:8000"}


def test_prefix_aware_routing_is_not_flagged():
    facts = _fleet(0.2, 0.24)
    facts.workload.routing = "prefix_aware"
    assert op4.RULE_ROUTING.evaluate(facts) == []


def test_salted_requests_with_a_low_hit_rate_get_an_info_note():
    facts = live(prefix=(10_000, 500))
    facts.workload = Workload(uses_cache_salt=True)
    assert op4.RULE_SALT.evaluate(facts)[0].severity.value == "info"
