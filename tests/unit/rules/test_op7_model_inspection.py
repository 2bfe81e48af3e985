"""OP-7.158: vLLM's model-inspection subprocess failed; its own traceback, not these lines, holds the cause."""

from __future__ import annotations

import pytest

from tests.unit.rules.factories import top_finding


@pytest.mark.parametrize(
    "line",
    [
        # vllm#21050, verbatim (vLLM 0.9.2, `vllm serve Qwen2.5-VL-3B-Instruct`)
        "ERROR 07-16 18:40:10 [registry.py:379] subprocess.CalledProcessError: Command '['/bin/python', '-m', "
        "'vllm.model_executor.models.registry']' returned non-zero exit status 1.",
        # vllm#13216, verbatim (a CPU build of 0.7.2)
        "ERROR 03-02 17:03:02 registry.py:306] subprocess.CalledProcessError: Command '['/home/chensy/miniconda3/bin/"
        "python', '-m', 'vllm.model_executor.models.registry']' returned non-zero exit status 1.",
    ],
)
def test_the_subprocess_exit_points_at_the_childs_traceback(line: str):
    top = top_finding(line)
    assert top.rule == "OP-7.158" and "(exit status 1)" in top.title
    assert "Error raised in subprocess" in top.actions[0] and "_VLLM_MODELS" in top.actions[1]


def test_vllms_own_words_name_the_architecture_for_the_reproduction():
    # dhcode-cpp/X-R1#29, verbatim (GRPO training running vLLM)
    top = top_finding("ERROR 02-19 10:50:53 registry.py:306] Error in inspecting model architecture 'Qwen2ForCausalLM'")
    assert top.rule == "OP-7.158" and "m['Qwen2ForCausalLM']" in top.actions[1]


def test_a_child_killed_by_a_signal_stays_the_crashs():
    line = (
        "ERROR 01-18 15:21:03 [registry.py:741] subprocess.CalledProcessError: Command '['/x/.venv/bin/python3', '-m', "
        "'vllm.model_executor.models.registry']' died with <Signals.SIGILL: 4>."
    )
    assert top_finding(line).rule == "HL-6"
