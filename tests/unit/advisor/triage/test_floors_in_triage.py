"""Triage states the physical floors whenever the model and the GPU are known (docs/triage.md)."""

from __future__ import annotations

import json
from pathlib import Path

from advisor.cli.main import main

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "vllm"


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
    assert rules[0] == "OP-5.4" and "2.8x the decode floor" in document["findings"][0]["title"]
    # The window names no request lengths; 60 % of the 415,792-token pool over 120 running is 2,079
    # tokens each, 36.8 GB of KV read per step beside 16.4 GB of weights: ITL p50 0.044 s is 2.8x that
    # 15.9 ms floor, not the 8.9x a weights-only floor made it (and no OP-5.13 "far above the floor").
    assert "OP-5.13" not in rules
    assert any(
        note.startswith("physical floor of a decode step at 120 running")
        and "120 x 2079 tokens" in note
        and "3.35 TB/s" in note
        and "vllm:kv_cache_usage_perc" in note
        for note in document["notes"]
    )


def test_with_only_metrics_the_model_is_the_one_vllm_names_in_its_labels(tmp_path: Path) -> None:
    """No log and no --server-args: vLLM's `model_name` label (Qwen/Qwen3-8B here) names the model,
    so the floors still have its size."""
    out = tmp_path / "triage.json"
    metrics = [str(FIXTURES / f"v0_15_itl_load_{side}.prom") for side in ("before", "after")]
    args = ["triage", "--metrics", metrics[0], "--metrics", metrics[1], "--metrics-interval", "10"]
    assert main([*args, "--gpu", "H100", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert any(n.startswith("physical floor of a decode step at 120 running") for n in document["notes"])


def test_without_a_gpu_there_is_no_floor_and_no_floor_rule(tmp_path: Path) -> None:
    document = _triage(tmp_path)
    assert "OP-5.13" not in [f["rule"] for f in document["findings"]]
    assert not any(note.startswith("physical floor") for note in document["notes"])


RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"
HOST = Path(__file__).resolve().parents[3] / "fixtures" / "host" / "epyc_2core.json"


def _triage_cpu(tmp_path: Path, situation: str, *extra: str) -> dict:
    """Real vLLM 0.32 on its CPU backend (tests/fixtures/vllm_cpu), its log and 8 s window."""
    out = tmp_path / f"{situation}.json"
    scrapes = [RECORDED / f"{situation}_{when}.prom" for when in ("before", "after")]
    windows = [word for scrape in scrapes for word in ("--metrics", str(scrape))]
    args = ["triage", "--logs", str(RECORDED / f"{situation}.log"), *windows, "--metrics-interval", "8"]
    assert main([*args, *extra, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_a_cpu_server_gets_its_floors_from_the_measured_host_at_the_cores_the_engine_is_bound_to(
    tmp_path: Path,
) -> None:
    """vLLM's CPU backend bound its engine to one core (`core ids=[0]` in the log), so the floor reads
    the probe's one-thread figures (27.2 GB/s on the recording box), not the two-core ones: SmolLM2's
    0.27 GB of bf16 weights plus 4 sequences' KV take 10.6 ms to read, and vLLM's 38 ms ITL p50 at 4
    streams is 3.6x that: most of each step goes to work outside the memory traffic."""
    profile = json.loads(HOST.read_text())
    one_core = next(f for f in profile["figures"] if f["threads"] == 1)
    document = _triage_cpu(tmp_path, "moderate", "--host-profile", str(HOST))
    hardware = document["facts"]["hardware"]
    assert hardware["memory_bandwidth_gbps"] == one_core["read_gbps"] and "1 bound core(s)" in hardware["gpu_name"]
    assert hardware["bf16_tflops"] * 1000 == max(one_core["bf16_gflops"], one_core["fp32_gflops"])
    [note] = [n for n in document["notes"] if n.startswith("physical floor of a decode step at 4 running")]
    assert f"/ {one_core['read_gbps']:.3g} GB/s" in note
    [finding] = [f for f in document["findings"] if f["rule"] == "OP-5.13"]
    assert "x the decode floor" in finding["title"] and "outside the memory traffic" in finding["title"]


def test_eager_mode_on_the_cpu_backend_is_named_as_uncompiled_not_as_cuda_graphs(tmp_path: Path) -> None:
    document = _triage_cpu(tmp_path, "preempting", "--host-profile", str(HOST))
    [finding] = [f for f in document["findings"] if f["rule"] == "OP-5.13"]
    assert "torch.compile" in finding["title"] and "CUDA graph" not in finding["title"]


def test_a_cpu_server_without_a_host_profile_shows_no_floor(tmp_path: Path) -> None:
    document = _triage_cpu(tmp_path, "moderate")
    assert document["facts"]["hardware"] is None
    assert not any(note.startswith("physical floor") for note in document["notes"])
