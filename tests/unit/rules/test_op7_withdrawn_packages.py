"""OP-7.167: pyairports, which outlines 0.0.43 to 0.0.46 (and so vLLM 0.5.0 to 0.6.4.post1) need, left PyPI; and
pip's resolver giving up on conflicting requirements (OP-7.55), which is how pip reports it among other things."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import PIP_CONFLICT, LogEventKind
from tests.unit.rules.factories import top_finding

# vllm#23983, verbatim: `pip install vllm==0.6.3` in August 2025, its resolver's summary and one of its causes
CANNOT_INSTALL = "ERROR: Cannot install vllm because these package versions have conflicting dependencies."
CAUSE = "    outlines 0.0.46 depends on pyairports"
# zeroQiaoba/AffectGPT#21, verbatim: uv on vLLM 0.6.1's requirements (the reporter moved to vLLM 0.8.5.post1)
UV_NOT_FOUND = (
    "  ╰─▶ Because pyairports was not found in the package registry and you require pyairports, we can conclude "
    "that your requirements are unsatisfiable"
)
# Simplified-Reasoning/LUFFY#32, verbatim: vllm 0.5.4's outlines pin
PIP_NOT_FOUND = "ERROR: No matching distribution found for pyairports"


def test_uv_and_pips_conflict_lines_are_read_as_the_installer_finding_nothing():
    events = parse_lines([CANNOT_INSTALL, CAUSE, UV_NOT_FOUND]).events
    assert [e.kind for e in events] == [LogEventKind.PIP_NO_DISTRIBUTION] * 3
    assert [e.component for e in events] == ["vllm", "pyairports", "pyairports"]
    assert events[0].versions_offered == PIP_CONFLICT
    assert events[1].versions_offered == f"{PIP_CONFLICT}outlines 0.0.46"


def test_each_installer_wording_names_the_release_that_no_longer_needs_it():
    for lines in ([CANNOT_INSTALL, CAUSE], [UV_NOT_FOUND], [PIP_NOT_FOUND]):
        top = top_finding(*lines)
        assert top.rule == "OP-7.167", lines
        assert "no longer installable from PyPI" in top.title and "vLLM 0.5.0 to 0.6.4.post1" in top.title
        assert "vLLM 0.6.5 or later" in top.actions[0] and "airportsdata" in top.actions[0]
        assert "git+https://github.com/ozeliger/pyairports" in top.actions[1]
        assert "pip uninstall pyairports" in top.actions[2]


def test_the_module_missing_at_run_time_is_the_same_cause():
    top = top_finding("ModuleNotFoundError: No module named 'pyairports'")
    assert top.rule == "OP-7.167" and "installs no such module" in top.title


def test_pips_conflict_of_other_packages_names_the_requirer_and_its_pin():
    top = top_finding(CANNOT_INSTALL, "    vllm 0.6.3 depends on torch==2.4.0", "    The user requested torch==2.5.1")
    assert top.rule == "OP-7.55"
    assert top.title == (
        "pip's resolver found no versions that meet every requirement: vllm 0.6.3 requires torch==2.4.0"
    )
    assert "The conflict is caused by:" in top.actions[0]


def test_pips_bare_summary_names_what_it_could_not_install():
    top = top_finding(CANNOT_INSTALL)
    assert top.rule == "OP-7.55" and top.title.endswith("no versions of vllm whose requirements fit together")


def test_a_requirements_files_long_list_is_shown_cut_and_names_no_package():
    # NineAbyss/S2R#2, verbatim (the thirty-first probe): pip names the requirements file's lines
    line = (
        "ERROR: Cannot install -r requirements.txt (line 1), -r requirements.txt (line 2), -r requirements.txt "
        "(line 21), -r requirements.txt (line 4) and torch==2.1.1 because these package versions have conflicting "
        "dependencies."
    )
    [event] = parse_lines([line]).events
    assert event.component is None
    top = top_finding(line)
    assert top.rule == "OP-7.55" and top.title.endswith(", … whose requirements fit together")


def test_uvs_hint_of_wheels_for_other_pythons_names_them_and_the_python_to_use():
    # vllm#43435, verbatim: `uv pip install vllm==0.21` on Python 3.14, cuda-tile (flashinfer's) without cp314 wheels
    top = top_finding(
        "      hint: You require CPython 3.14 (`cp314`), but we only found wheels for `cuda-tile` (v1.3.0) with the "
        "following Python ABI tags: `cp310`, `cp311`, `cp312`, `cp313`"
    )
    assert top.rule == "OP-7.55"
    assert top.title == "cuda-tile 1.3.0 has wheels only for CPython 3.10, 3.11, 3.12, 3.13, and this is CPython 3.14"
    assert "uv venv --python 3.13" in top.actions[0] and "--prerelease=allow" in top.actions[1]


def test_a_source_tree_without_git_metadata_is_a_build_without_a_version():
    # vllm PR #4738, verbatim: a container build of vLLM's repository after it moved to setuptools-scm
    top = top_finding("18.23 LookupError: setuptools-scm was unable to detect version for /workspace.")
    assert top.rule == "OP-7.55" and top.title.startswith("the source build found no version for /workspace")
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" in top.actions[1]


def test_ninjas_summary_alone_points_at_the_failed_step_above_it():
    # SystemPanic/vllm-windows#38, verbatim: a source build's ninja summary; with its FAILED line, that one leads
    top = top_finding("ninja: build stopped: subcommand failed.")
    assert top.rule == "OP-7.55" and top.title.startswith("a compile step of a build failed, and ninja stopped it")
    with_step = top_finding(
        "FAILED: CMakeFiles/_C.dir/csrc/attention/attention_kernels.cu.o", "ninja: build stopped: subcommand failed."
    )
    assert with_step.title.startswith("vLLM's source build failed compiling attention/attention_kernels.cu")
