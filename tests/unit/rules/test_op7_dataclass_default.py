"""OP-7.214: a dataclass field with a mutable default, refused by Python at import."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# eosphoros-ai/DB-GPT PR #2025, verbatim: its vLLM parameter class defaulted ignore_patterns to a list
DB_GPT = (
    "[Bug]vllm error，ValueError: mutable default <class 'list'> for field ignore_patterns is not allowed: use "
    "default_factory"
)


def test_a_list_default_is_the_declaring_packages_bug_on_any_python():
    top = top_finding(DB_GPT)
    assert top.rule == "OP-7.214" and "field ignore_patterns with a mutable list default" in top.title
    assert "(from 3.11)" not in top.title and "every release" in top.summary
    assert "Python 3.10" not in top.actions[0]


def test_another_unhashable_default_is_a_package_written_before_python_3_11():
    # constructed in Python's words (3.11 refuses any unhashable default, its dataclasses documentation)
    top = top_finding(
        "ValueError: mutable default <class 'vllm.sampling_params.SamplingParams'> for field sampling_params is not "
        "allowed: use default_factory"
    )
    assert top.rule == "OP-7.214" and top.title.endswith("(from 3.11)")
    assert "Python 3.10" in top.actions[0]
