"""benchmarks/attention.py runs end to end on tiny shapes and writes its JSON document."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "attention.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("servops_bench_attention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


def test_tiny_cpu_run_reports_every_case_against_the_torch_baseline(tmp_path):
    bench = _load_script()
    out = tmp_path / "bench.json"
    code = bench.main(
        [
            "--device",
            "cpu",
            "--backends",
            "torch,sdpa_dense",
            "--batch-sizes",
            "1,2",
            "--context-lens",
            "20,40",
            "--prefill-chunk",
            "8",
            "--num-heads",
            "4",
            "--num-kv-heads",
            "2",
            "--head-dim",
            "16",
            "--repeats",
            "2",
            "--copy-mib",
            "8",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "benchmark.attention" and doc["servops_version"] and doc["created_at"]
    assert doc["copy_bandwidth_gbps"] > 0
    cases = doc["cases"]
    assert {(c["phase"], c["backend"]) for c in cases} == {
        (phase, backend) for phase in ("decode", "prefill") for backend in ("torch", "sdpa_dense")
    }
    assert len(cases) == 2 * 2 * 2 * 2  # phases x batch sizes x contexts x backends
    for case in cases:
        assert case["time_ms"] > 0 and case["bandwidth_gbps"] > 0
        if case["backend"] == "torch":
            assert case["ratio_to_torch"] == 1.0
        if case["backend"] == "sdpa_dense":
            assert case["ratio_to_sdpa_dense"] == 1.0
    prefill = next(c for c in cases if c["phase"] == "prefill" and c["context_len"] == 40 and c["batch_size"] == 2)
    # K and V of 2 x 40 tokens x 2 kv heads x 16 dims in fp32, plus 2 x 8 query rows in and out
    assert prefill["bytes_moved"] == 2 * 2 * 40 * 2 * 16 * 4 + 2 * (2 * 8 * 4 * 16) * 4


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--backends", "flash"], "--backends 'flash'"),
        (["--num-heads", "6", "--num-kv-heads", "4"], "--num-heads 6"),
    ],
)
def test_bad_flags_are_one_line_errors(capsys, flags, fragment):
    bench = _load_script()
    code = bench.main(["--device", "cpu", "--copy-mib", "1", "--context-lens", "8", "--batch-sizes", "1", *flags])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and "\n" not in err
