"""benchmarks/engine_vs_vllm.py --rounds: mirrored order, per-step medians, each round's own ratio."""

from __future__ import annotations

import pytest

from benchmarks import engine_vs_vllm as bench


def _run(tok_s: list[float], ttft: float, probe: float) -> dict:
    steps = [
        {
            "offered": level,
            "ok_requests": 10,
            "valid": True,
            "output_tokens_per_s": rate,
            "ttft_p50": ttft,
            "ttft_p99": ttft * 2,
            "itl_p50": 0.05,
            "itl_p99": None,
        }
        for level, rate in zip([1.0, 4.0], tok_s, strict=True)
    ]
    return {"command": "serve", "gemm_probe_gflops": probe, "workloads": {"short": steps}}


def test_rounds_mirror_so_drift_lands_on_both_sides():
    assert bench.round_order(["vllm", "bundled"], 1) == [(1, "vllm"), (1, "bundled")]
    assert bench.round_order(["vllm", "bundled"], 3) == [
        (1, "vllm"),
        (1, "bundled"),
        (2, "bundled"),
        (2, "vllm"),
        (3, "vllm"),
        (3, "bundled"),
    ]
    assert bench.round_order(["bundled"], 2) == [(1, "bundled"), (2, "bundled")]


def test_one_round_is_returned_as_it_is():
    run = _run([10.0, 30.0], 0.1, 200.0)
    assert bench.combine_rounds([run]) is run


def test_rounds_combine_to_per_step_medians():
    combined = bench.combine_rounds(
        [_run([10.0, 30.0], 0.1, 200.0), _run([20.0, 50.0], 0.3, 300.0), _run([12.0, 40.0], 0.2, 250.0)]
    )
    first, second = combined["workloads"]["short"]
    assert combined["gemm_probe_gflops"] == [200.0, 300.0, 250.0]
    assert (first["output_tokens_per_s"], second["output_tokens_per_s"]) == (12.0, 40.0)
    assert first["ttft_p50"] == pytest.approx(0.2)
    assert first["ok_requests"] == 30 and first["valid"]
    assert first["itl_p99"] is None  # measured in no round


def test_render_shows_each_rounds_ratio():
    vllm = [_run([10.0, 40.0], 0.1, 200.0), _run([20.0, 40.0], 0.1, 200.0)]
    bundled = [_run([15.0, 30.0], 0.1, 200.0), _run([20.0, 60.0], 0.1, 200.0)]
    summary = {
        "workloads": ["short"],
        "engines": {"vllm": bench.combine_rounds(vllm), "bundled": bench.combine_rounds(bundled)},
        "round_ratios": [
            bench.ratios({"engines": {"vllm": v, "bundled": b}}) for v, b in zip(vllm, bundled, strict=True)
        ],
    }
    summary["ratios"] = bench.ratios(summary)
    text = bench.render(summary)
    assert "| 1 | 15 / 18 / **1.17×**" in text  # medians 15 and 17.5 tok/s
    assert "- round 1: 1: 1.50×, 4: 0.75×" in text
    assert "- round 2: 1: 1.00×, 4: 1.50×" in text


def test_rounds_must_be_positive(capsys):
    with pytest.raises(SystemExit) as stop:
        bench.main(["--rounds", "0"])
    assert stop.value.code == 2
    assert "--rounds 0: must be at least 1" in capsys.readouterr().err


def test_steps_above_sixteen_streams_grow_with_the_streams_in_their_own_ramp():
    assert bench.step_groups([1.0, 4.0, 16.0, 64.0], 20.0) == [(20.0, [1.0, 4.0, 16.0]), (80.0, [64.0])]
    assert bench.step_groups([16.0, 32.0, 64.0], 60.0) == [(60.0, [16.0]), (120.0, [32.0]), (240.0, [64.0])]
    assert bench.step_groups([1.0, 4.0], 10.0) == [(10.0, [1.0, 4.0])]
