"""OP-7.168: a framework's own check of vLLM's version, naming the releases it accepts."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# PeterGriffinJin/Search-R1#173, verbatim: verl's bundled vLLM adapters (third_party/vllm) refusing vLLM 0.11.0
GATE = "ValueError: vllm version 0.11.0 not supported. Currently supported versions are 0.3.1, 0.4.2, 0.5.4 and 0.6.3."


def test_the_releases_the_framework_accepts_are_named_and_the_newest_proposed():
    top = top_finding(GATE)
    assert top.rule == "OP-7.168"
    assert top.title == (
        "the program running vLLM accepts only vLLM 0.3.1, 0.4.2, 0.5.4 and 0.6.3, and vLLM 0.11.0 is installed"
    )
    assert "`pip install vllm==0.6.3`" in top.actions[0] and "made for vLLM 0.11.0" in top.actions[1]


def test_vllms_own_unsupported_words_are_not_a_frameworks_gate():
    top = top_finding("ValueError: Model architectures ['Foo'] are not supported for now.")
    assert top.rule != "OP-7.168"
