"""OP-1.12: a weight load slower than any local disk, from vLLM's own lines on the load and (0.32) the filesystem."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog.op1_weight_load import RULE_WEIGHT_LOAD
from rules.events import LogEventKind as K
from rules.facts import Facts

PREFIX = "(EngineCore_DP0 pid=1) INFO 11-02 01:00:00 "
LOADED = PREFIX + "[gpu_model_runner.py:2500] Model loading took 15.26 GiB memory and {} seconds"
FS = (
    PREFIX
    + "[weight_utils.py:1108] Filesystem type for checkpoints: {}. Checkpoint size: 15.26 GiB. Available RAM: {} GiB."
)


def _findings(*lines: str):
    return RULE_WEIGHT_LOAD.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_vllms_filesystem_line_is_read_with_the_checkpoint_and_the_ram():
    [event] = parse_lines([FS.format("NFS", "120.50")]).events
    assert (event.kind, event.message, event.weights_gib, event.free_gib) == (
        K.CHECKPOINT_FILESYSTEM,
        "NFS",
        15.26,
        120.5,
    )


def test_a_slow_load_from_a_mount_vllm_does_not_read_ahead_proposes_prefetch_when_it_fits():
    [finding] = _findings(FS.format("FUSE", "120.50"), LOADED.format("1200.5"))
    assert finding.title == (
        "the weights loaded at about 13 MiB/s (15.26 GiB in 20 min 00 s): slower than any local disk, from FUSE"
    )
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--safetensors-load-strategy", "prefetch")]
    assert finding.actions[0].startswith("Put the weights on a local disk")
    [too_big] = _findings(FS.format("FUSE", "12.00"), LOADED.format("1200.5"))
    assert too_big.changes == []


@pytest.mark.parametrize(
    ("fs", "said"),
    [("NFS", "so vLLM read the files ahead by itself"), ("EXT4", "a disk, so the device itself is slow")],
)
def test_no_prefetch_is_proposed_where_vllm_already_reads_ahead_or_the_disk_is_the_slow_part(fs, said):
    [finding] = _findings(FS.format(fs, "120.50"), LOADED.format("1200.5"))
    assert finding.changes == [] and said in finding.summary


def test_without_the_filesystem_line_it_says_where_vllm_names_it():
    [finding] = _findings(LOADED.format("1200.5"))
    assert "Filesystem type for checkpoints" in finding.actions[1]


def test_a_fast_load_or_a_short_one_is_not_named():
    assert _findings(LOADED.format("90.0")) == []  # 174 MiB/s
    short = LOADED.format("100.0").replace("15.26 GiB", "4.00 GiB")  # 41 MiB/s, but under two minutes
    assert _findings(short) == []
