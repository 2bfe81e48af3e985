"""OP-7.177: xgrammar's CPU kernel refuses bfloat16 logits and a tensor of rows to mask."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_float32_only_logits_propose_float32_weights_and_the_release_that_converts():
    # vllm PR #12152, verbatim from its description: guided decoding with xgrammar on CPU in bfloat16; the merged fix
    # converts the scores to float32 first
    top = top_finding("> ERROR 01-08 04:49:55 engine.py:136] ValueError: logits must be of type float32")
    assert top.rule == "OP-7.177" and "float32 logits only" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("--dtype", "float32")]
    assert any("PR #32384" in action for action in top.actions)


def test_a_tensor_of_rows_proposes_synchronous_scheduling():
    # vllm-project/vllm-ascend#7369, verbatim: every TP worker of Qwen3-VL-235B on vllm-ascend; the cause is
    # vllm-ascend#5524's (async scheduling passes the indices as a tensor), fixed in vllm-ascend PR #6151
    top = top_finding(
        "(Worker_DP0_TP1_EP1 pid=45277) ERROR 03-16 09:57:09 [multiproc_executor.py:824] TypeError: "
        "apply_token_bitmask_inplace_cpu(): incompatible function arguments. The following argument types are "
        "supported:"
    )
    assert top.rule == "OP-7.177" and "asynchronous scheduling passed a tensor" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("--async-scheduling", "false")]
    assert any("PR #6151" in action for action in top.actions)
