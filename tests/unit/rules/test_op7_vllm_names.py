"""OP-7.67: a name imported from vLLM that the `vllm` Python found does not have, read by where Python found it."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_vllm_names
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_unknown_location_is_a_folder_named_vllm_imported_as_a_namespace_package():
    # vllm#594 and vllm#4554, after `pip install -e .`
    findings = evaluate(_facts(["ImportError: cannot import name 'LLM' from 'vllm' (unknown location)"])).findings
    assert [f.rule for f in findings] == ["OP-7.67"]  # explained: no VC-2 beside it
    top = findings[0]
    assert top.title.startswith("Python imported a folder named vllm, not the vLLM package")
    assert "namespace package" in top.summary and "editable" in top.summary
    assert any("without a folder named vllm" in action for action in top.actions)


def test_a_file_of_ones_own_named_vllm_py_is_named():
    for line in (
        "ImportError: cannot import name 'SamplingParams' from 'vllm' (/home/me/project/vllm.py)",
        # the script itself named vllm.py, importing from vllm: Python imports the script as the module
        "ImportError: cannot import name 'LLM' from partially initialized module 'vllm' (most likely due to a "
        "circular import) (/home/me/vllm.py)",
    ):
        [finding] = op7_vllm_names.RULE_VLLM_NAME.evaluate(_facts([line]))
        assert finding.title.startswith("a file named vllm.py (/home/me"), line


def test_a_vllm_without_its_version_is_not_vllms_package():
    # vllm#4554's collect_env after `pip install -e .`; vLLM's own lazy refusal is worded without quotes
    [finding] = op7_vllm_names.RULE_VLLM_NAME.evaluate(
        _facts(["AttributeError: module 'vllm' has no attribute '__version__'"])
    )
    assert finding.title.startswith("the vllm Python imported is not the vLLM package (it has no __version__)")
    assert "a file of your own named vllm.py, or a namespace package" in finding.summary
    assert op7_vllm_names.RULE_VLLM_NAME.evaluate(_facts(["AttributeError: module vllm has no attribute Foo"])) == []


def test_a_name_the_installed_release_moved_is_code_written_for_another_release():
    # KeplerC/robo2VLM#3: FlexibleArgumentParser moved to vllm.utils.argparse_utils by 0.12
    bare = (
        "ImportError: cannot import name 'FlexibleArgumentParser' from 'vllm.utils' "
        "(/venv/lib/python3.12/site-packages/vllm/utils/__init__.py)"
    )
    [finding] = op7_vllm_names.RULE_VLLM_NAME.evaluate(_facts([bare]))
    assert finding.title == (
        "FlexibleArgumentParser is not in the installed vLLM's vllm.utils: the code importing it was written for "
        "another vLLM release"
    )
    # a plugin's frame (written here in vllm-ascend's layout) importing a name its vLLM release had
    framed = [
        '  File "/venv/lib/python3.11/site-packages/vllm_ascend/worker/model_runner.py", line 21, in <module>',
        "    from vllm.sequence import SamplerOutput",
        "ImportError: cannot import name 'SamplerOutput' from 'vllm.sequence' "
        "(/venv/lib/python3.11/site-packages/vllm/sequence.py)",
    ]
    [finding] = op7_vllm_names.RULE_VLLM_NAME.evaluate(_facts(framed))
    assert finding.title.startswith("vllm_ascend imports SamplerOutput from vllm.sequence")
    # OpenBMB/MiniCPM#236: a minicpm3.py written for vLLM 0.5.4 copied into vLLM 0.6.1's models folder
    own = [
        '  File "/root/miniconda3/lib/python3.11/site-packages/vllm/model_executor/models/minicpm3.py", line 30, in '
        "<module>",
        "    from vllm.sequence import SamplerOutput",
        "ImportError: cannot import name 'SamplerOutput' from 'vllm.sequence' "
        "(/root/miniconda3/lib/python3.11/site-packages/vllm/sequence.py)",
    ]
    [finding] = op7_vllm_names.RULE_VLLM_NAME.evaluate(_facts(own))
    assert finding.title.endswith("the installation mixes two vLLM releases")


def test_other_packages_names_and_circular_imports_are_not_its_own():
    for line in (
        "ImportError: cannot import name 'ProcessorMixin' from 'transformers.processing_utils' (x.py)",
        # a circular import between vLLM's own files is another question
        "ImportError: cannot import name 'LLM' from partially initialized module 'vllm' (most likely due to a "
        "circular import) (/venv/lib/python3.11/site-packages/vllm/__init__.py)",
    ):
        assert op7_vllm_names.RULE_VLLM_NAME.evaluate(_facts([line])) == [], line


def test_a_name_missing_from_a_vllm_module_pasted_without_pythons_location_is_another_release():
    # KeplerC/robo2VLM#3, verbatim: FlexibleArgumentParser left vllm.utils by 0.12
    facts = _facts(["ImportError: cannot import name 'FlexibleArgumentParser' from 'vllm.utils'"])
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.67" and "written for another vLLM release" in top.title


def test_vllm_0_4s_unloaded_ops_name_is_the_compiled_extension_that_did_not_load():
    # vllm#4275, verbatim: the CPU image's first request, its _C never loaded
    facts = _facts(
        ["vllm-cpu-env-1  | ERROR 04-22 21:49:37 async_llm_engine.py:43] NameError: name 'vllm_ops' is not defined"]
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.16" and "vllm._C" in top.title
    assert "Failed to import from vllm._C" in top.actions[0]


def test_a_name_a_vllm_module_lacks_read_as_its_attribute_is_code_written_for_another_release():
    # ray-project/ray#64275, verbatim: Ray Data LLM reading vllm.inputs.data, a module vLLM 0.19 moved (the reporter)
    top = evaluate(_facts(["AttributeError: module 'vllm.inputs' has no attribute 'data'"])).findings[0]
    assert top.rule == "OP-7.67" and top.title == (
        "data is not in the installed vLLM's vllm.inputs: the code reading it was written for another vLLM release"
    )
    # xorbitsai/inference#3903, verbatim (without its class): an older vLLM lacks vllm.envs.is_set (its maintainer)
    older = evaluate(_facts(["module 'vllm.envs' has no attribute 'is_set'"])).findings[0]
    assert older.rule == "OP-7.67" and "Install the vLLM release" in older.actions[0]
    # a compiled extension's missing op is OP-7.16's question, not this one
    compiled = evaluate(_facts(["AttributeError: module 'vllm._C' has no attribute 'ops'"])).findings
    assert not compiled or compiled[0].rule != "OP-7.67"
    # huggingface/text-generation-inference#1945, verbatim: an op of the compiled extension, deeper in its name
    ops = evaluate(_facts(["AttributeError: module 'vllm._C.ops' has no attribute 'moe_align_block_size'"])).findings
    assert not ops or ops[0].rule != "OP-7.67"


def test_a_circular_import_of_a_vllm_module_is_not_another_release():
    line = (
        "AttributeError: partially initialized module 'vllm.envs' has no attribute 'VLLM_USE_V1' (most likely due to a "
        "circular import)"
    )
    findings = evaluate(_facts([line])).findings
    assert not findings or findings[0].rule != "OP-7.67"


def test_the_reporters_own_words_glued_after_the_module_do_not_hide_the_import():
    # VITA-MLLM/VITA#113, verbatim: VITA's vLLM overrides were written for the vllm==0.5.5 its requirements pin
    top = evaluate(_facts(["ImportError: cannot import name 'is_hip' from 'vllm.utils'报错"])).findings[0]
    assert top.rule == "OP-7.67" and "is_hip" in top.title
