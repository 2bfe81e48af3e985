"""HL-5: requests waiting beside an empty KV cache with nothing running is the scheduler, not saturation."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from advisor.collect.metrics import snapshot_from_samples
from rules.catalog import health_admission as hl5
from rules.catalog import op5_queueing
from rules.events import LogEventKind as K
from rules.facts import Facts, MemoryFacts
from tests.unit.rules.factories import config, event, live


def test_waiting_with_nothing_running_and_an_empty_cache_is_the_scheduler_not_saturation():
    facts = live(running=0, waiting=3, kv=0.0, generated=0)
    [finding] = hl5.RULE_ADMISSION.evaluate(facts)
    assert "3 request(s) waiting, none running, KV cache empty" in finding.title
    assert finding.actions[0].startswith("Upgrade vLLM to 0.22.1")  # version unknown: the admission fix applies
    assert op5_queueing.RULE_SATURATION.evaluate(facts) == []


def test_a_full_cache_or_a_running_batch_is_not_this_rule():
    for facts in (live(running=0, waiting=3, kv=0.95), live(running=2, waiting=3, kv=0.0), live(waiting=0, kv=0.0)):
        assert hl5.RULE_ADMISSION.evaluate(facts) == []


def test_tokens_generated_over_the_window_are_a_gap_between_requests_not_a_stuck_queue():
    """A server with --max-num-seqs 1 shows 0 running between two requests: the demo's scrape once landed there in
    CI (3 waiting, 0 running, KV 0). The window's tokens say the scheduler admitted work all along."""
    assert hl5.RULE_ADMISSION.evaluate(live(running=0, waiting=3, kv=0.0, generated=5000)) == []
    assert hl5.RULE_ADMISSION.evaluate(live(running=0, waiting=3, kv=0.0, generated=0))  # nothing moved: stuck


def test_on_a_release_with_the_admission_fix_it_lowers_max_model_len_to_the_pool():
    facts = live(running=0, waiting=2, kv=0.0, generated=0)
    facts.config = config(vllm_version="0.32.0", max_model_len=262_144)
    facts.memory = MemoryFacts(kv_cache_tokens=148_944)
    [finding] = hl5.RULE_ADMISSION.evaluate(facts)
    assert not any(action.startswith("Upgrade") for action in finding.actions)
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--max-model-len", "262144", "148944")]


def test_stats_lines_say_it_too():
    facts = Facts(events=[event(K.STATS_LINE, running=0, waiting=5, kv_usage=0.0)])
    assert hl5.RULE_ADMISSION.evaluate(facts)


def test_a_person_saying_the_queue_climbs_is_read_as_at_least_one_waiting():
    # vllm#39914 (Gemma 4, sliding-window admission on 0.19.1), the reporter's own summary of /metrics
    log = parse_lines(
        [
            "- `vllm:num_requests_running == 0` while `vllm:num_requests_waiting` climbs and never drains",
            "- `vllm:kv_cache_usage_perc == 0`",
        ]
    )
    facts = Facts(snapshot=snapshot_from_samples(log.quoted_metrics.all(), "pasted", None))
    [finding] = hl5.RULE_ADMISSION.evaluate(facts)
    assert finding.evidence[0].value == 1.0


def test_one_stats_line_is_a_moment_two_in_a_row_confirm_it_and_work_before_clears_it():
    stuck = {"running": 0, "waiting": 5, "kv_usage": 0.0}
    [once] = hl5.RULE_ADMISSION.evaluate(Facts(events=[event(K.STATS_LINE, **stuck)]))
    [twice] = hl5.RULE_ADMISSION.evaluate(
        Facts(events=[event(K.STATS_LINE, 1, **stuck), event(K.STATS_LINE, 2, **stuck)])
    )
    assert (once.severity.value, once.confidence) == ("high", 0.5)
    assert (twice.severity.value, twice.confidence) == ("critical", 0.8)
    busy = event(K.STATS_LINE, 1, running=4, waiting=0, kv_usage=0.3)
    assert hl5.RULE_ADMISSION.evaluate(Facts(events=[busy, event(K.STATS_LINE, 2, **stuck)])) == []
