"""OP-5.23: decode crawling beside a long chunked prefill, from stats lines alone."""

from __future__ import annotations

from rules.catalog import op5_prefill_stall, op5_slow_gpu
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import config, event


def _line(line: int, time_s: float, prompt: float, generated: float, running: int = 2):
    return event(
        K.STATS_LINE,
        line,
        time_s=time_s,
        prompt_throughput_tps=prompt,
        generation_throughput_tps=generated,
        running=running,
        waiting=0,
    )


# blazux/qwen3.8-Flash-DGX#9: 0.9 tokens/s for two streams, then ~74k prompt tokens finished in the next 10 s
CRAWL_THEN_PREFILL = [_line(2, 10.0, 0.0, 0.9), _line(5, 20.0, 7408.7, 20.4)]


def test_a_crawl_beside_a_prefill_of_many_budgets_is_named_with_both_numbers():
    [finding] = op5_prefill_stall.RULE_PREFILL_STALL.evaluate(Facts(events=CRAWL_THEN_PREFILL))
    assert finding.title == (
        "decode crawled at 0.45 tokens/s per sequence while 74,087 prompt tokens were prefilled beside it: the steps "
        "went to the prefill"
    )
    assert [e.value for e in finding.evidence] == [0.45, 74087]
    assert finding.changes == []  # vLLM's default budget is already the small one: nothing to lower


def test_a_budget_above_the_default_is_lowered_to_it():
    facts = Facts(events=CRAWL_THEN_PREFILL, config=config(max_num_batched_tokens=8192))
    [finding] = op5_prefill_stall.RULE_PREFILL_STALL.evaluate(facts)
    [change] = finding.changes
    assert (change.flag, change.current, change.proposed) == ("--max-num-batched-tokens", "8192", "2048")


def test_a_crawl_without_a_long_prefill_or_a_fast_decode_is_not_this():
    no_prefill = [_line(2, 10.0, 0.0, 0.9), _line(5, 20.0, 300.0, 1.0)]
    fast = [_line(2, 10.0, 0.0, 60.0), _line(5, 20.0, 7408.7, 60.0)]
    for lines in (no_prefill, fast):
        assert op5_prefill_stall.RULE_PREFILL_STALL.evaluate(Facts(events=lines)) == []


def test_the_slow_gpu_rule_leaves_out_decode_lines_beside_a_long_prefill():
    crawl = [_line(1, 0.0, 0.0, 0.9), _line(2, 10.0, 0.0, 0.9), _line(3, 20.0, 7408.7, 20.4)]
    slow_everywhere = [_line(1, 0.0, 0.0, 0.9), _line(2, 10.0, 0.0, 0.9)]
    assert op5_slow_gpu.RULE_SLOW_GPU.evaluate(Facts(events=crawl)) == []
    assert op5_slow_gpu.RULE_SLOW_GPU.evaluate(Facts(events=slow_everywhere)) != []
