"""OP-7.71: vLLM's CPU worker denied numa_migrate_pages in a container (vllm#10556's line, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_cpu_numa
from rules.evaluate import evaluate
from rules.facts import Facts
from rules.model import Severity

LINE = "ERROR 11-21 23:44:54 engine.py:366] RuntimeError: numa_migrate_pages failed. errno: 1"


def test_the_fatal_refusal_asks_for_the_containers_capability_as_a_setting_not_a_flag():
    top = evaluate(Facts(events=parse_lines([LINE]).events)).findings[0]
    assert top.rule == "OP-7.71" and top.severity.value == "critical" and "EPERM" in top.title
    [change] = top.changes
    assert change.kind == "setting" and "SYS_NICE" in change.proposed and "seccomp=unconfined" in change.proposed
    assert any("PR #19241" in action for action in top.actions)


def test_a_later_releases_warning_is_the_same_denial_but_the_server_ran_on():
    line = "WARNING 06-20 10:00:00 [cpu_worker.py:1] numa_migrate_pages failed. errno: 1"
    [finding] = op7_cpu_numa.RULE_CPU_NUMA.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.severity.value == "medium" and "the server runs" in finding.title


def test_another_errno_is_named_without_claiming_the_container_denied_it():
    line = "RuntimeError: numa_migrate_pages failed. errno: 22"
    [finding] = op7_cpu_numa.RULE_CPU_NUMA.evaluate(Facts(events=parse_lines([line]).events))
    assert "errno 22" in finding.title and "EPERM" not in finding.title and finding.changes == []


def test_libnumas_bare_refusal_is_the_same_denial_read_as_a_note():
    # vllm#24016, verbatim: vLLM's CPU backend in Docker; its CPU guide (PR #24017) calls it harmless apart from NUMA
    top = evaluate(Facts(events=parse_lines(["get_mempolicy: Operation not permitted"]).events)).findings[0]
    assert top.rule == "OP-7.71" and top.severity == Severity.LOW and "get_mempolicy" in top.title
    assert [c.proposed for c in top.changes] == ["--cap-add SYS_NICE --security-opt seccomp=unconfined"]
