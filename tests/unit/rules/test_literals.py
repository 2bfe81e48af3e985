"""rules/literals.py: literals people and logs write, read once, surviving what Python cannot build."""

from __future__ import annotations

from rules.literals import mapping_of, python_literal


def test_a_python_repr_and_a_json_object_are_both_mappings():
    assert mapping_of("{'model': 'm', 'seed': 0}") == {"model": "m", "seed": 0}
    assert mapping_of('{"method": "ngram", "enabled": true}') == {"method": "ngram", "enabled": True}
    assert mapping_of("[1, 2]") is None and mapping_of("not a literal") is None


def test_text_python_parses_and_cannot_build_is_no_value_and_no_crash():
    # vllm-omni#5348: torch prints a tensor's type as `CUDABoolType{[1, 1]}`, a set of lists to Python
    assert python_literal("{[1, 1]}") is None and mapping_of("{[1, 1]}") is None
    assert mapping_of("[" * 50_000 + "]" * 50_000) is None  # too deep for the interpreter, for JSON and Python alike
    assert python_literal("(1, 2)") == (1, 2)
