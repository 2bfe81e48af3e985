"""OP-7.100: sleep mode's wake_up could not map vLLM's memory back."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_sleep_wake
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_out_of_memory_at_wake_up_names_who_took_the_memory_in_an_http_body():
    # llm-d-incubation/llm-d-fast-model-actuation#746: a second vLLM instance on the GPU, the body of an HTTP 500
    body = (
        '{"error":{"message":"Call to wake_up method failed: CUDA Error: out of memory at <path>:163",'
        '"type":"InternalServerError","param":null,"code":500}}'
    )
    top = evaluate(_facts([body])).findings[0]
    assert top.rule == "OP-7.100" and "another process" in top.title
    assert "empty_cache" in top.actions[0] and "tags=weights" in top.actions[1]


def test_the_allocators_own_words_other_than_memory_are_a_failed_cycle():
    line = (
        "Exception: Call to wake_up method failed: Worker failed with error 'CUDA Error: invalid argument at "
        "/workspace/csrc/cumem_allocator.cpp:66'"
    )
    [finding] = op7_sleep_wake.RULE_SLEEP_WAKE.evaluate(_facts([line]))
    assert "(invalid argument)" in finding.title and "restart the server" in finding.actions[0]


def test_a_sleep_that_freed_nothing_points_at_expandable_segments():
    # vllm PR #11743 (a comment on the sleep-mode PR, verbatim): the maintainer traced it to
    # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, a PyTorch bug (pytorch/pytorch#147851)
    line = "INFO 02-25 19:13:26 worker.py:133] Sleep mode freed 0.00 GiB memory, 63.15 GiB memory is still in use."
    top = evaluate(_facts([line])).top
    assert top.rule == "OP-7.163" and "expandable_segments" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == (
        "PYTORCH_CUDA_ALLOC_CONF",
        "expandable_segments:False",
        "env",
    )


def test_vllm_ascends_worker_freeing_nothing_names_the_npu_allocators_variable():
    # modelscope/ms-swift#6636, verbatim (vllm-ascend's worker_v1.py); a maintainer: `export
    # PYTORCH_NPU_ALLOC_CONF="expandable_segments:False"`, sleep mode and virtual memory do not go together there
    line = "INFO 11-17 17:06:50 [worker_v1.py:171] Sleep mode freed 0.00 GiB memory, 23.66 GiB memory is still in use."
    [change] = evaluate(_facts([line])).top.changes
    assert (change.flag, change.proposed) == ("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:False")


def test_a_sleep_that_freed_its_memory_is_no_finding():
    line = "INFO 02-25 19:13:26 worker.py:133] Sleep mode freed 61.02 GiB memory, 2.13 GiB memory is still in use."
    assert op7_sleep_wake.RULE_SLEEP_FREED_NOTHING.check(_facts([line])) == []
