"""OP-7.110: HAMi-core's 'Illegal device id', the GPU-sharing library's crash at NCCL's start."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_hami
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_hamis_illegal_device_id_proposes_nccls_cumem_host_switch_off_and_names_hami():
    # Project-HAMi/HAMi#1853, verbatim: vllm bench throughput -tp 2 on two HAMi GPU fractions
    line = (
        "[HAMI-core ERROR (pid:2244 thread=133445224001088 multiprocess_memory_limit.c:1255)]: Illegal device id: 31069"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.110"
    assert top.title == "HAMi's GPU-sharing library crashed the process at NCCL's start: 'Illegal device id: 31069'"
    assert [(change.flag, change.proposed, change.kind) for change in top.changes] == [
        ("NCCL_CUMEM_HOST_ENABLE", "0", "env")
    ]


def test_hami_cores_ordinary_messages_are_not_the_crash():
    # HAMi-core's start-up lines (Project-HAMi/volcano-vgpu-device-plugin#105's form)
    lines = [
        "[HAMI-core Msg(350:140526578577408:libvgpu.c:839)]: Initializing.....",
        "[HAMI-core Warn(350:140526578577408:multiprocess_memory_limit.c:548)]: Kick dead proc 269",
    ]
    assert op7_hami.RULE.evaluate(_facts(lines)) == []
