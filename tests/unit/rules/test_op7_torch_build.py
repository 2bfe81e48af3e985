"""OP-7.48: torch's refusal to use CUDA from a build without it, read with what says which build is installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from advisor.collect.logs import parse_lines
from rules.catalog.op7_torch_build import RULE, RULE_TORCHVISION
from rules.facts import Facts

ASSERT = "AssertionError: Torch not compiled with CUDA enabled"
# the installed torch's own file, found without importing torch
TORCH_SOURCE = Path(importlib.util.find_spec("torch").submodule_search_locations[0]) / "cuda" / "__init__.py"


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_the_words_are_torchs_own():
    """The installed torch (2.13.0, the CPU build this project tests with) raises exactly these words."""
    assert 'raise AssertionError("Torch not compiled with CUDA enabled")' in TORCH_SOURCE.read_text()


def test_the_assertion_alone_reads_as_a_build_without_cuda_and_offers_the_platform_reading_last():
    [finding] = _findings(ASSERT)
    assert finding.title == (
        "the PyTorch installed is a build without CUDA, most often a CPU build: vLLM's CUDA path cannot run on it"
    )
    assert "torch.version.cuda" in finding.actions[0]
    assert "download.pytorch.org/whl/cpu" in finding.actions[1]
    assert "traceback's frames" in finding.actions[-1]


def test_collect_envs_cpu_version_names_the_build():
    [finding] = _findings("PyTorch version: 2.5.1+cpu", "CUDA used to build PyTorch: None", ASSERT)
    assert finding.title == "the PyTorch installed is a CPU build (2.5.1+cpu): vLLM's CUDA path cannot run on it"
    assert [e.value for e in finding.evidence] == ["Torch not compiled with CUDA enabled", "2.5.1+cpu"]
    assert not any("traceback's frames" in action for action in finding.actions)


def test_ascends_torch_npu_in_pip_list_reads_as_a_cuda_path_on_another_platform():
    [finding] = _findings(
        "torch                             2.5.1",
        "torch-npu                         2.5.1.dev20250218",
        "ERROR 05-07 05:58:46 core.py:291] " + ASSERT,
    )
    assert finding.title == "code that needs CUDA ran on a platform whose PyTorch has none (torch_npu)"
    assert "plugin release made for the installed vLLM" in finding.actions[1]


def test_a_cpu_build_without_the_assertion_is_no_finding():
    """vLLM's CPU backend runs on a `+cpu` torch on purpose: the version alone says nothing is wrong."""
    assert _findings("PyTorch version: 2.5.1+cpu", "torch                             2.13.0+cpu") == []


# --- OP-7.51 torchvision built for another torch ---------------------------------------------------------------------


def _torchvision(*lines: str):
    return RULE_TORCHVISION.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_torchs_missing_operator_names_torchvision_as_the_build_for_another_torch():
    [finding] = _torchvision(
        '  File "/usr/local/lib/python3.10/dist-packages/torchvision/_meta_registrations.py", line 164, in <module>',
        '    @torch.library.register_fake("torchvision::nms")',
        "RuntimeError: operator torchvision::nms does not exist",
    )
    assert finding.title == (
        "torchvision's compiled ops did not load (torchvision::nms is missing): torchvision is not the build made for "
        "this torch"
    )
    assert "pip show torch torchvision" in finding.actions[0] and "same index" in finding.actions[0]
    assert "--no-deps" in finding.actions[1]


def test_torchvisions_cuda_check_names_both_releases():
    [finding] = _torchvision(
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch "
        "has CUDA Version=13.0 and torchvision has CUDA Version=12.8. Please reinstall the torchvision that matches "
        "your PyTorch install."
    )
    assert finding.title.startswith("torchvision was built for CUDA 12.8, the installed PyTorch for CUDA 13.0")


def test_torchvisions_own_words_for_ops_it_could_not_load():
    [finding] = _torchvision(
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are "
        "incompatible, or if you had errors while compiling torchvision from source."
    )
    assert finding.title == "torchvision's compiled ops did not load: torchvision is not the build made for this torch"


def test_a_torchvision_op_without_a_cuda_kernel_is_a_cpu_torchvision():
    [finding] = _torchvision(
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be "
        "because the operator doesn't exist for this backend"
    )
    assert finding.title == (
        "torchvision's torchvision::nms has no CUDA kernel here: a CPU build of torchvision beside a CUDA torch"
    )
    assert "same index" in finding.actions[0]
