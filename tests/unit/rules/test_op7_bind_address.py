"""OP-7.72: a vLLM process binding an address its machine does not have (vllm#31884's line, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_bind_address
from rules.evaluate import evaluate
from rules.facts import Facts

ZMQ = "(APIServer pid=396) zmq.error.ZMQError: Cannot assign requested address (addr='tcp://10.27.91.102:13345')"


def test_zmqs_refused_bind_names_the_address_and_each_nodes_own_settings():
    top = evaluate(Facts(events=parse_lines([ZMQ]).events)).findings[0]
    assert top.rule == "OP-7.72" and "10.27.91.102:13345" in top.title
    assert "ZMQ socket" in top.summary and "10.27.91.102 must be in the list" in top.actions[0]
    assert "VLLM_HOST_IP" in top.actions[1] and "--data-parallel-address" in top.actions[1]
    assert "PR #35429" in top.actions[2]


def test_uvicorns_bind_on_a_host_it_does_not_have_is_the_same_and_a_bare_errno_is_not():
    uvicorn = (
        "ERROR:    [Errno 99] error while attempting to bind on address ('10.0.0.5', 8000): cannot assign requested "
        "address"
    )
    [finding] = op7_bind_address.RULE_BIND_ADDRESS.evaluate(Facts(events=parse_lines([uvicorn]).events))
    assert "10.0.0.5:8000" in finding.title and "ZMQ" not in finding.summary
    # a connect gets errno 99 too (no ephemeral port left): not read as a bind
    bare = "OSError: [Errno 99] Cannot assign requested address"
    assert op7_bind_address.RULE_BIND_ADDRESS.evaluate(Facts(events=parse_lines([bare]).events)) == []


def test_an_ipv6_address_without_brackets_is_named_as_zmq_unable_to_read_it():
    # vllm-project/vllm#42149, verbatim: the P2P NCCL connector's endpoint on an IPv6 host
    line = (
        "(Worker_TP0 pid=27101) ERROR 05-09 16:34:35 [multiproc_executor.py:815] zmq.error.ZMQError: No such device "
        "(addr='tcp://2605:340:cd51:4900:d73:4aba:b23d:2190:21001')"
    )
    [finding] = op7_bind_address.RULE_BIND_ADDRESS.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith("a vLLM process gave ZMQ an IPv6 address without brackets (2605:340:")
    assert "2605:340:cd51:4900:d73:4aba:b23d:2190." in finding.actions[0]


def test_uvicorns_bind_on_ipv6s_loopback_is_a_host_without_ipv6_and_proposes_an_ipv4_host():
    # vllm-project/vllm PR #1288, verbatim: `--host localhost` resolved to ::1 where IPv6 is off
    line = (
        "ERROR:    [Errno 99] error while attempting to bind on address ('::1', 8000, 0, 0): cannot assign requested "
        "address"
    )
    [finding] = op7_bind_address.RULE_BIND_ADDRESS.evaluate(Facts(events=parse_lines([line]).events))
    assert "IPv6 loopback ::1" in finding.title and "ZMQ" not in finding.title + finding.summary
    assert finding.evidence[0].value == "[::1]:8000"
    assert "--host 127.0.0.1" in finding.actions[0] and "instead of localhost" in finding.actions[0]
