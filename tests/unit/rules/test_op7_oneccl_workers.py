"""OP-7.103: oneCCL could not start its worker thread, so vLLM's XPU worker did not start."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding


def test_the_exception_alone_points_one_gpu_at_the_release_that_skips_the_warm_up():
    # vllm#10109: the offline example on one Intel GPU; PR #52389 skips the warm-up at world size 1
    top = top_finding("RuntimeError: oneCCL: exec.cpp:122 start_workers: EXCEPTION: failed to start worker # 0")
    assert top.rule == "OP-7.103" and "worker thread" in top.title
    assert "#52389" in top.actions[0] and "upgrade vLLM" in top.actions[0]


def test_oneccls_own_line_names_what_pthread_create_refused():
    # intel/torch-ccl#54: the error line oneCCL writes above the exception
    top = top_finding(
        "2023:11:28-16:35:45:(35980) |CCL_ERROR| base_thread.cpp:36 start: error while creating worker thread #0 "
        "pthread_create returns 22",
        "RuntimeError: oneCCL: exec.cpp:134 start_workers: EXCEPTION: failed to start worker # 0",
    )
    assert top.rule == "OP-7.103" and "returned 22, EINVAL" in top.title
    assert any("affinity" in action for action in top.actions)


def test_with_tensor_parallelism_oneccl_itself_comes_first():
    top = top_finding(
        "RuntimeError: oneCCL: exec.cpp:122 start_workers: EXCEPTION: failed to start worker # 0",
        config=config(tensor_parallel_size=2),
    )
    assert top.rule == "OP-7.103" and "CCL_LOG_LEVEL=info" in top.actions[0]
