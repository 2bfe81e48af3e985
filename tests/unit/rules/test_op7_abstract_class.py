"""OP-7.83: a class that leaves its base class's abstract method unimplemented (vllm#6269's and
lm-evaluation-harness#1610's lines, verbatim; Python 3.12's wording of the same refusal and a plugin's traceback are
written for the test)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_abstract_class
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_vllms_own_platform_worker_is_a_vllm_release_whose_backend_is_broken():
    line = "TypeError: Can't instantiate abstract class NeuronWorker with abstract method execute_worker"
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.83"
    assert top.title.startswith("vLLM's Neuron backend (NeuronWorker) does not implement execute_worker")
    assert "release before the one installed" in top.actions[0]


def test_a_frameworks_wrapper_is_the_frameworks_version():
    line = "TypeError: Can't instantiate abstract class VLLM with abstract method prefix_token_id"
    [finding] = op7_abstract_class.RULE_ABSTRACT.evaluate(_facts(line))
    assert finding.title.startswith("VLLM (not a vLLM class name: a framework's")
    assert finding.actions[0].startswith("Upgrade the package that defines VLLM")


def test_python_3_12s_wording_names_the_methods_without_quotes():
    line = (
        "TypeError: Can't instantiate abstract class XPUModelRunner without an implementation for abstract methods "
        "'execute_model', 'load_model'"
    )
    [finding] = op7_abstract_class.RULE_ABSTRACT.evaluate(_facts(line))
    assert "vLLM's XPU backend (XPUModelRunner) does not implement execute_model, load_model" in finding.title


def test_a_plugins_class_in_the_traceback_is_the_plugins_release():
    lines = (
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.10/site-packages/vllm_ascend/worker/worker_v1.py", line 80, in __init__',
        "    self.model_runner = NPUModelRunner(vllm_config, device)",
        "TypeError: Can't instantiate abstract class NPUModelRunner with abstract method take_draft_token_ids",
    )
    [finding] = op7_abstract_class.RULE_ABSTRACT.evaluate(_facts(*lines))
    assert finding.title.startswith("vllm_ascend's NPUModelRunner")
    assert "vllm_ascend release made for the installed vLLM" in finding.actions[0]
