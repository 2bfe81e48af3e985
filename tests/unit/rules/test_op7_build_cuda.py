"""OP-7.118: building vLLM from source with a CUDA toolkit of another release than PyTorch's."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_build_cuda
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_torchs_refusal_cut_where_the_paste_wrapped_names_the_toolkits_release():
    # vllm#129, verbatim (the line wraps there in the thread)
    top = evaluate(
        _facts(["The detected CUDA version (12.1) mismatches the version that was used to compile"])
    ).findings[0]
    assert top.rule == "OP-7.118" and "(12.1)" in top.title
    assert "PyTorch build for CUDA 12.1" in top.actions[0]


def test_the_whole_refusal_names_pytorchs_release_too():
    line = (
        "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.7)."
        " Please make sure to use the same CUDA versions."
    )
    [finding] = op7_build_cuda.RULE.evaluate(_facts([line]))
    assert "PyTorch's (11.7)" in finding.title
