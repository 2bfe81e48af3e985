"""HL-7: the lines every exiting process prints are named as noise, and only when the text says nothing else."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts

PG = (
    "[rank0]:[W1201 10:00:00.000000000 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not "
    "called before program exit, which can leak resources. For more info, please see "
    "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())"
)
SHM = (
    "/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There appear to be 1 "
    "leaked shared_memory objects to clean up at shutdown"
)


def _top(*lines: str):
    return evaluate(Facts(events=parse_lines(list(lines)).events)).findings


def test_a_paste_of_only_exit_noise_is_sent_to_the_lines_before_it():
    [finding] = _top(PG, SHM, "Exception ignored in: <function ZMQSocket.__del__ at 0x7f3a>")
    assert finding.rule == "HL-7"
    assert finding.title == (
        "the text holds only the process's exit noise (an undestroyed process group, leaked shared memory, a "
        "finaliser): why it stopped is in the lines before"
    )
    assert "--previous --tail=-1" in finding.actions[0]


def test_an_import_a_destructor_tried_at_interpreter_shutdown_is_noise():
    # run-llama/llama_index#13019, verbatim: raised from Vllm.__del__ after the call had run (the maintainer: noise)
    [finding] = _top("ImportError: sys.meta_path is None, Python is likely shutting down")
    assert finding.rule == "HL-7" and "(an import during the interpreter's shutdown)" in finding.title


def test_noise_beside_a_cause_is_left_out():
    findings = _top("RuntimeError: CUDA error: out of memory", PG)
    assert findings and "HL-7" not in [f.rule for f in findings]
