"""benchmarks/cpu_lanes_ab.py (kernels only) compares the 16-lane build with the 8-lane one on the
same inputs, reports a ratio per case, and hands the engine's libraries back as it found them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from servops_kernels import cpu_attention, cpu_gemm, cpu_layer_ops

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

pytestmark = pytest.mark.skipif(
    cpu_gemm.eight_lanes() or not cpu_layer_ops.available(),
    reason="no AVX-512 here (or no native kernels): the kernels have only the 8-lane build to run",
)


def test_kernel_cases_compare_16_with_8_lanes_and_restore_the_libraries(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its siblings
    sys.modules.pop("cpu_lanes_ab", None)
    import cpu_lanes_ab

    before = (cpu_layer_ops.library(), cpu_attention.library())
    out = tmp_path / "lanes.json"
    assert cpu_lanes_ab.main(["--rounds", "1", "--skip-engine", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    ops = {(row["op"], row["rows"], row["threads"]) for row in rows}
    assert len(ops) == len(rows) == 13  # 3 layer ops x 2 sizes x 2 thread counts, and decode attention
    for row in rows:
        assert row["best"]["16 lanes"] > 0 and row["best"]["8 lanes"] > 0
        assert row["speedup"] == pytest.approx(row["best"]["8 lanes"] / row["best"]["16 lanes"])
    decode = next(row for row in rows if row["op"].startswith("paged_decode"))
    assert decode["max_relative_difference"] < 1e-2  # the same attention, summed in another order
    assert (cpu_layer_ops.library(), cpu_attention.library()) == before


def test_no_runs_per_side_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    sys.modules.pop("cpu_lanes_ab", None)
    import cpu_lanes_ab

    with pytest.raises(SystemExit) as stopped:
        cpu_lanes_ab.main(["--rounds", "0"])
    assert stopped.value.code == 2 and "--rounds 0: give 1 or more runs per side" in capsys.readouterr().err
