"""The tensor-parallel size priced by the performance model (advisor/perf/parallel.py) and the layout of
the GPUs triage proposes with it (advisor/triage/layouts.py).

The fitted costs come from real vLLM 0.32's recorded ramp (tests/fixtures/vllm_cpu/queue_seqs1*); the
deployment beside it (Llama-3.1-8B on L40S over PCIe) is stated, since no GPU ramp was recorded: these
tests hold the choice to the model's own figures and to the command that prints them, not to a GPU
measurement (BENCHMARKS.md says so where the figures are)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from advisor.catalog.gpus import GpuSpec, gpu_from_memory, resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.cli.main import main
from advisor.collect.facts import server_config
from advisor.collect.server_args import parse_command
from advisor.errors import UserError
from advisor.memory.budget import LaunchConfig
from advisor.memory.kv_change import Deployment, launch_from_config
from advisor.perf.measured import measured_ramp, one_replica
from advisor.perf.parallel import cost_at_layout, parallel_terms
from advisor.perf.prior import roofline_cost
from advisor.perf.replicas import REPLICAS_FLAG
from advisor.perf.whatif import FlagChanges, ServerContext
from advisor.triage.forecast import ForecastRequest, forecast_findings, with_change
from advisor.triage.layouts import LayoutForecast, best_layout
from benchmarks import data_parallel_check, layouts_check, tp_transform_check
from benchmarks.fitting import fitted
from benchmarks.two_engines import behind_one_front
from loadtest.slo import parse_slos
from rules.catalog import floors
from rules.catalog.op3_parallelism import RULE_PCIE_TP
from rules.catalog.op5_latency import RULE_ITL_LOAD
from rules.facts import Hardware, MemoryFacts
from tests.unit.advisor.perf.recorded_queue import CASES, Rivals, predict
from tests.unit.rules.factories import a100_sxm, config, live, replicas_at_their_floor

TP = "--tensor-parallel-size"
PP = "--pipeline-parallel-size"
RAMP = Path(f"{CASES['vllm-0.32-cpu']}_ramp.json")
CPU_CORPUS = RAMP.parent
TERMS = ("base_s", "decode_seq_s", "prefill_token_s", "context_token_s")


def _deployment(tp: int, model: str = "Llama-3.1-8B", gpu: str = "L40S") -> Deployment:
    return Deployment(model=resolve_model(model), gpu=resolve_gpu(gpu), launch=LaunchConfig(tensor_parallel_size=tp))


@pytest.mark.parametrize(("start", "end"), [(2, 1), (1, 4), (4, 2)])
def test_moving_the_roofline_prior_between_tp_sizes_gives_the_prior_at_the_new_size(start: int, end: int):
    """The transform moves exactly the terms the roofline says TP moves: applied to the prior itself, it
    lands on the prior computed at the new size (weights per GPU, all-reduces, compute and KV split)."""
    model, gpu = resolve_model("Llama-3.1-8B"), resolve_gpu("L40S")
    deployment = _deployment(start)
    moved, note = cost_at_layout(
        roofline_cost(model, gpu, start), parallel_terms(deployment, start), parallel_terms(deployment, end)
    )
    target = roofline_cost(model, gpu, end)
    for term in TERMS:
        assert getattr(moved, term) == pytest.approx(getattr(target, term), rel=1e-4), term
    assert f"TP {start} → TP {end}" in note


@pytest.mark.parametrize(("start", "end"), [((1, 1), (1, 2)), ((2, 1), (1, 4)), ((1, 4), (2, 2)), ((2, 2), (4, 1))])
def test_moving_the_roofline_prior_between_pipelined_layouts_gives_the_prior_at_the_new_layout(
    start: tuple[int, int], end: tuple[int, int]
):
    """Stages as one batch passing through them: the same transform, moved between TP x PP layouts, lands on
    the prior computed at the new layout (every stage's weights read in turn, a send per boundary)."""
    model, gpu = resolve_model("Llama-3.1-8B"), resolve_gpu("L40S")
    deployment = Deployment(
        model=model, gpu=gpu, launch=LaunchConfig(tensor_parallel_size=start[0], pipeline_parallel_size=start[1])
    )
    moved, note = cost_at_layout(
        roofline_cost(model, gpu, start[0], pipeline_parallel=start[1]),
        parallel_terms(deployment, *start),
        parallel_terms(deployment, *end),
    )
    target = roofline_cost(model, gpu, end[0], pipeline_parallel=end[1])
    for term in TERMS:
        assert getattr(moved, term) == pytest.approx(getattr(target, term), rel=1e-3), term
    assert "stage sends" in note
    if end[1] > 1:
        assert f"{end[1]} stages are priced as one batch passing through them" in note


def test_a_stage_adds_capacity_and_sends_never_speed():
    """Llama-3.1-8B on 2 x L40S over PCIe: two stages read the whole model's weights per step in turn, as one
    GPU does (within the embedding's placement), add one send of hidden state and residual per step
    (3.6 + 1.0 µs, 2 x 4096 x 2 bytes over 32 GB/s per token), and hold more KV than TP 2 (no replicated
    KV heads either way, less rope cache and activation room)."""
    deployment = _deployment(1)
    one, two_stages, tp2 = (
        parallel_terms(deployment, 1),
        parallel_terms(deployment, 1, 2),
        parallel_terms(deployment, 2),
    )
    assert two_stages.weights_s == pytest.approx(one.weights_s, rel=0.02)
    assert two_stages.weights_s > 1.9 * tp2.weights_s
    assert two_stages.send_fixed_s == pytest.approx((3.6 + 1.0) * 1e-6)
    assert two_stages.send_row_s == pytest.approx(
        2 * 4096 * 2 / (resolve_gpu("L40S").interconnect_gbps_per_direction * 1e9)
    )
    assert two_stages.allreduce_fixed_s == two_stages.allreduce_row_s == 0.0
    assert two_stages.kv_bytes_per_token == one.kv_bytes_per_token
    assert two_stages.kv_cache_tokens > one.kv_cache_tokens


def test_the_transform_predicts_vllms_published_tp_4_and_8_steps_from_its_tp_2_steps_within_its_band():
    """vLLM issue #16300 (QwQ-32B, 8 x A100-80GB, vLLM 0.7.2's benchmark_latency; the figures and the source
    are in tests/fixtures/published/): fitted to the TP-2 steps, the TP-4 and TP-8 steps come out within
    the transform's stated uncertainty, where halving the step per doubling of GPUs misses by 30-64 %."""
    rows = tp_transform_check.check()
    assert {(r.batch, r.tensor_parallel) for r in rows} == {(1, 4), (1, 8), (16, 4), (16, 8)}
    for row in rows:
        assert abs(row.ratio - 1) <= row.relative_error, row
        assert abs(row.ratio - 1) < abs(row.naive_ratio - 1), row
    lone = {r.tensor_parallel: r.ratio for r in rows if r.batch == 1}
    assert lone[4] == pytest.approx(1.0, abs=0.05) and lone[8] == pytest.approx(1.0, abs=0.05)


def test_tp_2_to_1_over_pcie_doubles_the_weight_read_and_drops_the_all_reduces():
    """Llama-3.1-8B on L40S: 2 all-reduces x 32 layers x (3.6 + 2 x 1.0 µs) = 0.358 ms at TP 2, none at TP 1;
    the bf16 weights (about 15 GiB) read per GPU double."""
    deployment = _deployment(2)
    two, one = parallel_terms(deployment, 2), parallel_terms(deployment, 1)
    assert two.allreduce_fixed_s == pytest.approx(2 * 32 * (3.6 + 2.0) * 1e-6)
    assert one.allreduce_fixed_s == one.allreduce_row_s == 0.0
    assert one.weights_s == pytest.approx(2 * two.weights_s, rel=0.01)
    assert one.kv_bytes_per_token == 2 * two.kv_bytes_per_token
    assert one.kv_cache_tokens < two.kv_cache_tokens / 2  # one GPU holds the weights twice over, less room left
    assert two.allreduce_fixed_s + 0 * two.allreduce_row_s == floors.allreduce_s(2, 32, 4096, 0, "pcie", 48.0)


def test_a_fitted_step_keeps_what_tp_does_not_split():
    """The per-prompt-chunk cost and the time outside the engine are not split over GPUs."""
    deployment = _deployment(2)
    fitted = roofline_cost(resolve_model("Llama-3.1-8B"), resolve_gpu("L40S"), 2).model_copy(
        update={"prefill_seq_s": 0.004, "overhead_s": 0.2, "relative_error": 0.1}
    )
    moved, _ = cost_at_layout(fitted, parallel_terms(deployment, 2), parallel_terms(deployment, 1))
    assert (moved.prefill_seq_s, moved.overhead_s) == (0.004, 0.2)
    assert moved.relative_error > fitted.relative_error  # the roofline's ±50 % on the part it moved


def _layout(tp: int, replicas: int, safe: float, itl: float | None, error: float = 0.1) -> LayoutForecast:
    step = {"offered": 4, "ttft_s": {"p99": 0.5}, "itl_s": {"p99": itl}, "output_tokens_per_s": 10} if itl else None
    return LayoutForecast(
        tensor_parallel=tp,
        replicas=replicas,
        safe_point_per_replica=safe,
        fleet_safe_point=safe * replicas,
        share=4,
        step=step,
        relative_error=error,
    )


def test_the_layout_that_carries_more_wins_and_a_tie_needs_a_clear_itl_gain():
    current = _layout(2, 1, 8, 0.050)
    assert best_layout([current, _layout(1, 2, 5, 0.080)], current).tensor_parallel == 1  # 10 > 8
    assert best_layout([current, _layout(1, 2, 3, 0.010)], current) is current  # 6 < 8, however fast
    assert best_layout([current, _layout(1, 2, 4, 0.045)], current) is current  # same 8, inside ±10 %
    assert best_layout([current, _layout(1, 2, 4, 0.030)], current).tensor_parallel == 1  # same 8, clearly faster


def _pcie_finding(tp: int):
    """OP-3.1 itself on a window of slow decode steps from `tp` L40S over PCIe holding a 15 GiB model."""
    facts = live(running=1, itl={0.14: 2000})
    facts.config = config(tensor_parallel_size=tp)
    facts.hardware = Hardware(gpu_name="L40S", usable_gib=44.4, gpu_count=tp, interconnect="pcie")
    facts.memory = MemoryFacts(weights_gib=15 / tp)
    [finding] = RULE_PCIE_TP.evaluate(facts)
    assert {c.flag: c.proposed for c in finding.changes} == {TP: "1", REPLICAS_FLAG: str(tp)}  # the rule's layout
    return finding


def _forecast(
    finding, ramp: Path, server_args: str, model: str, gpu: GpuSpec, slo: str, in_flight: float, gpus: int | None = None
) -> tuple:
    """Triage's forecast of `finding` calibrated on `ramp`, for `model` on `gpu` launched with `server_args`
    (`gpus`: the host's GPUs, as --gpus gives them)."""
    command = parse_command(server_args)
    deployment = Deployment(
        model=resolve_model(model), gpu=gpu, launch=launch_from_config(server_config(command, [], None))
    )
    server = ServerContext(command=command, engine="vllm-cuda", deployment=deployment)
    request = ForecastRequest.for_document(
        json.loads(ramp.read_text()),
        ramp.name,
        server,
        parse_slos(slo),
        ramp_path=str(ramp),
        in_flight=in_flight,
        gpus=gpus,
    )
    valued = forecast_findings([finding], request)
    [finding] = valued.findings
    return finding, valued.rejected, valued.notes


def _triage_layout(tp: int, slo: str, in_flight: float, gpu: GpuSpec | None = None, extra: str = "") -> tuple:
    server_args = f"-tp {tp} --max-num-seqs 1 {extra}"
    return _forecast(_pcie_finding(tp), RAMP, server_args, "Llama-3.1-8B", gpu or resolve_gpu("L40S"), slo, in_flight)


def test_the_layout_of_four_pcie_gpus_is_the_one_the_model_predicts_to_carry_most_and_its_figures_reproduce(
    tmp_path: Path,
):
    finding, rejected, _ = _triage_layout(4, "ttft_p99=2s", 16)
    lead = finding.changes[0]
    figures = lead.predicted_effect.figures
    proposed = {c.flag: c.proposed for c in finding.changes}
    chosen = (int(proposed.get(TP, 4)), int(proposed.get(PP, 1)))
    assert (figures["tensor_parallel_after"], figures["pipeline_parallel_after"]) == chosen
    assert "every TP x PP layout of the 4 GPUs weighed" in lead.reason
    assert int(proposed.get(REPLICAS_FLAG, 1)) * chosen[0] * chosen[1] == 4

    # Every layout of the 4 GPUs, asked of the printed command: none carries more within the SLOs.
    command = lead.predicted_effect.command
    rivals = Rivals(command)
    fleets = {}
    for layout in ((1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (4, 1)):
        try:
            shown = json.loads(
                rivals.forecaster.predict(
                    FlagChanges.parse([f"{TP} {layout[0]}", f"{PP} {layout[1]}"])
                ).model_dump_json()
            )
        except UserError:  # a layout that does not start carries nothing
            fleets[layout] = 0
            continue
        safe = (shown["safe_operating_point"] or {}).get("offered") or 0
        fleets[layout] = 4 // (layout[0] * layout[1]) * safe
    assert fleets[chosen] == max(fleets.values()) == figures["fleet_safe_operating_point_after"]
    assert figures["fleet_safe_operating_point_before"] == fleets[(4, 1)]

    # The printed command itself gives one replica's figures at its share of the 16 in flight.
    shown = predict(command, tmp_path / "shown.json")
    step = next(s for s in shown["steps"] if s["offered"] == figures["per_replica_offered"])
    assert figures["per_replica_offered"] <= 16 / (4 // (chosen[0] * chosen[1]))
    assert step["itl_s"]["p99"] == pytest.approx(figures["itl_p99_s_per_replica"], abs=1e-3)
    assert step["ttft_s"]["p99"] == pytest.approx(figures["ttft_p99_s_per_replica"], abs=1e-3)
    assert step["output_tokens_per_s"] == pytest.approx(figures["output_tokens_per_s_per_replica"], abs=1e-2)
    assert any(f"→ TP {chosen[0]}" in n for n in shown["notes"])
    assert not rejected


def test_a_layout_that_misses_a_tight_itl_target_is_rejected_with_its_figures(tmp_path: Path):
    """ITL p99 <= 50 ms (46 ms replayed at TP 2, its gaps spread as the ramp measured): one L40S reads the 8B
    weights twice as long per step as two do, and the model predicts no load step of a TP-1 replica within
    it, so the rule's TP 1 is listed as rejected, with the command whose prediction shows it."""
    finding, rejected, _ = _triage_layout(2, "itl_p99=50ms", 8)
    assert not any(c.flag in (TP, REPLICAS_FLAG) for c in finding.changes)
    (rejection,) = rejected
    assert rejection.change.flag == TP and rejection.change.proposed == "1"
    assert "the current layout carries most" in rejection.reason
    assert "TP 1 x 2 replica(s): no load step within the SLOs" in rejection.reason
    shown = predict(rejection.command, tmp_path / "tp1.json")
    assert shown["safe_operating_point"] is None
    assert shown["baseline"]["safe_operating_point"]["offered"] >= 1


def test_a_gpu_known_only_by_its_size_leaves_the_rules_layout_with_the_reason():
    """--gpu-memory-gib gives no memory bandwidth, so no layout can be priced: the rule's TP 1 stands, unjudged."""
    finding, rejected, notes = _triage_layout(2, "ttft_p99=2s", 8, gpu=gpu_from_memory(44.39))
    assert {c.flag: c.proposed for c in finding.changes} == {TP: "1", REPLICAS_FLAG: "2"}
    assert not rejected
    assert any("the rule's layout stands, unpriced" in n and "no memory bandwidth" in n for n in notes), notes


def test_a_pipelined_server_has_every_layout_of_its_gpus_weighed_stages_included(tmp_path: Path):
    """TP 2 x PP 2 over PCIe (4 GPUs, one replica) at 8 in flight, TTFT p99 <= 2 s: the stages are priced as
    one batch passing through them, so the model weighs all six layouts of the 4 GPUs. Four TP-1 replicas
    carry 4 within the SLOs against the pipelined replica's 2; the changes drop the stages, the printed
    command asks for both sizes and gives the chosen replica's figures."""
    finding, rejected, _ = _triage_layout(2, "ttft_p99=2s", 8, extra="-pp 2")
    proposed = {c.flag: (c.current, c.proposed) for c in finding.changes}
    assert proposed == {TP: ("2", "1"), PP: ("2", "1"), REPLICAS_FLAG: ("1", "4")}
    assert not rejected
    lead = finding.changes[0]
    figures = lead.predicted_effect.figures
    assert (figures["fleet_safe_operating_point_before"], figures["fleet_safe_operating_point_after"]) == (2, 4)
    for layout in ("TP 1 x PP 2 x 2 replica(s)", "TP 1 x PP 4 x 1 replica(s)", "TP 2 x 2 replica(s)", "TP 4 x 1"):
        assert layout in lead.predicted_effect.text
    assert lead.predicted_effect.text.startswith("TP 2 x PP 2 x 1 replica(s)")
    command = lead.predicted_effect.command
    assert "--change '--tensor-parallel-size 1' --change '--pipeline-parallel-size 1'" in command
    shown = predict(command, tmp_path / "tp1.json")
    assert shown["safe_operating_point"]["offered"] == figures["safe_operating_point_per_replica_after"]
    assert any("TP 2 x PP 2 → TP 1:" in n for n in shown["notes"])


def test_the_rules_pipeline_for_a_model_one_gpu_cannot_hold_is_weighed_and_a_layout_that_cannot_start_is_not_proposed():
    """Llama-3.1-70B on 4 x L40S over PCIe at TP 4: one GPU cannot hold it, so OP-3.1 proposes four pipeline
    stages instead. At vLLM's default length (the model's 131,072 tokens) the memory model predicts TP 1 x
    PP 4 does not start (the stage holding the embedding has no room for one request's KV), so the model
    chooses among the layouts it can price: the current one carries most, and both of the rule's changes are
    listed as rejected with the reason, not proposed."""
    facts = live(running=1, itl={0.14: 2000})
    facts.config = config(tensor_parallel_size=4)
    facts.hardware = Hardware(gpu_name="L40S", usable_gib=44.4, gpu_count=4, interconnect="pcie")
    facts.memory = MemoryFacts(weights_gib=131 / 4)
    [finding] = RULE_PCIE_TP.evaluate(facts)
    assert {c.flag: c.proposed for c in finding.changes} == {PP: "4", TP: "1"}
    finding, rejected, _ = _forecast(
        finding, RAMP, "-tp 4 --max-num-seqs 1", "Llama-3.1-70B", resolve_gpu("L40S"), "itl_p99=200ms", 8
    )
    assert not any(c.flag in (TP, PP, REPLICAS_FLAG) for c in finding.changes)
    assert {(r.change.flag, r.change.proposed) for r in rejected} == {(TP, "1"), (PP, "4")}
    for rejection in rejected:
        assert "the performance model predicts the current layout carries most: TP 4 x 1 replica(s)" in rejection.reason
        assert "the rule's TP 1 x PP 4: not priced" in rejection.reason and "does not start" in rejection.reason
        assert rejection.command is None


def test_triage_of_a_tp_over_pcie_window_weighs_the_layouts_and_prints_the_command(tmp_path: Path):
    """Through the CLI: a window of slow decode steps on TP 2 over PCIe (OP-3.1) with the recorded ramp to
    calibrate on. At 16 in flight and a 2 s TTFT p99 target two TP-1 replicas carry what one TP-2 replica
    does (1 each against 2), and their ITL is not clearly lower, so the rule's TP 1 is rejected; the
    printed command gives the TP-1 replica's safe point the reason quotes."""
    fixtures = Path(__file__).resolve().parents[3] / "fixtures" / "vllm"
    out = tmp_path / "triage.json"
    args = [
        "triage",
        *("--metrics", str(fixtures / "v0_33_tp_pcie_before.prom")),
        *("--metrics", str(fixtures / "v0_33_tp_pcie_after.prom")),
        *("--metrics-interval", "10"),
        *("--server-args", "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --max-num-seqs 1"),
        *("--gpu", "L40S", "--ramp", str(RAMP), "--concurrency", "16", "--ttft-slo", "2", "--json", str(out)),
    ]
    assert main(args) == 0
    document = json.loads(out.read_text())
    op31 = next(f for f in document["findings"] if f["rule"] == "OP-3.1")
    assert not any(c["flag"] == TP for c in op31["changes"])
    (rejection,) = [r for r in document["rejected_changes"] if r["change"]["flag"] == TP]
    assert "the current layout carries most" in rejection["reason"]
    assert "--model Llama-3.1-8B --gpu L40S" in rejection["command"]
    shown = predict(rejection["command"], tmp_path / "tp1.json")
    per_replica = shown["safe_operating_point"]["offered"]
    assert (
        f"TP 1 x 2 replica(s): {2 * per_replica:g} requests within the SLOs ({per_replica:g} per replica)"
        in (rejection["reason"])
    )
    assert 2 * per_replica <= shown["baseline"]["safe_operating_point"]["offered"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "needs the model and the GPU; pass --model"),
        (["--model", "Llama-3.1-8B"], "--model and --gpu go together"),
        (["--model", "Llama-3.1-8B", "--gpu", "L40S", "--engine", "vllm-cpu"], "CPU backend"),
    ],
)
def test_a_tp_change_without_what_prices_it_is_one_line_exit_2(extra: list[str], message: str, capsys, tmp_path: Path):
    args = ["predict", "--ramp", str(RAMP), "--server-args", "--tensor-parallel-size 2", "--change", f"{TP} 1"]
    engine = [] if "--engine" in extra else ["--engine", "vllm-cuda"]
    assert main([*args, *engine, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize(
    ("model", "gpu", "tp", "message"),
    [
        ("Llama-3.1-8B", "L40S", "3", "vLLM refuses this launch for Llama-3.1-8B at start-up (Total number of"),
        ("Llama-3.1-70B", "L40S", "1", "does not start"),
    ],
)
def test_a_tp_size_vllm_refuses_or_that_does_not_start_is_one_line_exit_2(model, gpu, tp, message, capsys):
    args = ["predict", "--ramp", str(RAMP), "--server-args", "--tensor-parallel-size 4", "--engine", "vllm-cuda"]
    assert main([*args, "--model", model, "--gpu", gpu, "--change", f"{TP} {tp}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_with_change_swaps_the_tp_value_of_a_layout_command():
    command = (
        "servops predict --ramp r.json --server-args '--tensor-parallel-size 4' --model Llama-3.1-8B --gpu L40S "
        "--change '--tensor-parallel-size 1'"
    )
    assert "--change '--tensor-parallel-size 2'" in with_change(command, f"{TP} 2")


def test_a_ramp_of_two_data_parallel_engines_is_fitted_as_one_engines_share():
    """vLLM sums its engines' gauges and the clients see both engines' tokens: fitted as one engine's share,
    the recorded ramp as two engines behind one front end (benchmarks/two_engines.py; stated) gives the
    one-engine fit and replay back. The next test meets a real pair of engines."""
    recorded = json.loads(RAMP.read_text())
    one = fitted(recorded, RAMP.name, "--max-num-seqs 1", engine="vllm-cuda")
    doubled = behind_one_front(recorded)
    two = fitted(doubled, RAMP.name, "--max-num-seqs 1 --data-parallel-size 2", engine="vllm-cuda")
    assert two.ramp.plan.levels == one.ramp.plan.levels == [1, 2, 4, 8, 16]
    for term in (*TERMS, "relative_error"):
        assert getattr(two.cost, term) == pytest.approx(getattr(one.cost, term), rel=1e-6), term
    assert [s.itl_s.p99 for s in two.baseline.steps] == pytest.approx([s.itl_s.p99 for s in one.baseline.steps])
    assert any("the ramp measured 2 engines together" in n for n in two.notes)
    # A step of fewer streams than engines leaves engines idle: 1 stream over 2 is one engine with 1.
    halves = one_replica(measured_ramp(recorded, "r"), 2)
    assert halves.plan.levels == [1, 1, 2, 4, 8]
    assert halves.steps[0].output_tokens_per_s == recorded["steps"][0]["output_tokens_per_s"]
    assert halves.steps[1].output_tokens_per_s == pytest.approx(recorded["steps"][1]["output_tokens_per_s"] / 2)
    # More engines than streams at every level: each busy engine has one stream, and no step loses its requests.
    spread = one_replica(measured_ramp(recorded, "r"), 32)
    assert spread.plan.levels == [1] * 5 and len(spread.usable_steps) == len(halves.usable_steps) == 5


@pytest.mark.parametrize(("one", "two"), [("data_parallel_1", "data_parallel_2"), ("layout_1", "layout_dp2")])
def test_a_real_two_engine_vllm_read_as_one_engines_share_reproduces_a_lone_engine(one: str, two: str):
    """Real vLLM 0.32 on a 2-core host, the same ramp (1-16 streams) against one engine and against
    `--data-parallel-size 2` (tests/fixtures/vllm_cpu/record.py --only data_parallel). Fitted on the
    two-engine ramp as one engine's share, the model replays the lone engine's measured throughput at
    each per-engine load within its stated error (median; 1.00-1.14 at the four loads), and each engine
    of the pair ran 0.75-0.88 of a lone one: the two engines took both cores, which the lone engine
    shared only with the front end and the client. The same again compiled (the layouts recording):
    1.03-1.17 and 0.80-0.88. BENCHMARKS.md, "Two data-parallel vLLM engines"."""
    result = data_parallel_check.compare(
        json.loads((CPU_CORPUS / f"{one}_ramp.json").read_text()),
        json.loads((CPU_CORPUS / f"{two}_ramp.json").read_text()),
        engines=2,
    )
    error = result["fits"]["n_engines"]["cost"]["relative_error"]
    back = [pair["lone_measured/read_back"]["output_tokens_per_s"] for pair in result["read_back"]]
    assert [pair["per_engine"] for pair in result["read_back"]] == [1, 2, 4, 8]
    assert abs(statistics.median(back) - 1) <= error
    assert all(abs(ratio - 1) <= 1.5 * error for ratio in back), back
    shared = [row["measured/stated"]["output_tokens_per_s"] for row in result["rows"] if "stated" in row]
    assert len(shared) == 4 and all(0.7 <= ratio < 1 for ratio in shared), shared


def test_two_real_pipeline_stages_carry_no_more_than_one_engine_on_the_same_host():
    """Why a pipelined ramp is fitted as one engine and pipeline layouts stay unpriced: real vLLM 0.32
    (CPU, compiled) with two stages on two cores, against one engine on one core, the same 1-16 stream
    ramp (record.py --only layouts): 0.72-0.87 of its tok/s at every level, each token 8-21 % slower;
    two data-parallel engines on the same cores, up to 1.38x. BENCHMARKS.md, "Layouts of two cores"."""
    layouts = [
        ("one", "layout_1", ""),
        ("dp", "layout_dp2", "--data-parallel-size 2"),
        ("pp", "layout_pp2", "--pipeline-parallel-size 2"),
    ]
    result = layouts_check.compare(
        [(label, json.loads((CPU_CORPUS / f"{name}_ramp.json").read_text()), args) for label, name, args in layouts]
    )
    pipeline = [row["ratio"]["output_tokens_per_s"] for row in result["layouts"]["pp"]["rows"]]
    replicas = [row["ratio"]["output_tokens_per_s"] for row in result["layouts"]["dp"]["rows"]]
    assert len(pipeline) == len(replicas) == 5
    assert max(pipeline) < 1 and max(replicas) > 1.25 and replicas[-1] > pipeline[-1]
    assert result["layouts"]["pp"]["fit_rms"] <= 0.25  # fitted as one engine, within the 25 % the model may use


def _replicas_at_floor_triage(tmp_path: Path, slo: str) -> tuple:
    """OP-5.4 on two TP-4 replicas of Llama-3.1-70B on A100-SXM decoding at their floor (the rule's own
    finding, tests/unit/rules/test_floors.py), calibrated on the two-engine ramp, 16 in flight."""
    ramp = tmp_path / "two_engines_ramp.json"
    ramp.write_text(json.dumps(behind_one_front(json.loads(RAMP.read_text()))))
    [finding] = RULE_ITL_LOAD.evaluate(replicas_at_their_floor(2, 4, 0.02))
    assert {c.flag: c.proposed for c in finding.changes} == {TP: "8", REPLICAS_FLAG: "1"}  # the rule's layout
    server_args = "-tp 4 --data-parallel-size 2 --max-num-seqs 1"
    return _forecast(finding, ramp, server_args, "Llama-3.1-70B", resolve_gpu("A100-SXM-80GB"), slo, 16)


def test_replicas_at_their_floor_merge_into_the_wider_replica_when_the_model_predicts_it_carries_more(
    tmp_path: Path,
):
    """ITL p99 <= 40 ms: a TP-4 replica's step (~46 ms p99 replayed, 35 ms at TP 8) misses it at every load, a TP-8 one
    reads half the weights per GPU and meets it, so the fleet carries more as one TP-8 replica; the printed
    command gives the TP-8 replica's figures."""
    finding, rejected, _ = _replicas_at_floor_triage(tmp_path, "itl_p99=40ms")
    assert not rejected
    tp_change = next(c for c in finding.changes if c.flag == TP)
    figures = tp_change.predicted_effect.figures
    assert (tp_change.proposed, figures["replicas_after"]) == ("8", 1)
    assert "the layout the performance model predicts to carry most" in tp_change.reason
    assert figures["fleet_safe_operating_point_before"] == 0
    assert figures["fleet_safe_operating_point_after"] > 0
    assert figures["itl_p99_s_per_replica"] <= 0.040 < figures["itl_p99_s_per_replica_before"]
    assert "--data-parallel-size 2" in tp_change.predicted_effect.command
    shown = predict(tp_change.predicted_effect.command, tmp_path / "tp8.json")
    assert shown["safe_operating_point"]["offered"] == figures["safe_operating_point_per_replica_after"]
    step = next(s for s in shown["steps"] if s["offered"] == figures["per_replica_offered"])
    assert step["itl_s"]["p99"] == pytest.approx(figures["itl_p99_s_per_replica"], abs=1e-3)
    assert shown["baseline"]["safe_operating_point"] is None
    assert any("one TP 8 replica's" in n and "keeps --data-parallel-size 2 as ramped" in n for n in shown["notes"])


def test_replicas_at_their_floor_stay_when_the_model_predicts_they_carry_most(tmp_path: Path):
    """ITL p99 <= 50 ms: both layouts meet it at every load the ramp replays, and two TP-4 replicas carry
    twice what one TP-8 replica does, so the rule's regrouping is rejected with both layouts' figures."""
    finding, rejected, _ = _replicas_at_floor_triage(tmp_path, "itl_p99=50ms")
    assert not any(c.flag in (TP, REPLICAS_FLAG) for c in finding.changes)
    (rejection,) = rejected
    assert rejection.change.proposed == "8" and "the current layout carries most" in rejection.reason
    assert "TP 8 x 1 replica(s)" in rejection.reason


def test_a_lone_replica_at_its_floor_is_widened_onto_idle_gpus_when_the_model_predicts_it_carries_more(
    tmp_path: Path,
):
    """One TP-4 replica of Llama-3.1-70B on A100-SXM at its floor, on a host of 8 (--gpus 8): OP-5.4 proposes
    TP 8 alone onto the 4 idle GPUs. Under ITL p99 <= 40 ms the TP-4 replica meets no load step (45 ms
    replayed) and a TP-8 one meets them all (34 ms), so among every layout of the 8 GPUs the model keeps
    TP 8 x 1; the current layout is priced as it runs, on its 4 GPUs, and the command prints the figures."""
    [finding] = RULE_ITL_LOAD.evaluate(replicas_at_their_floor(1, 2, 0.02, a100_sxm(8)))
    assert {c.flag: c.proposed for c in finding.changes} == {TP: "8"}  # the rule's, onto the idle GPUs
    finding, rejected, _ = _forecast(
        finding, RAMP, "-tp 4 --max-num-seqs 1", "Llama-3.1-70B", resolve_gpu("A100-SXM-80GB"), "itl_p99=40ms", 16, 8
    )
    assert not rejected
    assert {c.flag: (c.current, c.proposed) for c in finding.changes} == {TP: ("4", "8")}
    lead = finding.changes[0]
    figures = lead.predicted_effect.figures
    assert "every TP x PP layout of the 8 GPUs weighed" in lead.reason
    assert lead.predicted_effect.text.startswith("TP 4 x 1 replica(s): no load step within the SLOs")
    assert "TP 4 x 2 replica(s)" in lead.predicted_effect.text  # the same layout on all 8, weighed too
    assert (figures["fleet_safe_operating_point_before"], figures["replicas_after"]) == (0, 1)
    assert figures["itl_p99_s_per_replica"] <= 0.040
    shown = predict(lead.predicted_effect.command, tmp_path / "tp8.json")
    assert shown["safe_operating_point"]["offered"] == figures["safe_operating_point_per_replica_after"]


def test_without_idle_gpus_a_lone_replica_at_its_floor_keeps_its_layout():
    """The same replica on a host of 4: no GPU is idle, so OP-5.4 proposes no TP and no layout is weighed."""
    [finding] = RULE_ITL_LOAD.evaluate(replicas_at_their_floor(1, 2, 0.02))
    assert not any(c.flag == TP for c in finding.changes)
