"""OP-7.171: NumPy 2 refusing a module compiled against NumPy 1."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_numpys_first_line_alone_names_the_mismatch_and_both_ways_out():
    # vllm#5594 and vllm#34041, verbatim: all either paste kept of NumPy's message
    top = top_finding("A module that was compiled using NumPy 1.x cannot be run in")
    assert top.rule == "OP-7.171" and top.title.endswith("imported under NumPy 2: its binary cannot run there")
    assert "pip install 'numpy<2'" in top.actions[0] and "0.8.3 or later" in top.actions[1]


def test_the_numpy_it_names_is_kept():
    line = "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0 as it may crash. To support both"
    assert "under NumPy 2.0.0" in top_finding(line).title
