"""OP-7.29: a package one of vLLM's extras installs is missing (read from every release's METADATA)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_extras
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

# QwenLM/Qwen3-VL#806, as pasted (the reporter's date prefix; their Markdown bold around the error line)
VIDEO_REQUEST = [
    "2025-02-19 Traceback (most recent call last):",
    '2025-02-19   File "/usr/local/lib/python3.10/dist-packages/vllm/utils.py", line 1813, in __getattr__',
    "2025-02-19     importlib.import_module(name)",
    "2025-02-19 **ModuleNotFoundError: No module named 'decord'**",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_missing_package_of_vllms_video_extra_names_the_extra_and_the_package():
    findings = evaluate(_facts(VIDEO_REQUEST)).findings
    top = findings[0]
    assert top.rule == "OP-7.29" and top.title.startswith("decord is not installed")
    assert "its video extra installs it" in top.title
    assert "`pip install 'vllm[video]'`" in top.actions[0] and "`pip install decord`" in top.actions[0]
    assert "VC-2" not in [f.rule for f in findings]  # the same line, explained


def test_a_package_no_extra_of_vllm_installs_is_not_this():
    lines = ["ModuleNotFoundError: No module named 'my_private_helpers'"]
    assert not op7_extras.RULE_MISSING_EXTRA.evaluate(_facts(lines))
    assert not op7_extras.RULE_MISSING_EXTRA.evaluate(_facts(["ModuleNotFoundError: No module named 'vllm._C'"]))


# --- OP-7.58 a package a model's remote code imports ---------------------------------------------------------------


def test_transformers_check_of_remote_code_imports_names_the_packages_and_flash_attns_wheel():
    line = (
        "ImportError: This modeling file requires the following packages that were not found in your environment: "
        "flash_attn. Run `pip install flash_attn`"
    )
    [finding] = op7_extras.RULE_REMOTE_CODE_IMPORTS.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title == "the model's remote code imports flash_attn, which the server's environment does not have"
    assert finding.actions[0].startswith("Install them where the server runs: `pip install flash_attn`")
    assert "--no-build-isolation" in finding.actions[1] and "pip show flash_attn" in finding.actions[2]
    two = line.replace("flash_attn. Run `pip install flash_attn`", "einops, timm. Run `pip install einops timm`")
    [finding] = op7_extras.RULE_REMOTE_CODE_IMPORTS.evaluate(Facts(events=parse_lines([two]).events))
    assert "`pip install einops timm`" in finding.actions[0] and len(finding.actions) == 2


def test_transformers_warning_for_a_remote_code_import_names_the_package_to_install():
    # vllm PR #22514, verbatim: Ernie4.5-VL's code in vLLM's docker image, which does not ship decord; the words are
    # transformers' check_imports warning, logged before its ImportError
    top = top_finding("(APIServer pid=1) Encountered exception while importing decord: No module named 'decord'")
    assert top.rule == "OP-7.58" and "remote code imports decord" in top.title
    assert "`pip install decord`" in top.actions[0]


def test_the_same_warning_for_an_import_that_failed_otherwise_is_not_a_missing_package():
    line = "WARNING 01-01 00:00:00 dynamic_module_utils.py:248] Encountered exception while importing timm: cannot x"
    assert top_finding(line).rule != "OP-7.58"


def test_the_package_named_is_the_missing_module_not_the_one_imported():
    top = top_finding("Encountered exception while importing foo.bar: No module named 'foo'")
    assert top.rule == "OP-7.58" and "`pip install foo`" in top.actions[0]
