"""OP-5.16: stats lines from two releases, the newer one at less than half the generation throughput."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_upgrade
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import config, event

# vllm#2971 (one RTX 4090, OpenHermes-2.5-Mistral-7B): the reporter's two lines, cut after the throughputs
REPORT = [
    "Here's my speed on the 0.2.7 release",
    "`Avg prompt throughput: 1006.0 tokens/s, Avg generation throughput: 273.8 tokens/s,`",
    "",
    "Here's my speed on 0.3.2",
    "`Avg prompt throughput: 175.5 tokens/s, Avg generation throughput: 15.5 tokens/s,`",
]


def _line(line_no: int, version: str, generated: float, running: int | None = None):
    return event(K.STATS_LINE, line_no, version=version, generation_throughput_tps=generated, running=running)


def test_the_reporters_two_releases_are_compared_and_eager_mode_is_the_first_test():
    facts = Facts(events=parse_lines(REPORT).events)
    [finding] = op5_upgrade.RULE_UPGRADE_REGRESSION.evaluate(facts)
    assert "fell 17.7x from vLLM 0.2.7 to 0.3.2 (273.8 → 15.5 tokens/s)" in finding.title
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--enforce-eager", "true")]
    assert finding.confidence == 0.5  # the cut lines show no running requests: the load is unknown
    assert "between 0.2.7 and 0.3.2" in finding.actions[0]


def test_the_same_running_requests_rule_out_the_load():
    facts = Facts(events=[_line(1, "0.5.4", 900.0, running=16), _line(2, "0.6.2", 300.0, running=16)])
    [finding] = op5_upgrade.RULE_UPGRADE_REGRESSION.evaluate(facts)
    assert finding.confidence == 0.7
    assert "the load does not explain it" in finding.summary


def test_a_faster_newer_release_a_small_drop_or_one_release_is_no_finding():
    for lines in (
        [_line(1, "0.2.7", 15.5), _line(2, "0.3.2", 273.8)],  # faster after the upgrade
        [_line(1, "0.2.7", 273.8), _line(2, "0.3.2", 200.0)],  # within what the load moves
        [_line(1, "0.3.2", 273.8), _line(2, "0.3.2", 15.5)],  # one release: load, not a regression
        [_line(1, None, 273.8), _line(2, None, 15.5)],  # no release said
    ):
        assert op5_upgrade.RULE_UPGRADE_REGRESSION.evaluate(Facts(events=lines)) == []


def test_releases_compare_as_versions_not_text_and_order_in_the_text_does_not_matter():
    facts = Facts(events=[_line(1, "0.10.1", 20.0), _line(2, "0.9.2", 100.0)])
    [finding] = op5_upgrade.RULE_UPGRADE_REGRESSION.evaluate(facts)
    assert "from vLLM 0.9.2 to 0.10.1" in finding.title


def test_a_launch_already_eager_is_not_told_to_go_eager():
    facts = Facts(events=[_line(1, "0.5.4", 900.0), _line(2, "0.6.2", 300.0)])
    facts.config = config(enforce_eager=True)
    [finding] = op5_upgrade.RULE_UPGRADE_REGRESSION.evaluate(facts)
    assert finding.changes == []
    assert finding.actions  # the bisection and the upgrade still stand


def test_two_labelled_benchmark_results_a_twelfth_apart_are_a_regression():
    # vllm#4210 (0.4.0 -> 0.4.1, fixed by vllm#4280): the two lines of the body
    facts = Facts(
        events=parse_lines(
            [
                "Before: Throughput: 20.13 requests/s, 10308.29 tokens/s",
                "After: Throughput: 17.67 requests/s, 9048.03 tokens/s",
            ]
        ).events
    )
    [finding] = op5_upgrade.RULE_BENCHMARK_REGRESSION.evaluate(facts)
    assert "fell 12% from before to after (10,308.29 → 9,048.03 tokens/s): a regression" in finding.title
    assert finding.confidence == 0.7 and "Upgrade to the newest patch release" in finding.actions[1]


def test_benchmark_results_order_by_release_and_within_the_spread_or_unlabelled_say_nothing():
    by_release = Facts(
        events=parse_lines(
            [
                "v0.6.2: Throughput: 1.0 requests/s, 900.0 tokens/s",
                "v0.5.4: Throughput: 1.0 requests/s, 1000.0 tokens/s",
            ]
        ).events
    )
    [finding] = op5_upgrade.RULE_BENCHMARK_REGRESSION.evaluate(by_release)
    assert "from vLLM 0.5.4 to vLLM 0.6.2" in finding.title and finding.confidence == 0.7
    for lines in (
        [
            "Before: Throughput: 20.13 requests/s, 10308.29 tokens/s",
            "After: Throughput: 20.0 requests/s, 10000.0 tokens/s",
        ],
        ["Throughput: 20.13 requests/s, 10308.29 tokens/s", "Throughput: 17.67 requests/s, 9048.03 tokens/s"],
    ):
        assert op5_upgrade.RULE_BENCHMARK_REGRESSION.evaluate(Facts(events=parse_lines(lines).events)) == []
