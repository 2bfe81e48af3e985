"""OP-7.77: xFormers' `No operator found for memory_efficient_attention_forward`, alone or with the reasons it lists
under it (vllm#11653's lines, verbatim: an embedding model run with dtype float32 on vLLM 0.6.4; the Turing case is
written in xFormers' wording, with the capability a T4 reports)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_xformers
from rules.evaluate import evaluate
from rules.facts import Facts

HEAD = "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:"
VLLM_11653 = [
    HEAD,
    "     query       : shape=(1, 20394, 2, 6, 128) (torch.float32)",
    "     key         : shape=(1, 20394, 2, 6, 128) (torch.float32)",
    "     value       : shape=(1, 20394, 2, 6, 128) (torch.float32)",
    "     attn_bias   : <class 'xformers.ops.fmha.attn_bias.BlockDiagonalCausalMask'>",
    "     p           : 0.0",
    "`fa2F@v2.5.7-pt` is not supported because:",
    "    xFormers wasn't build with CUDA support",
    "    dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})",
    "`cutlassF-pt` is not supported because:",
    "    xFormers wasn't build with CUDA support",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_line_alone_is_the_top_finding_and_says_where_the_reasons_are():
    [top, *_] = evaluate(_facts([HEAD])).findings
    assert top.rule == "OP-7.77" and "the reasons it printed under the error" in top.title
    assert top.actions[0].startswith("Read the lines under the error") and top.changes == []


def test_the_threads_reasons_name_the_install_and_propose_a_half_precision_dtype():
    [finding] = op7_xformers.RULE_XFORMERS.evaluate(_facts(VLLM_11653))
    assert finding.title.startswith("xFormers has no CUDA kernels in this install")
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--dtype", "float32", "bfloat16")]
    assert "python -m xformers.info" in finding.actions[0]
    assert any("dtype=torch.float32" in e.value for e in finding.evidence)


def test_a_gpu_too_old_gets_float16_not_bfloat16():
    lines = [
        HEAD,
        "`fa2F@v2.5.7-pt` is not supported because:",
        "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)",
        "    dtype=torch.bfloat16 (supported: {torch.float16})",
    ]
    [finding] = op7_xformers.RULE_XFORMERS.evaluate(_facts(lines))
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--dtype", "bfloat16", "float16")]
    assert any("--dtype float16" in action for action in finding.actions)


def test_reasons_without_the_error_are_not_this():
    assert op7_xformers.RULE_XFORMERS.evaluate(_facts(VLLM_11653[1:])) == []
