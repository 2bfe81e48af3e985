"""Physical floors (rules/catalog/floors.py) and the rules that read them (OP-5.13, OP-5.14, OP-5.1/5.4/5.5).

Each case is a measured window on a known model and GPU: latency under the generic targets yet
far above what the hardware needs gets a finding with its cause; latency over the targets that
is simply the arithmetic of the work gets none that proposes a flag.
"""

from __future__ import annotations

import pytest

from rules.catalog import floors
from rules.evaluate import evaluate
from rules.facts import (
    Facts,
    Hardware,
    LatencyPercentiles,
    LoadStep,
    LoadTestFacts,
    MemoryFacts,
    MetricWindow,
    Workload,
)
from rules.model import Severity
from tests.unit.rules.factories import (
    ITL_BUCKETS,
    TTFT_BUCKETS,
    a100_sxm,
    config,
    h100,
    histogram,
    live,
    llama8b,
    replicas_at_their_floor,
    snapshot,
)

WEIGHTS_GIB = 14.99  # Llama-3.1-8B bf16 weights as vLLM's log reports them
KV_PER_TOKEN = 131_072  # 2 x 32 layers x 8 KV heads x 128 x 2 bytes
H100_BYTES_PER_S = 3350e9
PROMPT_BUCKETS = (128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


def _l4(count: int = 1) -> Hardware:
    """The catalog's L4 (advisor/catalog/gpus.py): 300 GB/s, 121 bf16 TFLOPS, PCIe at 32 GB/s per direction."""
    return Hardware(
        gpu_name="L4",
        usable_gib=22.04,
        gpu_count=count,
        interconnect="pcie",
        interconnect_gbps=32.0,
        memory_bandwidth_gbps=300,
        bf16_tflops=121.0,
    )


def _on(facts: Facts, hardware: Hardware, tp: int = 1, **flags) -> Facts:
    facts.hardware = hardware
    facts.model = llama8b()
    facts.config = config(tensor_parallel_size=tp, **flags)
    facts.memory = MemoryFacts(weights_gib=WEIGHTS_GIB / tp, kv_bytes_per_token=KV_PER_TOKEN / tp, source="test")
    return facts


def _rules(facts: Facts) -> dict[str, list]:
    found: dict[str, list] = {}
    for finding in evaluate(facts).findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


def test_the_decode_floor_is_weights_plus_kv_over_bandwidth():
    facts = _on(live(running=4, itl={0.006: 1000}), h100())
    facts.workload = Workload(p50_input_tokens=1000, p50_output_tokens=200)
    floor = floors.decode_floor(facts)
    expected = (WEIGHTS_GIB * 2**30 + 4 * (1000 + 100) * KV_PER_TOKEN) / H100_BYTES_PER_S
    assert abs(floor.step_s - expected) < 1e-9
    assert floor.allreduce_s == 0 and floor.context_tokens == 1100
    assert "workload p50 input tokens" in floor.context_source


def test_tensor_parallel_adds_two_nccl_ring_all_reduces_per_layer():
    facts = _on(live(running=1), _l4(4), tp=4)
    facts.model.hidden_size = 4096
    floor = floors.decode_floor(facts)
    latency = (floors.NCCL_RING_BASE_US + 2 * 3 * floors.NCCL_RING_HOP_US["pcie"]) * 1e-6
    transfer = 2 * 3 / 4 * (1 * 4096 * 2) / 32e9
    assert abs(floor.allreduce_s - 64 * (latency + transfer)) < 1e-12
    assert floor.allreduces == 64


def test_decode_far_above_its_floor_under_the_itl_target_is_a_finding_with_its_cause():
    # 1 running, ITL ~38 ms: well under the 100 ms ITL target, yet 8x the 4.8 ms an H100 needs.
    facts = _on(live(running=1, itl={0.04: 5000}), h100())
    found = _rules(facts)
    assert "OP-5.5" not in found  # the fixed threshold sees nothing
    finding = found["OP-5.13"][0]
    assert finding.severity == Severity.MEDIUM
    assert "x the decode floor" in finding.title and "outside the memory traffic" in finding.title
    floor_evidence = [e for e in finding.evidence if e.name == "decode step floor"][0]
    assert "TB/s" in floor_evidence.description


def test_eager_mode_is_named_as_the_cause():
    facts = _on(live(running=1, itl={0.04: 5000}), h100(), enforce_eager=True)
    assert "--enforce-eager" in _rules(facts)["OP-5.13"][0].title


def test_tensor_parallel_over_pcie_is_named_and_replicas_proposed():
    # Four L4s, TP 4 over PCIe: floor ~12.5 ms per step (weights / 4 over 300 GB/s + 64 all-reduces); ITL ~90 ms.
    facts = _on(live(running=1, itl={0.09: 5000}), _l4(4), tp=4)
    facts.model.hidden_size = 4096
    facts.memory.total_gib = 22.04
    finding = _rules(facts)["OP-5.13"][0]
    assert "tensor parallel 4 over PCIe" in finding.title
    assert {c.flag for c in finding.changes} >= {"--tensor-parallel-size"}


def test_a_batch_decoding_near_its_floor_raises_no_physics_finding_even_over_the_target():
    # 64 running long-context sequences on one L4: the KV read alone is 64 x 4,000 tokens x 128 KiB = 33 GB,
    # so the floor is ~0.16 s per step; ITL p50 ~0.2 s is that physics, over the 0.1 s target.
    facts = _on(live(running=64, itl={0.2: 5000}), _l4(), max_num_batched_tokens=8192)
    facts.workload = Workload(p50_input_tokens=3000, p50_output_tokens=2000)
    found = _rules(facts)
    assert "OP-5.13" not in found
    itl = found["OP-5.4"][0]
    assert "x the decode floor: the batch's memory traffic, not the server" in itl.title
    assert itl.severity == Severity.MEDIUM and itl.changes == []  # no smaller prefill chunk: steps are physics


def _long_outputs(itl: dict[float, int]) -> Facts:
    """16 sequences generating 16,000-token answers to 2,000-token prompts on one L4, prompt budget 8192.

    Their contexts average 2,000 + 16,000 / 2 = 10,000 tokens, so a decode step reads the 16.1 GB of
    weights plus 16 x 10,000 x 128 KiB = 21.0 GB of KV: (16.1 + 21.0) GB / 300 GB/s = 0.124 s."""
    facts = _on(live(running=16, itl=itl), _l4(), max_num_batched_tokens=8192)
    facts.workload = Workload(p50_input_tokens=2000, p50_output_tokens=16_000)
    return facts


def test_long_outputs_decoding_at_their_floor_are_physics_not_a_flag():
    # Every token at ~0.15 s (p99 0.15 s over the 0.1 s target): 1.2x the 0.124 s the step must read.
    facts = _long_outputs({0.15: 5000})
    floor = floors.decode_floor(facts)
    expected = (WEIGHTS_GIB * 2**30 + 16 * 10_000 * KV_PER_TOKEN) / 300e9
    assert floor is not None and abs(floor.step_s - expected) < 1e-9
    found = _rules(facts)
    itl = found["OP-5.4"][0]
    assert itl.severity == Severity.MEDIUM and itl.changes == []
    assert "not the server" in itl.title and f"{0.15 / expected:.1f}x the decode floor" in itl.title
    assert "16 sequences' KV cache of about 10,000 tokens each" in itl.summary
    assert "OP-5.13" not in found


def test_the_same_long_outputs_with_a_tail_far_above_the_floor_keep_the_smaller_prefill_chunk():
    # The body at the floor, 2 % of tokens at ~0.45 s: p99 ~0.4 s is 3.3x the floor, so something beyond
    # the memory traffic stalls steps (8,192-token prefill chunks sharing them), and the rule's change stands.
    found = _rules(_long_outputs({0.15: 4900, 0.45: 100}))
    itl = found["OP-5.4"][0]
    assert itl.severity == Severity.HIGH and "not the server" not in itl.title
    assert [(c.flag, c.proposed) for c in itl.changes] == [("--max-num-batched-tokens", "2048")]


def test_a_lone_decode_at_its_floor_over_pcie_proposes_no_parallelism_change():
    # Two L4s, TP 2 over PCIe, one request with a 120,000-token context: per GPU 8.0 GB of weights plus
    # 7.9 GB of KV over 300 GB/s, and 64 all-reduces: a ~57 ms floor. ITL ~0.06 s is 1.1x that, over a
    # 50 ms target the user set; fewer GPUs would read twice the bytes each.
    facts = _on(live(running=1, itl={0.06: 5000}), _l4(2), tp=2)
    facts.model.hidden_size = 4096
    facts.memory.total_gib = 22.04
    facts.workload = Workload(p50_input_tokens=110_000, p50_output_tokens=20_000, itl_slo_s=0.05)
    found = _rules(facts)
    single = found["OP-5.5"][0]
    assert "what the memory bandwidth allows, not the server" in single.title and single.changes == []
    assert "OP-3.1" not in found  # the all-reduces are 0.4 ms of the step: PCIe is not what slows it
    # The same decode at 0.09 s (1.6x its floor) is slower than its traffic: TP over PCIe is named again.
    slower = live(running=1, itl={0.09: 5000})
    facts.window, facts.snapshot = slower.window, slower.snapshot
    found = _rules(facts)
    assert "not the server" not in found["OP-5.5"][0].title
    assert {c.flag for f in found["OP-3.1"] for c in f.changes} >= {"--tensor-parallel-size"}


def _long_prompts(ttft_s: float, prompt_tokens: int, hardware: Hardware) -> Facts:
    """A window of 50 requests with `prompt_tokens` prompts and `ttft_s` first tokens, nothing queued."""
    labels = {"model_name": "m", "engine": "0"}
    gauges = {"vllm:num_requests_running": 2, "vllm:num_requests_waiting": 0, "vllm:kv_cache_usage_perc": 0.5}
    before = snapshot(
        gauges,
        {"vllm:generation_tokens_total": 1e6},
        {
            "vllm:time_to_first_token_seconds": histogram({}, TTFT_BUCKETS, labels),
            "vllm:inter_token_latency_seconds": histogram({}, ITL_BUCKETS, labels),
            "vllm:request_prompt_tokens": histogram({}, PROMPT_BUCKETS, labels),
        },
        labels,
    )
    after = snapshot(
        gauges,
        {"vllm:generation_tokens_total": 1e6 + 4000},
        {
            "vllm:time_to_first_token_seconds": histogram({ttft_s: 50}, TTFT_BUCKETS, labels),
            "vllm:inter_token_latency_seconds": histogram({0.03: 4000}, ITL_BUCKETS, labels),
            "vllm:request_prompt_tokens": histogram({prompt_tokens: 50}, PROMPT_BUCKETS, labels),
        },
        labels,
    )
    facts = Facts(snapshot=after, window=MetricWindow.from_snapshots(before, after, 60.0))
    return _on(facts, hardware, max_num_batched_tokens=8192)


def test_long_prompts_at_their_compute_floor_are_physics_not_a_flag():
    # 32k-token prompts on an L4: 2 x 8 B x 32,768 / 121 TFLOPS = 4.3 s of arithmetic; TTFT ~5 s > the 2 s target.
    found = _rules(_long_prompts(5.0, 32_000, _l4()))
    ttft = found["OP-5.1"][0]
    assert "the prompt length, not the server" in ttft.title and "x the prefill compute floor" in ttft.title
    assert ttft.severity == Severity.MEDIUM and ttft.changes == []
    assert "OP-5.14" not in found


def test_a_prefill_far_slower_than_compute_allows_is_a_finding_with_no_queue():
    # 2,000-token prompts on an H100 need 32 ms of arithmetic plus a 5 ms step; TTFT ~0.4 s is 10x that,
    # under the 2 s target, with nothing waiting.
    hardware = h100().model_copy(update={"bf16_tflops": 989.0})
    found = _rules(_long_prompts(0.4, 2000, hardware))
    assert "OP-5.1" not in found
    finding = found["OP-5.14"][0]
    assert "x the prefill floor" in finding.title and "nothing queued" in finding.title


def test_without_request_lengths_the_kv_read_comes_from_the_caches_own_usage():
    # 64 running, no prompt or output lengths anywhere, the KV cache half full of a 400,000-token pool:
    # each sequence holds 0.5 x 400,000 / 64 = 3,125 tokens, so a step reads 16.1 GB of weights plus
    # 64 x 3,125 x 128 KiB = 26.2 GB of KV: 12.6 ms on an H100. ITL p50 ~18 ms is 1.4x that; counted
    # against the weights alone (4.8 ms) it read as 3.6x, a false "far above its floor".
    facts = _on(live(running=64, kv=0.5, itl={0.02: 5000}), h100(), num_gpu_blocks=25_000, block_size=16)
    floor = floors.decode_floor(facts)
    assert floor is not None and floor.context_tokens == pytest.approx(3125)
    assert "vllm:kv_cache_usage_perc" in floor.context_source
    expected = (WEIGHTS_GIB * 2**30 + 64 * 3125 * KV_PER_TOKEN) / H100_BYTES_PER_S
    assert floor.step_s == pytest.approx(expected)
    assert "OP-5.13" not in _rules(facts)


def test_no_floor_without_the_hardware():
    facts = live(running=1, itl={0.04: 5000})
    facts.model = llama8b()
    assert floors.decode_floor(facts) is None and "OP-5.13" not in _rules(facts)


def _ramp_step(offered: float, itl_p50: float, running_mean: float | None) -> LoadStep:
    return LoadStep(
        offered=offered,
        offered_unit="concurrency",
        itl_s=LatencyPercentiles(p50=itl_p50),
        server={"running_mean": running_mean} if running_mean is not None else {},
    )


def test_a_large_batch_whose_single_stream_step_is_as_slow_is_named_fixed_overhead_not_the_batch():
    # As measured on an H100 (BENCHMARKS.md, "On a GPU"): the bundled engine on an 8B shape decoded at
    # ITL p50 26 ms with one stream and 29-30 ms with 16-63 running; the floor is ~4.7 ms either way.
    # The window's histogram reads p50 0.038 s; the ramp's one-stream step 0.030 s is 79 % of it.
    facts = _on(live(running=63, itl={0.03: 5000}), h100())
    facts.loadtest = LoadTestFacts(steps=[_ramp_step(1, 0.03, 1.0), _ramp_step(64, 0.042, 24.0)])
    title = _rules(facts)["OP-5.13"][0].title
    assert "fixed per-step overhead" in title and "0.03 s" in title
    assert "per-sequence work" not in title


def test_a_large_batch_with_a_fast_single_stream_step_keeps_the_batch_as_the_cause():
    facts = _on(live(running=63, itl={0.03: 5000}), h100())
    facts.loadtest = LoadTestFacts(steps=[_ramp_step(1, 0.008, None), _ramp_step(64, 0.03, None)])
    assert "per-sequence work" in _rules(facts)["OP-5.13"][0].title
    facts.loadtest = None  # no ramp: the batch size alone decides, as before
    assert "per-sequence work" in _rules(facts)["OP-5.13"][0].title


def test_the_decode_floor_is_one_replicas_step_with_its_share_of_the_running_requests():
    # vLLM's gauges sum the data-parallel engines: 4 running over 2 replicas is a batch of 2 per step.
    floor = floors.decode_floor(replicas_at_their_floor(2, 4, 0.02))
    assert floor.batch == 2 and floor.tensor_parallel == 4


def test_replicas_decoding_at_their_floor_over_nvlink_are_regrouped_into_wider_ones():
    """Two TP-4 replicas, 2 sequences each at ~300 tokens of context: a step reads 35.3 GB of weights per GPU
    over 2.039 TB/s plus 160 all-reduces over NVLink, ~18 ms. ITL p99 ~25 ms is that physics, over a 20 ms
    target. One TP-8 replica running all 4 reads half the weights per GPU: ~10 ms, 56 % of today's."""
    facts = replicas_at_their_floor(2, 4, 0.02)
    itl = _rules(facts)["OP-5.4"][0]
    assert "not the server" in itl.title
    assert {c.flag: (c.current, c.proposed) for c in itl.changes} == {
        "--tensor-parallel-size": ("4", "8"),
        "--data-parallel-size": ("2", "1"),
    }
    floor = floors.decode_floor(facts)
    wider = floors.wider_replica(facts, floor)
    assert wider.floor.batch == 4 and wider.floor.allreduces == 160
    assert wider.floor.weight_bytes == pytest.approx(floor.weight_bytes / 2)
    assert wider.share == pytest.approx(0.56, abs=0.02)
    assert f"{wider.share:.0%} of TP 4's" in itl.changes[0].reason
    assert [e.name for e in itl.evidence][-1] == "decode floor at TP 8"


def test_replicas_whose_step_is_the_kv_read_are_not_regrouped():
    """400,000-token contexts: each replica's 2 sequences read 2 x 400,000 x 80 KiB = 65.5 GB of KV per GPU
    beside 35.3 GB of weights. A TP-8 replica runs all 4, so its KV per GPU is the same 65.5 GB; only the
    weights halve, and the floor falls by 17 %, not the 25 % a regrouping needs."""
    facts = replicas_at_their_floor(2, 4, 0.06, prompt=360_000, output=80_000)
    floor = floors.decode_floor(facts)
    assert floor.kv_bytes > floor.weight_bytes
    assert floors.wider_replica(facts, floor) is None
    assert all(c.flag != "--tensor-parallel-size" for f in _rules(facts).get("OP-5.4", []) for c in f.changes)


@pytest.mark.parametrize(
    ("replicas", "hardware", "why"),
    [
        (1, None, "one replica and no idle GPU: more GPUs are a purchase, not a flag"),
        (3, None, "three replicas do not pair up"),
        (2, _l4(8), "over PCIe the all-reduces go through host memory (OP-3.1 argues the other way)"),
    ],
)
def test_no_wider_replica_without_replicas_to_pair_over_a_fast_link(replicas: int, hardware, why: str):
    facts = replicas_at_their_floor(replicas, 2 * replicas, 0.02, hardware)
    floor = floors.decode_floor(facts)
    assert floor is not None
    assert floors.wider_replica(facts, floor) is None, why
    assert all(c.flag != "--tensor-parallel-size" for f in _rules(facts).get("OP-5.4", []) for c in f.changes), why


def test_a_lone_replica_at_its_floor_is_widened_onto_the_gpus_the_server_leaves_idle():
    """One TP-4 replica of Llama-3.1-70B on a host whose --gpus counts 8 A100-SXM: 4 sit idle. The replica's 2
    sequences at ~300 tokens read 35.3 GB of weights per GPU, ~18 ms; a TP-8 replica on all 8 runs the same 2
    sequences reading half the weights per GPU, ~10 ms. OP-5.4 proposes the TP alone (no replica to merge),
    its cost the 4 idle GPUs."""
    facts = replicas_at_their_floor(1, 2, 0.02, a100_sxm(8))
    floor = floors.decode_floor(facts)
    wider = floors.wider_replica(facts, floor)
    assert (wider.tensor_parallel, wider.replicas, wider.idle_gpus) == (8, 1, 4)
    assert wider.floor.batch == floor.batch == 2
    assert wider.floor.weight_bytes == pytest.approx(floor.weight_bytes / 2)
    assert wider.share < floors.WIDER_FLOOR_SHARE
    itl = _rules(facts)["OP-5.4"][0]
    assert {c.flag: (c.current, c.proposed) for c in itl.changes} == {"--tensor-parallel-size": ("4", "8")}
    assert "on 4 GPUs that --gpus counts and the server leaves idle" in itl.changes[0].reason
    assert itl.changes[0].cost.startswith("4 more GPUs (idle, of the 8 --gpus counts)")


def test_three_replicas_are_widened_only_when_the_idle_gpus_double_every_one():
    """Three TP-4 replicas cannot pair up; on 24 GPUs the 12 idle ones widen all three to TP 8, on 20 they
    cannot (three more TP-4 halves need 12)."""
    widened = replicas_at_their_floor(3, 6, 0.02, a100_sxm(24))
    wider = floors.wider_replica(widened, floors.decode_floor(widened))
    assert (wider.tensor_parallel, wider.replicas, wider.idle_gpus) == (8, 3, 12)
    short = replicas_at_their_floor(3, 6, 0.02, a100_sxm(20))
    assert floors.wider_replica(short, floors.decode_floor(short)) is None


def test_a_lone_decode_per_replica_at_its_floor_is_regrouped_too():
    # OP-5.5: one request per replica (2 running over 2 replicas), ITL p50 ~17 ms at an ~18 ms floor over a
    # 15 ms target: the wider replica runs both at ~10 ms.
    facts = replicas_at_their_floor(2, 2, 0.02)
    facts.workload.itl_slo_s = 0.015
    single = _rules(facts)["OP-5.5"][0]
    assert "not the server" in single.title
    assert {c.flag: c.proposed for c in single.changes} == {"--tensor-parallel-size": "8", "--data-parallel-size": "1"}


def test_tensor_parallel_over_pcie_on_data_parallel_replicas_keeps_every_gpu():
    # Two TP-4 replicas on H100 PCIe cards (8 GPUs), the 8B model fitting one: moving off TP gives 8 TP-1
    # replicas, not 4.
    facts = _on(live(running=2, itl={0.09: 5000}), h100(8, interconnect="pcie"), tp=4, data_parallel_size=2)
    facts.model.hidden_size = 4096
    facts.memory.total_gib = 79.18
    changes = {c.flag: (c.current, c.proposed) for found in _rules(facts).values() for c in found[0].changes}
    assert changes == {"--tensor-parallel-size": ("4", "1"), "--data-parallel-size": ("2", "8")}
