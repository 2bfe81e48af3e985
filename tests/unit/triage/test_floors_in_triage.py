"""Triage states the physical floors whenever the model and the GPU are known (docs/triage.md)."""

from __future__ import annotations

import json
from pathlib import Path

from advisor.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


def _triage(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "triage.json"
    assert (
        main(
            [
                "triage",
                "--metrics",
                str(FIXTURES / "v0_15_itl_load_before.prom"),
                "--metrics",
                str(FIXTURES / "v0_15_itl_load_after.prom"),
                "--metrics-interval",
                "10",
                "--server-args",
                "vllm serve Qwen/Qwen3-8B --max-num-batched-tokens 8192",
                "--json",
                str(out),
                *extra,
            ]
        )
        == 0
    )
    return json.loads(out.read_text())


def test_with_the_gpu_named_the_findings_and_notes_carry_the_decode_floor(tmp_path: Path) -> None:
    document = _triage(tmp_path, "--gpu", "H100")
    rules = [f["rule"] for f in document["findings"]]
    assert rules[0] == "OP-5.4" and "x the decode floor" in document["findings"][0]["title"]
    assert "OP-5.13" in rules
    assert any(
        note.startswith("physical floor of a decode step at 120 running") and "3.35 TB/s" in note
        for note in document["notes"]
    )


def test_without_a_gpu_there_is_no_floor_and_no_floor_rule(tmp_path: Path) -> None:
    document = _triage(tmp_path)
    assert "OP-5.13" not in [f["rule"] for f in document["findings"]]
    assert not any(note.startswith("physical floor") for note in document["notes"])
