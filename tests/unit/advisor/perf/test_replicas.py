"""Replica counts chosen by the performance model: ceil(load in flight / safe operating point), with
figures the printed `servops predict` command reproduces, on real vLLM's and the bundled engine's
recorded ramps (tests/fixtures/*/queue_seqs1*, see tests/unit/advisor/perf/test_model_chosen_values.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from advisor.perf.replicas import REPLICAS_FLAG, size_replicas
from tests.unit.advisor.perf.recorded_queue import CASES, predict, triage


def _step(offered: float, ttft: float, itl: float, tokens: float) -> dict:
    return {"offered": offered, "ttft_s": {"p99": ttft}, "itl_s": {"p99": itl}, "output_tokens_per_s": tokens}


STEPS = [_step(1, 0.1, 0.02, 40), _step(2, 0.2, 0.03, 70), _step(4, 0.5, 0.05, 120), _step(8, 3.0, 0.09, 150)]


def test_ten_in_flight_over_a_safe_point_of_four_needs_three_replicas_each_sized_by_the_two_stream_step():
    sizing = size_replicas(10, STEPS, safe_point=4, relative_error=0.1)
    assert sizing.replicas == 3  # ceil(10 / 4)
    assert sizing.per_replica_step == 2  # 10 / 3 = 3.33 streams each: the largest step at or under it
    assert (sizing.ttft_p99_s, sizing.itl_p99_s, sizing.output_tokens_per_s) == (0.2, 0.03, 70)


def test_exactly_divisible_load_uses_the_safe_point_step_itself():
    sizing = size_replicas(8, STEPS, safe_point=4, relative_error=0.1)
    assert (sizing.replicas, sizing.per_replica_step, sizing.ttft_p99_s) == (2, 4, 0.5)


@pytest.mark.parametrize(("in_flight", "safe_point"), [(4, 4), (3, 4), (None, 4), (10, None), (0, 4)])
def test_no_replicas_when_one_carries_the_load_or_nothing_is_known(in_flight, safe_point):
    assert size_replicas(in_flight, STEPS, safe_point=safe_point, relative_error=0.1) is None


@pytest.mark.parametrize("engine", list(CASES))
def test_thirty_two_clients_get_the_models_replica_count_and_its_figures_reproduce(engine: str, tmp_path: Path):
    document = triage(CASES[engine], tmp_path / "triage.json", "--ttft-slo", "2", "--concurrency", "32")
    finding = next(f for f in document["findings"] if any(c["flag"] == REPLICAS_FLAG for c in f["changes"]))
    assert finding["rule"] == "OP-5.2"
    seqs = next(c for c in finding["changes"] if c["flag"] == "--max-num-seqs")
    replicas = next(c for c in finding["changes"] if c["flag"] == REPLICAS_FLAG)
    safe_after = seqs["predicted_effect"]["figures"]["safe_operating_point_after"]
    assert int(replicas["proposed"]) == math.ceil(32 / safe_after) > 1
    assert f"--max-num-seqs {seqs['proposed']}" in replicas["reason"]

    figures = replicas["predicted_effect"]["figures"]
    shown = predict(replicas["predicted_effect"]["command"], tmp_path / "shown.json")
    step = next(s for s in shown["steps"] if s["offered"] == figures["per_replica_offered"])
    assert figures["per_replica_offered"] <= 32 / int(replicas["proposed"])
    assert step["ttft_s"]["p99"] == pytest.approx(figures["ttft_p99_s_per_replica"], abs=1e-3)
    assert step["itl_s"]["p99"] == pytest.approx(figures["itl_p99_s_per_replica"], abs=1e-3)
    assert step["output_tokens_per_s"] == pytest.approx(figures["output_tokens_per_s_per_replica"], abs=1e-2)
    assert shown["safe_operating_point"]["offered"] == figures["safe_operating_point"] == safe_after


def test_clients_within_one_replicas_safe_point_get_no_replicas(tmp_path: Path):
    document = triage(CASES["vllm-0.32-cpu"], tmp_path / "triage.json", "--ttft-slo", "2", "--concurrency", "8")
    assert not [c for f in document["findings"] for c in f["changes"] if c["flag"] == REPLICAS_FLAG]


def test_when_no_step_meets_the_slo_the_count_is_not_guessed(tmp_path: Path):
    document = triage(CASES["vllm-0.32-cpu"], tmp_path / "triage.json", "--ttft-slo", "0.001", "--concurrency", "32")
    assert not [c for f in document["findings"] for c in f["changes"] if c["flag"] == REPLICAS_FLAG]
    assert any("replica count" in note and "ramp lower loads" in note for note in document["notes"])


CPU_CORPUS = Path(__file__).parents[3] / "fixtures" / "vllm_cpu"


def _triage_recorded(tmp_path: Path, window: str, interval_s: str) -> dict:
    from advisor.cli.main import main

    out = tmp_path / "triage.json"
    args = ["triage", "--logs", str(CPU_CORPUS / f"{window}.log"), "--metrics-interval", interval_s]
    for name in (f"{window}_before.prom", f"{window}_after.prom"):
        args += ["--metrics", str(CPU_CORPUS / name)]
    assert main([*args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_a_cpu_engines_replicas_are_servers_and_stay_out_of_the_proposed_command(tmp_path: Path):
    """Real vLLM's CPU backend saturated by 32 streams over a steady 30 s window (its fit is within 25 %):
    the model sizes the replicas that meet the default ITL target. Each needs its own cores, so on this
    backend they are servers like this one, and `--data-parallel-size 31` on a 2-core host never reaches
    the proposed command."""
    document = _triage_recorded(tmp_path, "saturated_steady", "30")
    replicas = [c for f in document["findings"] for c in f["changes"] if c["flag"] == REPLICAS_FLAG]
    assert replicas and "servers like this one" in replicas[0]["reason"]
    count = int(replicas[0]["proposed"])
    assert f"= {count} servers like this one" in replicas[0]["reason"]
    assert replicas[0]["cost"] == f"{count}x the machines of this server"
    assert replicas[0]["predicted_effect"]["figures"]["servers"] == count
    assert REPLICAS_FLAG not in (document.get("proposed_command") or "")


def test_a_data_parallel_cpu_servers_engines_count_in_its_servers(tmp_path: Path):
    """Real vLLM with two data-parallel engines on a 2-core host (one core each), 16 streams in the top
    step of a ramp. The model fits one engine's share of the window, so the count it sizes is of engines;
    this server already holds two, so N engines are ceil(N / 2) servers like it, not N (which is what
    the change said before the recording: twice the machines)."""
    document = _triage_recorded(tmp_path, "data_parallel_2", "10")
    replicas = [c for f in document["findings"] for c in f["changes"] if c["flag"] == REPLICAS_FLAG]
    assert replicas, [f["rule"] for f in document["findings"]]
    change = replicas[0]
    engines = int(change["proposed"])
    assert change["current"] == "2" and engines > 2
    servers = -(-engines // 2)
    assert f"= {engines} engines: {servers} servers like this one (2 engines each)" in change["reason"]
    assert change["cost"] == f"{servers}x the machines of this server"
    figures = change["predicted_effect"]["figures"]
    assert figures["replicas"] == engines and figures["in_flight"] == 16 and figures["servers"] == servers
    assert REPLICAS_FLAG + " 2" in document["current_command"] and REPLICAS_FLAG + " 2" in document["proposed_command"]
    # Checked against the recorded ramps: an engine of the pair held the 0.1 s ITL p99 at one stream each (the
    # pair's 2-stream step), and the lone engine did not at two (BENCHMARKS.md, "Two data-parallel vLLM engines").
    assert figures["per_replica_offered"] == 1
    pair = json.loads((CPU_CORPUS / "data_parallel_2_ramp.json").read_text())["steps"]
    lone = json.loads((CPU_CORPUS / "data_parallel_1_ramp.json").read_text())["steps"]
    assert pair[1]["offered"] == 2 and pair[1]["itl_s"]["p99"] <= 0.1
    assert lone[1]["offered"] == 2 and lone[1]["itl_s"]["p99"] > 0.1
