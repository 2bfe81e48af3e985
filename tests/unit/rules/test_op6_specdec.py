"""OP-6: speculative decoding pays at low load with good acceptance, not otherwise."""

from rules.catalog import op6_specdec as op6
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import config, event, live

SPEC = '{"method":"eagle","model":"draft","num_speculative_tokens":4}'


def test_low_acceptance_from_counters_halves_the_speculative_tokens():
    facts = live(
        running=3,
        extra_counters={
            "vllm:spec_decode_num_draft_tokens_total": (0, 1000),
            "vllm:spec_decode_num_accepted_tokens_total": (0, 300),
        },
    )
    facts.config = config(speculative_config=SPEC)
    [finding] = op6.RULE_ACCEPTANCE.evaluate(facts)
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (0.3, 0.5)
    assert finding.changes[0].proposed == '{"method":"eagle","model":"draft","num_speculative_tokens":2}'


def test_low_acceptance_from_the_log_line_with_a_python_repr_config():
    facts = Facts(
        config=config(speculative_config="{'method': 'ngram', 'num_speculative_tokens': 5}"),
        events=[event(K.SPEC_DECODE_METRICS, acceptance_rate=0.312)],
    )
    [finding] = op6.RULE_ACCEPTANCE.evaluate(facts)
    assert finding.changes[0].proposed == '{"method":"ngram","num_speculative_tokens":2}'


def test_good_acceptance_is_fine():
    assert op6.RULE_ACCEPTANCE.evaluate(Facts(events=[event(K.SPEC_DECODE_METRICS, acceptance_rate=0.72)])) == []


def test_speculation_under_high_load_proposes_removing_it():
    facts = live(running=120, waiting=14)
    facts.config = config(speculative_config=SPEC)
    [finding] = op6.RULE_BUSY.evaluate(facts)
    assert finding.changes[0].flag == "--speculative-config" and "remove" in finding.changes[0].proposed


def test_no_speculation_means_no_load_finding():
    assert op6.RULE_BUSY.evaluate(live(running=120, waiting=14)) == []


def test_slow_decode_at_low_concurrency_suggests_trying_speculation():
    [finding] = op6.RULE_CANDIDATE.evaluate(live(running=2, itl={0.14: 3000}))
    assert finding.severity.value == "info"


def test_per_position_acceptance_keeps_the_leading_positions_that_accept_a_tenth():
    # AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-DFlash issue 6: 15 drafted, positions 6-15 accepted nothing
    from advisor.collect.logs import parse_lines

    line = (
        "(APIServer pid=1) INFO 05-01 14:24:50 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.37, "
        "Accepted throughput: 8.90 tokens/s, Drafted throughput: 97.50 tokens/s, Accepted: 89 tokens, Drafted: 975 "
        "tokens, Per-position acceptance rate: 0.600, 0.385, 0.215, 0.108, 0.062, 0.000, 0.000, 0.000, 0.000, 0.000, "
        "0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 9.1%"
    )
    [spec] = parse_lines([line]).events
    assert spec.position_acceptance[:5] == [0.6, 0.385, 0.215, 0.108, 0.062] and len(spec.position_acceptance) == 15
    [finding] = op6.RULE_ACCEPTANCE.evaluate(Facts(events=[spec]))
    assert '"num_speculative_tokens": 4 (it drafts 15 now)' in finding.changes[0].proposed
    assert "positions 5-15 accept under 10%" in finding.changes[0].reason
    known = Facts(config=config(speculative_config=SPEC.replace(":4", ":15")), events=[spec])
    [finding] = op6.RULE_ACCEPTANCE.evaluate(known)
    assert finding.changes[0].proposed == '{"method":"eagle","model":"draft","num_speculative_tokens":4}'


def test_a_speculative_config_python_cannot_build_leaves_the_rule_standing():
    # the same text vllm-omni#5348 pasted elsewhere (`{[1, 1]}`): the rule read it with its own parse and failed
    assert op6._parse_spec("{[1, 1]}") is None
    assert op6._parse_spec("{'method': 'ngram', 'num_speculative_tokens': 4}") == {
        "method": "ngram",
        "num_speculative_tokens": 4,
    }
