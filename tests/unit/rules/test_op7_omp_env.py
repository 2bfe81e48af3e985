"""OP-7.208: an OpenMP environment variable whose value libgomp refuses, from the line people pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# redhat-et/vllm-cpu-perf-eval#45, verbatim: a playbook started vLLM CPU containers with OMP_NUM_THREADS=0
NUM_THREADS = "libgomp: Invalid value for environment variable OMP_NUM_THREADS"


def test_a_refused_thread_count_is_unset_and_the_cpu_backends_own_binding_named():
    top = top_finding(NUM_THREADS)
    assert top.rule == "OP-7.208" and "OMP_NUM_THREADS" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind, change.command_line()) == (
        "OMP_NUM_THREADS",
        "",
        "env",
        "unset OMP_NUM_THREADS",
    )
    assert "VLLM_CPU_OMP_THREADS_BIND" in top.actions[0] and "positive number of threads" in top.summary


def test_another_variable_is_named_with_what_it_takes():
    top = top_finding("libgomp: Invalid value for environment variable OMP_PROC_BIND")
    assert top.rule == "OP-7.208" and "close, spread" in top.summary
