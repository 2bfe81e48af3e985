"""OP-7.112: Mooncake's transfer engine refusing a metadata server whose plugin its build lacks."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_mooncake
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_missing_etcd_plugin_names_the_build_and_proposes_http_or_the_cmake_switch():
    # kvcache-ai/Mooncake#386, verbatim: vllm serve with the Mooncake connector and a pip-installed transfer engine
    line = "Unable to find metadata storage plugin etcd with conn string: etcd://10.72.12.100:2379"
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.112"
    assert "no 'etcd' metadata plugin" in top.title
    assert "etcd://10.72.12.100:2379" in top.summary
    assert "mooncake.http_metadata_server" in top.actions[0]
    assert "-DUSE_ETCD=ON" in top.actions[1]


def test_the_older_wording_behind_glogs_prefix_without_the_address_is_read():
    # Mooncake before the connection string was printed, behind glog's fatal prefix
    line = "F0512 09:13:44.123456 1234 transfer_metadata_plugin.cpp:871] Unable to find metadata storage plugin redis"
    (finding,) = op7_mooncake.RULE.evaluate(_facts([line]))
    assert "'redis'" in finding.title
    assert "-DUSE_REDIS=ON" in finding.actions[1]


def test_an_http_backend_missing_is_not_proposed_http_again():
    line = "Unable to find metadata storage plugin http with conn string: http://10.0.0.1:8080/metadata"
    (finding,) = op7_mooncake.RULE.evaluate(_facts([line]))
    assert "http_metadata_server" not in finding.actions[0]
    assert "P2PHANDSHAKE" in finding.actions[0]
