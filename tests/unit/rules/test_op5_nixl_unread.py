"""OP-5.60: a NIXL prefill instance freeing KV blocks no decode worker read, from the line a thread quoted."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op5_nixl_unread import RULE_NIXL_UNREAD
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

RELEASED = (
    "Releasing expired KV blocks for request cmpl-1 which were retrieved by {n} remote worker(s) before lease expired."
)


def test_kv_blocks_no_decode_worker_read_point_at_the_nixl_side_channel_not_at_a_longer_hold():
    # ai-dynamo/dynamo#4773, verbatim (the author put <id> for the request id)
    line = "Releasing expired KV blocks for request <id> which were retrieved by 0 decode worker(s) within 120 seconds"
    top = top_finding(line)
    assert top.rule == "OP-5.60" and "for 120 s" in top.title and "no decode worker read them" in top.title
    assert [change.flag for change in top.changes] == ["VLLM_NIXL_SIDE_CHANNEL_HOST"]
    assert "decode instance's log" in top.actions[0] and "VLLM_NIXL_SIDE_CHANNEL_PORT" in top.actions[1]


def test_the_lease_wording_reads_the_same_and_blocks_some_workers_read_are_left_to_vllms_words():
    assert top_finding(RELEASED.format(n=0)).rule == "OP-5.60"  # 0.22 on
    some = Facts(events=parse_lines([RELEASED.format(n=1)]).events)
    assert RULE_NIXL_UNREAD.evaluate(some) == []
