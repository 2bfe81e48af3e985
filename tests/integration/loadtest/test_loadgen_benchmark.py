"""benchmarks/loadgen.py runs and reports the figures BENCHMARKS.md quotes (tiny settings)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def test_loadgen_benchmark_reports_error_percentiles_and_the_baseline_ratio(tmp_path):
    out = tmp_path / "loadgen.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "loadgen.py"),
            "--levels",
            "1,4",
            "--seconds",
            "1",
            "--gap",
            "0.02",
            "--tokens",
            "10",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert [row["streams"] for row in result["levels"]] == [1, 4]
    assert all(row["events"] > 0 and row["error_p50_ms"] is not None for row in result["levels"])
    assert result["baseline"]["events"] > 0
    assert result["baseline_to_ours_p50_ratio_at_1_stream"] is not None
