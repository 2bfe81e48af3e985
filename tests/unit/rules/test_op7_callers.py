"""OP-7.26: a package built on vLLM passes it an argument the installed vLLM does not take."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_callers
from rules.facts import Facts

SITE = "/usr/local/lib/python3.10/dist-packages"


def _traceback(keyword: str) -> list[str]:
    """huggingface/trl#3304's shape: TRL's vllm-serve builds vLLM's LLM, which passes the keyword to EngineArgs."""
    return [
        "Traceback (most recent call last):",
        f'  File "{SITE}/trl/scripts/vllm_serve.py", line 238, in main',
        "    llm = LLM(",
        f'  File "{SITE}/vllm/entrypoints/llm.py", line 212, in __init__',
        "    engine_args = EngineArgs(",
        f"TypeError: EngineArgs.__init__() got an unexpected keyword argument '{keyword}'",
    ]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_an_argument_vllm_0_32_takes_says_the_installed_vllm_is_older_and_names_the_callers_extra():
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(_traceback("worker_extension_cls")))
    assert finding.title.startswith("trl passes vLLM an argument the installed vLLM version does not take")
    assert "vLLM 0.32.0 takes it (--worker-extension-cls)" in finding.summary
    assert "`pip install 'trl[vllm]'`" in finding.actions[0]


def test_an_argument_no_known_vllm_takes_says_the_installed_vllm_may_be_newer():
    [finding] = op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(_traceback("use_v2_block_manager_xyz")))
    assert "may be newer than trl supports" in finding.summary


def test_a_keyword_refused_inside_vllm_with_no_other_package_calling_is_not_this():
    lines = [line for line in _traceback("worker_extension_cls") if "trl" not in line and "llm = LLM(" not in line]
    assert not op7_callers.RULE_CALLER_ARGUMENT.evaluate(_facts(lines))
