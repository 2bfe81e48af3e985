"""The recommended launch follows the runbook: precision, parallelism, envelope, free wins."""

from advisor.advise.plan import recommend
from advisor.advise.search import Workload
from advisor.catalog.gpus import gpu_from_memory, resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.memory.budget import LaunchConfig, estimate_memory

NO_PINS = frozenset()


def _plan(model, gpu, gpus, interconnect=None, given=None, pinned=NO_PINS, workload=None):
    given, workload = given or LaunchConfig(), workload or Workload()
    gpu_spec = resolve_gpu(gpu) if isinstance(gpu, str) else gpu
    return recommend(
        resolve_model(model), gpu_spec, gpus, interconnect or gpu_spec.interconnect, given, pinned, workload
    )


def _flags(plan):
    return {r.flag: r.value for r in plan.recommendations}


def test_70b_on_two_h100_goes_fp8_with_tp2_and_starts():
    plan = _plan("Llama-3.1-70B", "H100", 2)
    assert _flags(plan)["--quantization"] == "fp8"
    assert _flags(plan)["--tensor-parallel-size"] == "2"
    assert plan.memory.fits
    assert plan.command.startswith("vllm serve meta-llama/Llama-3.1-70B-Instruct ")
    assert all(r.reason for r in plan.recommendations)


def test_without_fp8_hardware_70b_stays_bf16_and_uses_pp_over_pcie():
    plan = _plan("Llama-3.1-70B", "A100-PCIe-80GB", 4)
    flags = _flags(plan)
    assert "--quantization" not in flags
    assert flags.get("--pipeline-parallel-size") in {"2", "4"} and "--tensor-parallel-size" not in flags
    assert plan.memory.fits


def test_same_model_on_nvlink_prefers_tensor_parallelism():
    plan = _plan("Llama-3.1-70B", "A100-SXM-80GB", 4)
    assert "--tensor-parallel-size" in _flags(plan) and "--pipeline-parallel-size" not in _flags(plan)


def test_a_model_that_fits_one_gpu_becomes_data_parallel_replicas():
    plan = _plan("Qwen2.5-7B", "L40S", 4)
    assert plan.data_parallel_size == 4 and _flags(plan)["--data-parallel-size"] == "4"


def test_pinned_flags_are_kept_and_said_so():
    plan = _plan(
        "Llama-3.1-8B",
        "H100",
        4,
        given=LaunchConfig(tensor_parallel_size=4),
        pinned=frozenset({"tensor_parallel_size"}),
    )
    assert plan.launch.tensor_parallel_size == 4
    assert next(r for r in plan.recommendations if r.flag == "--tensor-parallel-size").reason == "pinned by you"


def test_context_is_capped_to_what_fits_when_the_model_limit_does_not():
    plan = _plan("Llama-3.1-8B", "L4", 1, workload=Workload(p95_input_tokens=2000, p95_output_tokens=500))
    unfit = estimate_memory(resolve_model("Llama-3.1-8B"), resolve_gpu("L4"), LaunchConfig())
    assert not unfit.fits
    assert plan.memory.fits and plan.memory.max_model_len % 1024 == 0
    assert 2500 <= plan.memory.max_model_len < 131072


def test_max_num_seqs_is_capped_at_what_the_kv_pool_holds_at_p95_length():
    workload = Workload(p95_input_tokens=6000, p95_output_tokens=2000)
    plan = _plan(
        "Llama-3.1-8B",
        "L4",
        1,
        given=LaunchConfig(quantization="fp8"),
        pinned=frozenset({"quantization"}),
        workload=workload,
    )
    held = plan.memory.num_blocks * plan.memory.block_size // 8000
    assert 0.9 * held <= plan.launch.max_num_seqs <= held < 256


def test_high_prefix_reuse_pins_prefix_caching_low_reuse_does_not():
    high = _plan("Llama-3.1-8B", "H100", 1, workload=Workload(prefix_reuse=0.6))
    low = _plan("Llama-3.1-8B", "H100", 1, workload=Workload(prefix_reuse=0.1))
    assert "--enable-prefix-caching" in _flags(high) and "--enable-prefix-caching" in high.command
    assert "--enable-prefix-caching" not in _flags(low)


def test_long_prompts_raise_max_num_batched_tokens():
    plan = _plan("Llama-3.1-8B", "L4", 1, workload=Workload(p95_input_tokens=5000, p95_output_tokens=100))
    assert int(_flags(plan)["--max-num-batched-tokens"]) >= 5000


def test_short_kv_capacity_turns_on_fp8_kv_or_warns():
    workload = Workload(p95_input_tokens=3000, p95_output_tokens=1000, target_concurrency=200)
    plan = _plan("Llama-3.1-8B", "H100", 1, workload=workload)
    assert _flags(plan).get("--kv-cache-dtype") == "fp8" or any("short of" in w for w in plan.warnings)


def test_weights_over_75_percent_of_vram_warn():
    plan = _plan("Llama-3.1-8B", gpu_from_memory(19.0), 1, interconnect="pcie")
    assert any("> 75% of 19.00 GiB" in w for w in plan.warnings)


def test_context_cap_below_workload_p95_warns():
    plan = _plan(
        "Llama-3.1-8B",
        "H100",
        1,
        given=LaunchConfig(max_model_len=4096),
        pinned=frozenset({"max_model_len"}),
        workload=Workload(p95_input_tokens=5000, p95_output_tokens=1000),
    )
    assert any("below the workload's p95 request (6000 tokens)" in w for w in plan.warnings)


def test_tp_beyond_kv_heads_warns_about_replication():
    plan = _plan(
        "Qwen3-30B-A3B",
        "H100",
        8,
        given=LaunchConfig(tensor_parallel_size=8),
        pinned=frozenset({"tensor_parallel_size"}),
    )
    assert any("replicated" in w for w in plan.warnings)


def test_deepseek_v3_fits_one_node_of_h200_with_tp8():
    plan = _plan("DeepSeek-V3", "H200", 8)
    assert _flags(plan)["--tensor-parallel-size"] == "8" and plan.memory.fits
    assert "--quantization" not in _flags(plan)  # native FP8 checkpoint: nothing to add


def test_when_nothing_fits_the_warning_says_how_many_gpus_it_takes():
    plan = _plan("DeepSeek-V3", "H100", 8)
    assert not plan.memory.fits
    assert any("needs at least 16 (e.g. TP 8 × PP 2)" in w for w in plan.warnings)


def test_beyond_one_nvlink_board_tp_stays_at_8_and_pp_spans_boards():
    plan = _plan("DeepSeek-V3", "H100", 16)
    assert (plan.launch.tensor_parallel_size, plan.launch.pipeline_parallel_size) == (8, 2)
    assert plan.memory.fits
