"""OP-5.41: vLLM 0.32's shutdown lines: a stop from outside, and the requests it aborted or drained."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op5_shutdown import DRAIN_S, RULE
from rules.evaluate import evaluate
from rules.facts import Facts

PREFIX = "(EngineCore_DP0 pid=300) INFO 12-01 10:00:00 [core.py:1455] [shutdown] EngineCore: "


def _findings(*words: str):
    return RULE.evaluate(Facts(events=parse_lines([PREFIX + w for w in words]).events))


def test_a_stop_that_aborted_requests_proposes_a_drain_inside_the_grace_period():
    [finding] = _findings(
        "trigger received signal=SIGTERM", "start mode=abort timeout=0s", "aborting in-flight requests count=12"
    )
    assert finding.title == (
        "vLLM was stopped by a signal (SIGTERM) and aborted the 12 request(s) it was serving: --shutdown-timeout is 0"
    )
    assert [c.command_line() for c in finding.changes] == [f"--shutdown-timeout {DRAIN_S}"]
    assert "terminationGracePeriodSeconds" in finding.actions[0]


def test_a_drain_and_a_bare_signal_say_it_was_a_stop_not_a_crash():
    [drained] = _findings(
        "trigger received signal=SIGTERM",
        "start mode=drain timeout=30s",
        "draining in-flight requests count=3 timeout=30s",
    )
    assert drained.title.endswith("drained its requests (--shutdown-timeout 30 s): a stop from outside, not a crash")
    assert drained.severity.value == "low" and not drained.changes
    [bare] = _findings("trigger received signal=SIGINT")
    assert bare.title == "vLLM was stopped by a signal (SIGINT): a stop from outside, not a crash"
    [idle] = _findings("trigger received signal=SIGTERM", "start mode=abort timeout=0s")
    assert not idle.changes  # nothing was in flight: nothing lost


def test_the_probe_that_killed_it_says_more():
    lines = [
        '  Warning  Unhealthy  30s (x5 over 2m)  kubelet  Liveness probe failed: Get "http://10.0.0.5:8000/health": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        PREFIX + "trigger received signal=SIGTERM",
    ]
    rules = [f.rule for f in evaluate(Facts(events=parse_lines(lines).events)).findings]
    assert rules[0] == "OP-5.27" and "OP-5.41" not in rules
