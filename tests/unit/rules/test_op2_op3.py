"""OP-2 (quantization) and OP-3 (parallelism): memory share, KV capacity, FP8 support, PCIe TP, rank failures."""

from advisor.collect.logs import parse_lines
from rules.catalog import op2_quantization as op2
from rules.catalog import op3_parallelism as op3
from rules.events import LogEventKind as K
from rules.facts import Facts, Hardware, MemoryFacts, Workload
from tests.unit.rules.factories import config, event, h100, live


def test_weights_over_75_percent_of_the_gpu_propose_fp8_on_fp8_hardware():
    facts = Facts(hardware=h100(count=1), memory=MemoryFacts(total_gib=79.18, weights_gib=67.72))
    [finding] = op2.RULE_WEIGHTS.evaluate(facts)
    assert finding.evidence[0].value == round(67.72 / 79.18, 3) and finding.evidence[0].threshold == 0.75
    assert [(c.flag, c.proposed, c.safety) for c in finding.changes] == [("--quantization", "fp8", "unsafe")]


def test_weights_over_75_percent_on_ampere_propose_tensor_parallel_instead():
    ampere = Hardware(gpu_name="A100-SXM-80GB", usable_gib=79.25, gpu_count=2, fp8_supported=False)
    facts = Facts(hardware=ampere, memory=MemoryFacts(total_gib=79.25, weights_gib=65.0))
    [finding] = op2.RULE_WEIGHTS.evaluate(facts)
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--tensor-parallel-size", "2")]


def test_weights_under_75_percent_are_fine():
    assert (
        op2.RULE_WEIGHTS.evaluate(Facts(hardware=h100(), memory=MemoryFacts(total_gib=79.18, weights_gib=15.0))) == []
    )


def test_kv_cache_too_small_for_target_concurrency_proposes_fp8_kv():
    facts = Facts(
        memory=MemoryFacts(kv_cache_tokens=162_704),
        workload=Workload(p95_input_tokens=7000, p95_output_tokens=1000, target_concurrency=64),
    )
    [finding] = op2.RULE_KV_CAPACITY.evaluate(facts)
    assert finding.evidence[0].value == round(162_704 / 8000, 1) and finding.evidence[0].threshold == 64
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--kv-cache-dtype", "fp8")]


def test_kv_cache_large_enough_for_the_target_is_fine():
    facts = Facts(
        memory=MemoryFacts(kv_cache_tokens=457_900),
        workload=Workload(p95_input_tokens=3000, p95_output_tokens=600, target_concurrency=32),
    )
    assert op2.RULE_KV_CAPACITY.evaluate(facts) == []


def test_fp8_on_a_gpu_without_fp8_compute_is_a_low_note():
    facts = Facts(config=config(quantization="fp8"), hardware=Hardware(gpu_name="A100-SXM-80GB", fp8_supported=False))
    [finding] = op2.RULE_FP8_HARDWARE.evaluate(facts)
    assert finding.severity.value == "low"
    assert op2.RULE_FP8_HARDWARE.evaluate(Facts(config=config(quantization="fp8"), hardware=h100())) == []


def test_tp_over_pcie_with_slow_itl_moves_a_small_model_to_replicas():
    facts = live(running=1, itl={0.14: 2000})
    facts.config = config(tensor_parallel_size=2)
    facts.hardware = Hardware(gpu_name="L40S", usable_gib=44.4, gpu_count=2, interconnect="pcie")
    facts.memory = MemoryFacts(weights_gib=7.5)  # per GPU at TP=2: a 15 GiB model
    [finding] = op3.RULE_PCIE_TP.evaluate(facts)
    assert {c.flag: c.proposed for c in finding.changes} == {"--tensor-parallel-size": "1", "--data-parallel-size": "2"}
    itl = finding.evidence[-1]
    assert itl.threshold == 0.1 and itl.value > 0.1


def test_tp_over_pcie_for_a_model_too_big_for_one_gpu_proposes_pipeline_parallel():
    facts = live(running=1, itl={0.14: 2000})
    facts.config = config(tensor_parallel_size=2)
    facts.hardware = Hardware(gpu_name="L40S", usable_gib=44.4, gpu_count=2, interconnect="pcie")
    facts.memory = MemoryFacts(weights_gib=30.0)
    [finding] = op3.RULE_PCIE_TP.evaluate(facts)
    assert {c.flag: c.proposed for c in finding.changes} == {
        "--pipeline-parallel-size": "2",
        "--tensor-parallel-size": "1",
    }


def test_tp_over_nvlink_is_not_flagged_even_with_slow_itl():
    facts = live(running=1, itl={0.14: 2000})
    facts.config, facts.hardware = config(tensor_parallel_size=2), h100(count=2)
    assert op3.RULE_PCIE_TP.evaluate(facts) == []


def test_nccl_watchdog_timeout_names_the_rank_and_the_timeout():
    facts = Facts(
        events=[event(K.NCCL_WATCHDOG_TIMEOUT, rank=1, timeout_ms=600000, ran_ms=600060, op_type="ALLREDUCE")]
    )
    [finding] = op3.RULE_NCCL.evaluate(facts)
    assert finding.severity.value == "critical"
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (600060, 600000)
    assert "rank(s) 1" in finding.title
    # vLLM's own all-reduce kernel ruled out as the alternative (vllm#4653), unless the launch already did
    # and collectives captured in CUDA graphs, the other suspect (vllm#2770: 0.2.7's TP all-reduce, fixed eager)
    assert [(a.flag, a.proposed) for a in finding.alternatives] == [
        ("--disable-custom-all-reduce", "true"),
        ("--enforce-eager", "true"),
    ]
    facts.config = config(flags={"--disable-custom-all-reduce": "true"}, enforce_eager=True)
    assert op3.RULE_NCCL.evaluate(facts)[0].alternatives == []


