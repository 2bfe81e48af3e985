"""OP-7.99: vLLM started inside a daemon process."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


def test_the_assertion_names_the_daemon_and_a_non_daemon_process():
    # vllm#18308: LLM(...) inside multiprocessing.Pool() on 0.8.5; Process(daemon=False) worked
    lines = [
        '  File "/usr/lib/python3.10/multiprocessing/process.py", line 118, in start',
        "    assert not _current_process._config.get('daemon'), \\",
        "AssertionError: daemonic processes are not allowed to have children",
    ]
    top = evaluate(Facts(events=parse_lines(lines).events)).findings[0]
    assert top.rule == "OP-7.99" and "daemon process" in top.title
    assert "daemon=False" in top.actions[0]
