"""benchmarks/cpu_gemm_ab.py (GEMMs only) runs, compares each case with PyTorch's bf16
F.linear in the same run, and leaves the dispatch it patches as it found it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from servops_kernels import cpu_gemm, layer_ops

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

pytestmark = pytest.mark.skipif(not cpu_gemm.available(), reason="native bf16 GEMM not built here")


def test_gemm_cases_report_ratios_against_pytorch_bf16(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its siblings
    sys.modules.pop("cpu_gemm_ab", None)
    import cpu_gemm_ab

    before = layer_ops._native_gemm
    with cpu_gemm_ab.pytorch_bf16_linear():
        assert layer_ops._native_gemm is not before
    assert layer_ops._native_gemm is before
    out = tmp_path / "gemm_ab.json"
    result = cpu_gemm_ab.main(["--skip-engine", "--repeats", "1", "--max-rows", "16", "--json", str(out)])
    assert json.loads(out.read_text()) == result
    assert len(result["cases"]) == 10 and "engine" not in result  # 4 layers x (1, 16 rows) + LM head x 2
    for case in result["cases"]:
        assert case["baseline_s"] > 0 and case["native_s"] > 0 and case["float32_s"] > 0
        assert case["ratio"] == pytest.approx(case["baseline_s"] / case["native_s"])
        assert case["outputs_differing"] < 0.05  # one rounding apart, where the sums' order tips it


def test_decode_rows_stream_distinct_weights_and_bad_rows_are_one_usage_error(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    sys.modules.pop("cpu_gemm_ab", None)
    import cpu_gemm_ab

    result = cpu_gemm_ab.main(["--skip-engine", "--repeats", "1", "--rows", "1,2", "--layers", "2"])
    assert [case["case"].split(",")[0] for case in result["cases"]] == [
        f"{name} {cols}x{k}" for name, (cols, k) in cpu_gemm_ab.SHAPES.items() for _ in (1, 2)
    ]
    for case in result["cases"]:
        streamed = not case["case"].startswith("lm_head")  # the LM head is one weight per step
        assert ("2 weights streamed" in case["case"]) is streamed
        assert case["native_weight_gbps"] > 0 and case["baseline_weight_gbps"] > 0
    with pytest.raises(SystemExit) as exit_info:
        cpu_gemm_ab.main(["--skip-engine", "--rows", "1,x"])
    assert exit_info.value.code == 2 and "--rows '1,x'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        cpu_gemm_ab.main(["--skip-engine", "--layers", "0"])
    assert exit_info.value.code == 2 and "--layers 0: pass at least 1" in capsys.readouterr().err
