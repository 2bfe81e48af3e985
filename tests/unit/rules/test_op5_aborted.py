"""OP-5.40: requests vLLM aborted because their clients went away, and the timeout their waits point at."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op5_aborted import RULE
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts

# V1's lines (vllm/v1/engine/async_llm.py, 0.32, with --enable-log-requests): one id added, several aborted at once
V1 = [
    "INFO 12-01 10:00:00 [async_llm.py:578] Added request chatcmpl-1.",
    "INFO 12-01 10:00:01 [async_llm.py:578] Added request chatcmpl-2.",
    "INFO 12-01 10:00:02 [async_llm.py:578] Added request chatcmpl-3.",
    "INFO 12-01 10:01:00 [async_llm.py:922] Aborted request(s) chatcmpl-1.",
    "INFO 12-01 10:01:02 [async_llm.py:922] Aborted request(s) chatcmpl-2,chatcmpl-3.",
]


def _findings(lines: list[str]):
    return RULE.evaluate(Facts(events=parse_lines(lines).events))


def test_aborts_after_the_same_wait_are_one_timeout_named_where_it_is_a_default():
    [aborted] = [e for e in parse_lines(V1).events if e.kind == K.REQUEST_ABORTED][1:]
    assert aborted.message == "chatcmpl-2,chatcmpl-3"
    [finding] = _findings(V1)
    assert finding.title == (
        "3 request(s) aborted after 60 s each: their clients, or a proxy between, gave up at a 60 s timeout"
    )
    assert "nginx's proxy_read_timeout" in finding.actions[0]


def test_v0s_aborts_without_their_starts_name_no_timeout_and_ask_for_request_logging():
    v0 = [
        "INFO 07-04 19:10:08 async_llm_engine.py:152] Aborted request cmpl-e5fb5cad96e9402dabbbece3611ae22f-0.",
        "INFO 07-04 19:10:09 async_llm_engine.py:152] Aborted request cmpl-e5fb5cad96e9402dabbbece3611ae22f-1.",
    ]
    [finding] = _findings(v0)
    assert finding.title == ("2 request(s) aborted: their clients disconnected or cancelled before the answer ended")
    assert "--enable-log-requests" in finding.actions[0]


def test_aborts_at_different_waits_are_no_one_timeout():
    lines = [*V1[:3], "INFO 12-01 10:00:10 [a.py:1] Aborted request(s) chatcmpl-1.",
             "INFO 12-01 10:01:01 [a.py:1] Aborted request(s) chatcmpl-2.",
             "INFO 12-01 10:02:00 [a.py:1] Aborted request(s) chatcmpl-3."]  # fmt: skip
    [finding] = _findings(lines)
    assert "after" not in finding.title


def test_a_finding_that_explains_the_aborts_takes_their_place():
    stats = (
        "INFO 12-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation "
        "throughput: 100.0 tokens/s, Running: 64 reqs, Waiting: 40 reqs, GPU KV cache usage: 97.0%, Prefix cache hit "
        "rate: 0.0%"
    )
    rules = [f.rule for f in evaluate(Facts(events=parse_lines([stats, *V1]).events)).findings]
    assert "OP-5.40" not in rules and rules[0] == "OP-5.2"
