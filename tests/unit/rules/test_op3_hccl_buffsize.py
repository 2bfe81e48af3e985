"""OP-3.11: an Ascend MoE all-to-all needs a larger HCCL window than HCCL_BUFFSIZE."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm-ascend PR #5287, verbatim: the data-parallel e2e test on A3, the dispatch operator's tiling check
A3_DISPATCH = (
    "(EngineCore_DP0 pid=17833) EZ9999[PID: 17833] 2025-12-23-07:36:19.237.396 (EZ9999):  HCCL_BUFFSIZE is too "
    "SMALL, maxBs = 512, h = 2048, epWorldSize = 2, localMoeExpertNum = 64, sharedExpertNum = 0, "
    "tokenNeedSizeDispatch = 4608, tokenNeedSizeCombine = 4096, k = 8, NEEDED_HCCL_BUFFSIZE(((maxBs * "
    "tokenNeedSizeDispatch * ep_worldsize * localMoeExpertNum) + (maxBs * tokenNeedSizeCombine * (k + "
    "sharedExpertNum))) * 2) = 609MB, HCCL_BUFFSIZE=200MB.[FUNC:MoeDistributeDispatchA3TilingFuncImpl]"
    "[FILE:moe_distribute_dispatch_v2_tiling.cc][LINE:941]"
)


def test_the_needed_window_becomes_the_variables_value():
    top = top_finding(A3_DISPATCH)
    assert top.rule == "OP-3.11" and "609 MB needed, 200 MB set" in top.title
    [change] = top.changes
    assert (change.flag, change.current, change.proposed, change.kind) == ("HCCL_BUFFSIZE", "200", "609", "env")
    assert "every node and rank" in top.actions[0]


def test_a_line_cut_before_its_sizes_still_gives_the_direction():
    top = top_finding("HCCL_BUFFSIZE is too SMALL, maxBs = 512, h = 2048, epWorldSize = 2")
    assert top.rule == "OP-3.11"
    assert "200 MB unless set" in top.changes[0].proposed and "(" not in top.title


def test_the_other_operators_wording_and_a_lower_case_one_are_the_same_reading():
    # CANN's notify-dispatch tiling check words the size alone (`should larger than N MB`)
    top = top_finding("HCCL_BUFFSIZE is too SMALL, should larger than 402MB.")
    assert top.rule == "OP-3.11" and top.title.endswith("(402 MB needed)")
    assert top.changes[0].proposed == "402" and top.changes[0].current is None
    assert top_finding("HCCL_BUFFSIZE is too small, maxBs = 512").rule == "OP-3.11"
