"""OP-7.75 and OP-7.106: a guarded import of vLLM that failed silently (a NameError, or vLLM called not installed)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_vllm_import_swallowed import RULE_SWALLOWED_IMPORT
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding


def test_lm_evals_unbound_llm_is_the_swallowed_import_with_the_import_to_repeat():
    # arcee-ai/mergekit#524: lm_eval's vllm_causallms.py imports vLLM in a try block that passes on failure
    top = top_finding(
        '  File "/usr/local/lib/python3.10/site-packages/lm_eval/models/vllm_causallms.py", line 108, in __init__',
        "    self.model = LLM(**self.model_args)",
        "NameError: name 'LLM' is not defined. Did you mean: 'VLLM'?",
    )
    assert top.rule == "OP-7.75" and top.title.startswith("`LLM` was never imported from vLLM")
    assert 'python -c "from vllm import LLM"' in top.actions[0]


def test_a_framework_logger_that_drops_the_class_is_read_the_same():
    # EvolvingLMMs-Lab/lmms-eval#726: loguru's line carries Python's words without NameError
    line = (
        "2025-06-23 12:08:26.497 | ERROR    | __main__:cli_evaluate:357 - Error during evaluation: name 'LLM' is not "
        "defined. Please set `--verbosity=DEBUG` to get more information."
    )
    assert top_finding(line).rule == "OP-7.75"


def test_a_name_vllm_does_not_export_stays_an_unplaced_error():
    for line in ("NameError: name 'worker' is not defined", "NameError: name 'LLMs' is not defined"):
        assert not RULE_SWALLOWED_IMPORT.evaluate(Facts(events=parse_lines([line]).events)), line


def test_ray_serve_llms_not_installed_is_its_hidden_import_error_and_the_release_to_pin():
    # ray-project/ray#64006: ray[serve,llm] 2.55.1 resolved vllm>=0.18.0 to 0.22.1, whose modules had moved
    line = (
        "ImportError: Neither vLLM nor SGLang is installed. At least one is required for Ray Serve LLM protocol models."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.106" and top.title.startswith("Ray Serve LLM says vLLM is not installed")
    assert "import vllm" in top.actions[0] and "release the framework release was made for" in top.actions[1]
