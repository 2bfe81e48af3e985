"""OP-7.118: building vLLM from source with a CUDA toolkit of another release than PyTorch's."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_build_cuda
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_torchs_refusal_cut_where_the_paste_wrapped_names_the_toolkits_release():
    # vllm#129, verbatim (the line wraps there in the thread)
    top = evaluate(
        _facts(["The detected CUDA version (12.1) mismatches the version that was used to compile"])
    ).findings[0]
    assert top.rule == "OP-7.118" and "(12.1)" in top.title
    assert "PyTorch build for CUDA 12.1" in top.actions[0]


def test_the_whole_refusal_names_pytorchs_release_too():
    line = (
        "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.7)."
        " Please make sure to use the same CUDA versions."
    )
    [finding] = op7_build_cuda.RULE.evaluate(_facts([line]))
    assert "PyTorch's (11.7)" in finding.title


def test_vllms_setup_without_a_toolkit_says_why_pip_built_and_the_ways_out():
    # tenstorrent/tt-xla#2338, verbatim: a vLLM fork pip-installed from a git branch on a machine without CUDA
    top = evaluate(_facts(["      AssertionError: CUDA_HOME is not set"])).findings[0]
    assert top.rule == "OP-7.120" and top.title.startswith("vLLM's build found no CUDA toolkit")
    assert (top.changes[0].flag, top.changes[0].kind) == ("CUDA_HOME", "env")
    assert "released vLLM wheel" in top.actions[0] and "VLLM_TARGET_DEVICE=cpu" in top.actions[1]


def test_the_setup_of_2023_said_it_as_a_runtime_error_and_a_paste_in_other_words_around_it_is_read():
    # OpenBMB/MiniCPM#6, verbatim: `pip install vllm` on a Mac; vLLM had no Apple silicon build then (its maintainer)
    top = evaluate(
        _facts(["安装vllm会提示 `Cannot find CUDA_HOME. CUDA must be available to build the package`"])
    ).findings[0]
    # the words were copied into other packages' setup.py (thu-ml/SageAttention's): whose build is in pip's lines
    assert top.rule == "OP-7.120" and top.title.startswith("a build of CUDA code (vLLM's, or a package pip compiles")
    assert any("On a host with no NVIDIA GPU" in action for action in top.actions)


def test_torchs_words_in_a_running_vllms_log_are_a_jit_build_not_an_install():
    words = "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."
    [alone] = op7_build_cuda.RULE_NO_TOOLKIT.evaluate(_facts([words]))
    assert alone.title.startswith("a build of CUDA code")
    running = _facts([f"(EngineCore_DP0 pid=5) ERROR 01-01 00:00:00 [core.py:1] {words}"])
    assert op7_build_cuda.RULE_NO_TOOLKIT.evaluate(running) == []
    assert evaluate(running).findings[0].rule == "OP-7.13"
