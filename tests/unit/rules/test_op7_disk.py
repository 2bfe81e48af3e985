"""OP-7.34: a write refused for space names the file system's owner and the variable that moves it."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_disk
from rules.events import LogEventKind
from rules.facts import Facts

HF = "OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/blobs/a.part'"


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_full_hugging_face_cache_is_moved_with_hf_home():
    [finding] = op7_disk.RULE.evaluate(_facts([HF]))
    assert finding.title.endswith("(Hugging Face's cache)")
    [change] = finding.changes
    assert (change.flag, change.kind) == ("HF_HOME", "env")
    assert "df -h /root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/blobs" in finding.actions[0]
    assert "ephemeral storage" in finding.actions[1]


def test_a_full_compile_cache_and_an_unknown_path():
    compiled = "OSError: [Errno 28] No space left on device: '/root/.cache/vllm/torch_compile_cache/abc/rank_0_0'"
    [finding] = op7_disk.RULE.evaluate(_facts([compiled]))
    assert [c.flag for c in finding.changes] == ["VLLM_CACHE_ROOT"]
    [finding] = op7_disk.RULE.evaluate(_facts(["OSError: [Errno 28] No space left on device: '/data/out.jsonl'"]))
    assert not finding.changes and "df -h /data" in finding.actions[0]


def test_shared_memory_is_left_to_the_rules_that_read_it():
    shm = "OSError: [Errno 28] No space left on device: '/dev/shm/vllm_offload_0'"
    assert not parse_lines([shm]).of_kind(LogEventKind.DISK_FULL)


def test_a_pathless_error_asks_for_both_stores_unless_the_text_names_shared_memory():
    bare = "OSError: [Errno 28] No space left on device"
    [finding] = op7_disk.RULE.evaluate(_facts([bare]))
    assert finding.title == (
        "a write was refused for space (ENOSPC), and the words name no path: a full disk, or a container's /dev/shm"
    )
    assert "df -h /dev/shm" in finding.actions[0] and "--shm-size" in finding.actions[1]
    nccl = "Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)"
    assert op7_disk.RULE.evaluate(_facts([nccl, bare])) == []


def test_a_quota_used_up_is_named_as_the_quota_with_where_to_look():
    """EDQUOT (122): the user's quota, not the disk, is full; a home directory on a shared cluster, most often."""
    line = "OSError: [Errno 122] Disk quota exceeded: '/home/alice/.cache/huggingface/hub/models--Qwen--Qwen3-8B/x'"
    [finding] = op7_disk.RULE.evaluate(_facts([line]))
    assert finding.rule == "OP-7.34"
    assert finding.title.startswith("the disk quota is used up on the file system holding /home/alice/.cache/")
    assert "`quota -s`" in finding.actions[0] and [c.flag for c in finding.changes] == ["HF_HOME"]


def test_huggingface_hubs_own_check_before_a_download_names_the_full_file_system():
    # AI-Hypercomputer/tpu-recipes#148, verbatim: the recipe's volume was too small for the model (its PR #149)
    line = (
        "(EngineCore_DP0 pid=344) /usr/local/lib/python3.12/site-packages/huggingface_hub/file_download.py:798: "
        "UserWarning: Not enough free disk space to download the file. The expected file size is: 4988.44 MB. The "
        "target location /data/models--BCCard--Qwen3-Coder-480B-A35B-Instruct-FP8-Dynamic/blobs only has 0.00 MB "
        "free disk space."
    )
    [finding] = op7_disk.RULE.evaluate(_facts([line]))
    assert finding.title == (
        "no space left on the file system holding /data/models--BCCard--Qwen3-Coder-480B-A35B-Instruct-FP8-Dynamic/"
        "blobs"
    )
