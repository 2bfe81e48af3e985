"""OP-7.85: a framework's required vLLM range, as transformers' require_version words it (hiyouga/LlamaFactory#7428's
line, verbatim) and as pip lists a broken requirement (written for the test in pip's wording)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_framework_pins
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_a_vllm_above_the_frameworks_range_upgrades_the_framework_first():
    line = (
        "ImportError: vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found vllm==0.8.1."
    )
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.85" and top.title.endswith("but vLLM 0.8.1 is installed: it predates this vLLM")
    assert top.actions[0].startswith("Upgrade the framework") and 'pip install "vllm>=0.4.3,<=0.7.3"' in top.actions[1]
    assert "DISABLE_VERSION_CHECK=1" in top.actions[2]


def test_pips_conflict_with_a_framework_as_requirer_reads_which_side_of_the_range():
    [below] = op7_framework_pins.RULE_FRAMEWORK_PIN.evaluate(
        _facts("trl 0.14.0 requires vllm>=0.7.0, but you have vllm 0.6.3 which is incompatible.")
    )
    assert below.title.endswith("this vLLM is too old for it") and below.actions[0].startswith("Install a vLLM")
    # vLLM's own requirements stay OP-7.44's
    vllms_own = _facts("vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.")
    assert op7_framework_pins.RULE_FRAMEWORK_PIN.evaluate(vllms_own) == []


def test_the_side_of_a_range():
    assert op7_framework_pins.side_of(">=0.4.3,<=0.7.3", "0.8.1") == "above"
    assert op7_framework_pins.side_of(">=0.4.3,<=0.7.3", "0.7.3") is None
    assert op7_framework_pins.side_of("==0.6.4.post1", "0.6.3") == "below"
    assert op7_framework_pins.side_of("<0.9", "0.9.0") == "above"
