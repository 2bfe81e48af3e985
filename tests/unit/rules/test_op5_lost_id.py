"""OP-5.56 and OP-5.57: a bare KeyError on an id vLLM tracks at run time, read from the lines threads quoted."""

from __future__ import annotations

import pytest

from tests.unit.rules.factories import top_finding


@pytest.mark.parametrize(
    "line",
    [
        "KeyError: 'chatcmpl-8a6f39cb01952274'",  # vllm#42157, verbatim
        "KeyError: 'chatcmpl-95f443c92d6709b3-a7e574bd'",  # vllm PR #53799, verbatim
        # tenstorrent/vllm#145, verbatim (the thread shows the carriage return as ^M)
        "ERROR 07-29 14:42:58 [engine.py:163] KeyError: 'chatcmpl-2fdd35648efc418db366c6690c29c4da'^M",
    ],
)
def test_a_request_id_looked_up_after_it_left_is_the_engines_bookkeeping(line: str):
    top = top_finding(line)
    assert top.rule == "OP-5.56" and "chatcmpl-" in top.title and top.evidence[0].value.startswith("chatcmpl-")
    assert not top.changes and top.actions[0].startswith("Read the lines before it")


def test_an_engine_id_with_a_data_parallel_rank_is_the_kv_connectors_peer():
    line = (  # vllm#40993, verbatim
        "(Worker_DP1_TP0_EP4 pid=19507) ERROR 04-27 11:35:05 [v1/executor/multiproc_executor.py:932] KeyError: "
        "'f35e9d1d-f7fb-46cd-925b-d7478aa2b04a_dp1'"
    )
    top = top_finding(line)
    assert top.rule == "OP-5.57" and "data-parallel rank 1" in top.title
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" in top.actions[0]
    bare = top_finding("KeyError: '604f3f68-909c-43e0-bb3a-e96850fca226'")  # llm-d/llm-d PR #650, verbatim
    assert bare.rule == "OP-5.57" and "likely" in bare.title and bare.confidence < top.confidence


@pytest.mark.parametrize(
    "line",
    [
        "KeyError: 'layers.13.mlp.experts.w13_weight'",  # a tensor name: OP-7.21's
        "KeyError: 'chat_template'",  # a config key, no id after the prefix
        "KeyError: '2ae89e1337be826b6e5461c349cf4d891908446ed02c576290c43d98c78e9e6b'",  # a hash: whose is unknown
        "KeyError: 266",
    ],
)
def test_other_keys_are_not_read_as_ids(line: str):
    top = top_finding(line)
    assert top is None or top.rule not in ("OP-5.56", "OP-5.57")
