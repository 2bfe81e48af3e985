"""benchmarks/cpu_layer_ops_ab.py (ops and LM head only) runs, compares each case with its
baseline in the same run, and leaves the module state it patches as it found it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engine.model import llama
from servops_kernels import cpu_layer_ops, layer_ops

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

pytestmark = pytest.mark.skipif(not cpu_layer_ops.available(), reason="native CPU layer ops not built here")


def test_ops_and_lm_head_cases_report_ratios_against_their_baselines(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its siblings
    sys.modules.pop("cpu_layer_ops_ab", None)
    import cpu_layer_ops_ab

    before = (layer_ops._native, cpu_layer_ops.supports_cache_write, llama.LM_HEAD_SLICE)
    out = tmp_path / "layer_ab.json"
    result = cpu_layer_ops_ab.main(["--skip-engine", "--repeats", "1", "--json", str(out)])
    assert json.loads(out.read_text()) == result
    cases = {case["case"]: case for case in result["cases"]}
    assert len(cases) == 7 and "engine" not in result
    for case in cases.values():
        assert case["baseline_s"] > 0 and case["native_s"] > 0
        assert case["ratio"] == pytest.approx(case["baseline_s"] / case["native_s"])
    assert all(case["bit_identical"] for name, case in cases.items() if name.startswith("LM head"))
    assert (layer_ops._native, cpu_layer_ops.supports_cache_write, llama.LM_HEAD_SLICE) == before
