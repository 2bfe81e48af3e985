"""OP-7.16: vLLM cannot import one of its own modules."""

from __future__ import annotations

from advisor.catalog.vllm_messages import message_catalog
from advisor.collect.logs import parse_lines
from rules.catalog import op7_install
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_checkout_that_lacks_a_module_is_named_with_its_root():
    # vllm-project/vllm-ascend#707: `vllm serve` from a source checkout at /workspace/vllm
    lines = [
        "Traceback (most recent call last):",
        '  File "/workspace/vllm/vllm/entrypoints/cli/benchmark/serve.py", line 4, in <module>',
        "    from vllm.benchmarks.serve import add_cli_args, main",
        "ModuleNotFoundError: No module named 'vllm.benchmarks.serve'",
    ]
    top = evaluate(_facts(lines)).findings[0]
    assert top.rule == "OP-7.16" and top.title == (
        "vLLM cannot import its own module vllm.benchmarks.serve: the vLLM imported is a source checkout "
        "(/workspace/vllm) that lacks it"
    )
    assert top.actions[0].startswith("Run vLLM from a directory without a `vllm/` folder")


def test_an_installed_vllm_without_the_module_is_reinstalled_and_other_modules_are_not_this():
    installed = [
        '  File "/usr/lib/python3/site-packages/vllm/entrypoints/cli/main.py", line 7, in <module>',
        "ModuleNotFoundError: No module named 'vllm.entrypoints.cli.benchmark'",
    ]
    [finding] = op7_install.RULE_OWN_MODULE.evaluate(_facts(installed))
    assert finding.title.endswith(": the installed vLLM lacks it") and "Reinstall vLLM" in finding.actions[0]
    assert op7_install.RULE_OWN_MODULE.evaluate(_facts(["ModuleNotFoundError: No module named 'flash_attn'"])) == []


def test_python_m_with_no_vllm_to_import_is_the_interpreter_or_a_mount_not_vllms_message():
    # vllm#2236: vLLM's image on Runpod with a volume mounted over the directory vLLM was in
    line = (
        "2023-12-21T15:25:16.536115444Z /usr/bin/python3: Error while finding module specification for "
        "'vllm.entrypoints.openai.api_server' (ModuleNotFoundError: No module named 'vllm')"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.16"
    assert top.title == (
        "the Python that started the server has no vllm package (python -m vllm.entrypoints.openai.api_server)"
    )
    assert "a volume mounted over the directory it is installed in hides it" in top.summary


def test_a_plugin_importing_a_module_the_installed_vllm_lacks_is_a_version_mismatch():
    # vllm-project/vllm-omni#1294: vllm-omni's main written for vLLM 0.14.0, run beside a newer vLLM
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/u/vllm-omni/vllm_omni/entrypoints/openai/serving_video.py", line 3, in <module>',
        "    from vllm.entrypoints.openai.serving_engine import OpenAIServing",
        "ModuleNotFoundError: No module named 'vllm.entrypoints.openai.serving_engine'",
    ]
    [finding] = op7_install.RULE_OWN_MODULE.evaluate(_facts(lines))
    assert finding.title.startswith("vllm_omni imports vLLM's module vllm.entrypoints.openai.serving_engine")
    assert finding.actions[0].startswith("Install the vLLM version vllm-omni requires")


def test_a_missing_compiled_extension_is_a_vllm_without_its_kernels():
    # vllm#15286: `pip install vllm` on Windows built the source distribution, which has no kernels
    for line in (
        "ModuleNotFoundError: No module named 'vllm._C'",
        "ImportError: cannot import name '_C' from 'vllm' (/home/me/src/vllm/vllm/__init__.py)",
    ):
        [finding] = op7_install.RULE_OWN_MODULE.evaluate(_facts([line]))
        assert finding.title.startswith("the vllm Python imported has no compiled kernels (vllm._C)"), line
        assert any("VLLM_USE_PRECOMPILED=1" in action for action in finding.actions)
    # a folder of Python files vLLM lacks is still an incomplete install, not missing kernels
    [finding] = op7_install.RULE_OWN_MODULE.evaluate(
        _facts(["ModuleNotFoundError: No module named 'vllm.benchmarks.serve'"])
    )
    assert "compiled" not in finding.title


def test_vllms_missing_version_file_is_an_unbuilt_tree_before_its_kernels_fail():
    # vllm#15592, verbatim: vLLM run from a source directory; `No module named 'vllm._C'` came next
    warning = "/mnt/qy-test/envs/vllm/vllm/__init__.py:5: RuntimeWarning: Failed to read commit hash:"
    [finding] = op7_install.RULE_OWN_MODULE.evaluate(_facts([warning]))
    assert finding.title.startswith("the vllm Python imported has no _version.py (/mnt/qy-test/envs/vllm/vllm)")
    assert "pip install -e ." in finding.actions[1]
    both = evaluate(_facts([warning, "ModuleNotFoundError: No module named 'vllm._C'"])).findings
    assert both[0].rule == "OP-7.16" and "(vllm._C)" in both[0].title  # the failure itself leads when pasted


def test_a_module_pasted_without_frames_is_dated_by_the_releases_whose_source_has_it():
    # OpenPipe/ART PR #501, verbatim: vLLM 0.11.0 lacked vllm.utils.argparse_utils (pinning 0.13.0 fixed it);
    # FoundationVision/LlamaGen#3: a serving script written against vLLM 0.4's vllm.engine.ray_utils
    added = op7_install.RULE_OWN_MODULE.evaluate(
        _facts(
            [
                "`ModuleNotFoundError: No module named 'vllm.utils.argparse_utils'`. This error happens because the "
                "module is only present in vLLM 0.12.0 and above."
            ]
        )
    )[0]
    assert "which the catalog finds in vLLM 0.11.1 and later only: the vLLM imported is an older release" in added.title
    assert "vllm.__file__" in added.actions[0] and "vllm>=0.11.1" in added.actions[1]
    gone = op7_install.RULE_OWN_MODULE.evaluate(
        _facts(["ModuleNotFoundError: No module named 'vllm.engine.ray_utils'"])
    )
    assert "in vLLM 0.4 only" in gone[0].title and "vllm==0.4.*" in gone[0].actions[1]


def test_the_first_release_of_a_file_is_the_patch_that_brought_it_where_the_catalog_read_one():
    assert message_catalog().releases_with("vllm/utils/argparse_utils.py", patch=True) == ("0.11.1", "0.34")
    assert message_catalog().releases_with("vllm/utils/argparse_utils.py") == ("0.11", "0.34")