def test_torch_npus_hccl_watchdog_is_the_same_timeout_without_the_cuda_alternatives():
    # vllm-ascend#382, verbatim: torch_npu words the watchdog as torch does, with WorkHCCL
    line = (
        "[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before "
        "timing out."
    )
    [finding] = op3.RULE_NCCL.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith("HCCL ALLREDUCE ran 3,600,185 ms") and "rank(s) 1" in finding.title
    assert finding.alternatives == [] and "npu-smi info" in finding.actions[1]


def test_the_watchdog_line_cut_after_its_colon_still_names_the_timeout_and_the_rank():
    # vllm#42354, verbatim as a commenter pasted it: the rest of the line (the collective, its times) is not there
    line = "[Rank 1] Watchdog caught collective operation timeout:"
    [finding] = op3.RULE_NCCL.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title == "the NCCL watchdog timed out a collective on rank(s) 1"
    assert "Find the rank that hung or died first" in finding.actions[0]


def test_the_watchdog_line_abbreviated_without_its_rank_names_the_collective_it_kept():
    # huggingface/trl#7103, verbatim (the reporter abbreviated it): the first weight sync to vLLM hung until then
    line = "Watchdog caught collective operation timeout: WorkNCCL(..., OpType=COALESCED, ...)"
    [finding] = op3.RULE_NCCL.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title == "the NCCL watchdog timed out a COALESCED collective (the rank is not in the text)"


def test_a_worker_dying_in_the_shutdown_after_a_failed_start_is_not_reported():
    failed = event(K.ENGINE_CORE_FAILED, line_no=57)
    facts = Facts(events=[failed, event(K.WORKER_DIED, line_no=81, process="VllmWorker-0")])
    assert op3.RULE_WORKER_DIED.evaluate(facts) == []
    facts = Facts(events=[event(K.WORKER_DIED, line_no=50, process="VllmWorker-0", exit_code=-9), failed])
    assert len(op3.RULE_WORKER_DIED.evaluate(facts)) == 1  # died first: a cause, not the shutdown


def test_worker_death_by_sigkill_points_at_host_memory():
    facts = Facts(events=[event(K.WORKER_DIED, process="VllmWorker-1", exit_code=-9)])
    [finding] = op3.RULE_WORKER_DIED.evaluate(facts)
    assert "exit code -9" in finding.title and "host memory" in finding.actions[0]


def test_nccl_out_of_memory_lowers_utilization():
    facts = Facts(
        config=config(gpu_memory_utilization=0.95),
        events=[
            event(
                K.NCCL_ERROR,
                message="NCCL error in: NCCLUtils.cpp:75, unhandled cuda error, "
                "Last error: Cuda failure 'out of memory'",
            )
        ],
    )
    [finding] = op3.RULE_NCCL_OOM.evaluate(facts)
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--gpu-memory-utilization", "0.90")]
    assert [(c.flag, c.proposed) for c in finding.alternatives] == [("--enforce-eager", "true")]


def test_nccls_last_error_on_a_line_of_its_own_is_read_as_its_out_of_memory():
    # vllm#18446 (0.8.5.post1, Qwen3-235B on V1): the worker's teardown traceback, NCCL's lines as printed
    log = parse_lines(
        [
            "(VllmWorker rank=7 pid=240) torch.distributed.DistBackendError: NCCL error in: "
            "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:133, unhandled cuda error (run with NCCL_DEBUG=INFO "
            "for details), NCCL version 2.21.5",
            "(VllmWorker rank=7 pid=240) ncclUnhandledCudaError: Call to CUDA function failed.",
            "(VllmWorker rank=7 pid=240) Last error:",
            "(VllmWorker rank=7 pid=240) Cuda failure 'out of memory'",
        ]
    )
    [finding] = op3.RULE_NCCL_OOM.evaluate(Facts(events=log.events))
    assert finding.alternatives[0].flag == "--enforce-eager"


def test_other_nccl_errors_are_not_called_out_of_memory():
    facts = Facts(events=[event(K.NCCL_ERROR, message="NCCL error in: ProcessGroupNCCL.cpp:1, remote process exited")])
    assert op3.RULE_NCCL_OOM.evaluate(facts) == []


def test_v0s_speculative_metrics_with_its_doubled_word_read_the_acceptance():
    # vllm#6768, verbatim: 0.5's format says `Number of draft tokens tokens`
    line = (
        "INFO 07-24 04:00:31 metrics.py:316] Speculative metrics: Draft acceptance rate: 0.000, System efficiency: "
        "0.059, Number of speculative tokens: 16, Number of accepted tokens: 0, Number of draft tokens tokens: 42272, "
        "Number of emitted tokens tokens: 2642."
    )
    [metrics] = [e for e in parse_lines([line]).events if e.kind == K.SPEC_DECODE_METRICS]
    assert (metrics.acceptance_rate, metrics.accepted_tokens, metrics.drafted_tokens) == (0.0, 0, 42272)
