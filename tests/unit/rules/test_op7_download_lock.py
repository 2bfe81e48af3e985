"""OP-7.190: a model's download waits on a lock in the hub's cache."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_modelscopes_stale_lock_is_named_with_the_file_to_delete():
    # gpustack/gpustack#3054, verbatim: an interrupted ModelScope download left its lock; deleting it let it go on
    top = top_finding(
        "Still waiting to acquire lock on `/root/.cache/modelscope/hub/.lock/Qwen___Qwen3-VL-235B-A22B-Instruct-FP8`"
    )
    assert top.rule == "OP-7.190" and "ModelScope's lock" in top.title
    assert "delete /root/.cache/modelscope/hub/.lock/Qwen___Qwen3-VL-235B-A22B-Instruct-FP8" in top.actions[1]
    assert top.changes == []


def test_hugging_faces_wait_with_its_elapsed_time_names_hugging_faces_lock():
    top = top_finding(
        "Still waiting to acquire lock on /root/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-8B/a1.lock "
        "(elapsed: 10.0 seconds)"
    )
    assert top.rule == "OP-7.190" and top.title.startswith(
        "the model's download waits on Hugging Face's lock /root/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-8B"
        "/a1.lock"
    )
