"""benchmarks/gemm_ceiling.py on a tiny model: both sides run, linear layers are timed, ratios follow."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


def test_times_linear_layers_on_both_sides_and_derives_the_ceiling(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its sibling engine_throughput
    sys.modules.pop("gemm_ceiling", None)
    import gemm_ceiling

    out = tmp_path / "ceiling.json"
    result = gemm_ceiling.main(
        ["--model", tiny_model_dir("llama"), "--num-requests", "4", "--hf-batch-size", "2", "--json", str(out)]
    )
    assert json.loads(out.read_text()) == result
    for side in ("engine", "hf"):
        assert 0 < result[side]["linear_seconds"] < result[side]["seconds"]
    assert result["ceiling_ratio"] == result["hf"]["seconds"] / result["engine"]["linear_seconds"]
    assert result["ceiling_ratio"] > result["measured_ratio"]  # linear time is part of the engine's wall time
    assert result["useful_tokens"] == sum(n for _, n in gemm_ceiling.make_workload(4, result["vocab"], 0))
