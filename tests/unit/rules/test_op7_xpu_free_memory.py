"""OP-7.90: PyTorch unable to read an Intel GPU's free memory (vllm PR #35273's line, verbatim; SYCL's words as
intel/torch-xpu-ops#1384 prints them)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_xpu_free_memory
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_the_free_memory_query_refused_proposes_sysman():
    line = "RuntimeError: The device (Intel(R) Graphics [0x674c]) doesn't support querying the available free memory."
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.90" and "(Intel(R) Graphics [0x674c])" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("ZES_ENABLE_SYSMAN", "1")]


def test_sycls_words_are_the_same_refusal():
    line = "RuntimeError: The device does not have the ext_intel_free_memory aspect"
    [finding] = op7_xpu_free_memory.RULE_XPU_FREE_MEMORY.evaluate(_facts(line))
    assert "integrated GPU" in finding.actions[1]
