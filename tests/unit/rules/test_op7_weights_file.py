"""OP-7.42: a weights file that is not a whole safetensors file. The files are made here (a Git LFS pointer, a file
cut in half, an empty one) and the installed safetensors' own error for each is what triage reads."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from advisor.collect.logs import parse_lines
from rules.catalog.op7_weights_file import RULE
from rules.facts import Facts

# The pointer git leaves for a file stored in LFS when git-lfs is not installed (its three lines).
LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 4976698672\n"
)


def _safetensors_error(path: Path) -> str:
    """The exception line Python prints when safetensors refuses `path`."""
    with pytest.raises(Exception) as refused:
        with safe_open(str(path), framework="pt"):
            pass
    return traceback.format_exception_only(refused.value)[-1].strip()


def _findings(line: str):
    return RULE.evaluate(Facts(events=parse_lines([line]).events))


def _weights(tmp_path: Path) -> bytes:
    save_file({"w": torch.zeros(256, 256)}, str(tmp_path / "whole.safetensors"))
    return (tmp_path / "whole.safetensors").read_bytes()


@pytest.mark.parametrize(
    ("state", "make", "title"),
    [
        ("lfs", lambda whole: LFS_POINTER.encode(), "a weights file holds text, not safetensors data"),
        ("html", lambda whole: b"<!DOCTYPE html><html>Access denied</html>", "a weights file holds text"),
        ("cut", lambda whole: whole[: len(whole) // 2], "a weights file is shorter than its header says"),
        ("empty", lambda whole: b"", "a weights file is empty or a few bytes long"),
    ],
)
def test_the_installed_safetensors_words_for_each_damaged_file_name_what_stands_there(tmp_path, state, make, title):
    damaged = tmp_path / f"{state}.safetensors"
    damaged.write_bytes(make(_weights(tmp_path)))
    [finding] = _findings(_safetensors_error(damaged))
    assert finding.title.startswith(title)
    assert finding.actions[0].startswith("Find it: `ls -lS") and "git lfs pull" in finding.actions[-1]


def test_older_releases_error_names_read_the_same():
    quoted = "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge"  # exllama#242
    assert _findings(quoted)[0].title.startswith("a weights file holds text")
    cut = "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer"
    assert "df -h" in _findings(cut)[0].actions[1]
