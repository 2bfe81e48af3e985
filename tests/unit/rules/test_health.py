"""HL-1 … HL-3: hung or dead engines, whatever /health answers."""

from pathlib import Path

from advisor.collect.logs import parse_lines
from rules.catalog import health
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import EndpointFacts, Facts, MetricWindow
from tests.unit.rules.factories import MODEL, config, event, histogram, live, snapshot


def test_zero_tokens_over_a_window_with_requests_pending_and_health_200_is_a_hang():
    facts = live(running=4, waiting=2, generated=0, interval_s=60.0)
    facts.endpoint = EndpointFacts(health_status=200, models_ok=True)
    [finding] = health.RULE_HANG.evaluate(facts)
    assert finding.severity.value == "critical"
    assert "0 tokens/s over 60 s" in finding.title and "/health 200" in finding.title


def test_the_silent_stall_is_read_from_the_step_heartbeat_even_without_the_token_counter():
    """vLLM's silent stall: 3 waiting, none running, /health 200, and vllm:iteration_tokens_total (observed
    once per engine step) has not moved in 120 s."""
    gauges = {"vllm:num_requests_running": 0, "vllm:num_requests_waiting": 3}
    steps = histogram({1: 4000, 64: 900}, (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048), MODEL)
    before = snapshot(gauges, {}, {"vllm:iteration_tokens_total": steps})
    after = snapshot(gauges, {}, {"vllm:iteration_tokens_total": steps})
    facts = Facts(
        snapshot=after,
        window=MetricWindow.from_snapshots(before, after, 120.0),
        endpoint=EndpointFacts(health_status=200, models_ok=True),
    )
    [finding] = health.RULE_HANG.evaluate(facts)
    assert finding.severity.value == "critical" and "(/health 200)" in finding.title
    assert any("iteration_tokens_total" in e.name and e.value == 0 for e in finding.evidence)


def test_steps_still_running_are_not_a_stall():
    gauges = {"vllm:num_requests_running": 2, "vllm:num_requests_waiting": 3}
    bounds = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
    before = snapshot(gauges, {}, {"vllm:iteration_tokens_total": histogram({1: 4000}, bounds, MODEL)})
    after = snapshot(gauges, {}, {"vllm:iteration_tokens_total": histogram({1: 4600}, bounds, MODEL)})
    facts = Facts(snapshot=after, window=MetricWindow.from_snapshots(before, after, 120.0))
    assert health.RULE_HANG.evaluate(facts) == []


def test_an_idle_server_generating_nothing_is_not_hung():
    assert health.RULE_HANG.evaluate(live(running=0, waiting=0, generated=0, interval_s=60.0)) == []


def test_a_silence_shorter_than_a_minute_is_not_enough_to_call_a_hang():
    """One legitimate step (a long prefill chunk on a CPU, a first compilation) can fill tens of
    seconds; vLLM itself calls a 60 s wait a hang, and so does HL-1."""
    for seconds in (10.0, 45.0):
        assert health.RULE_HANG.evaluate(live(running=4, generated=0, interval_s=seconds)) == []
    assert health.RULE_HANG.evaluate(live(running=4, generated=0, interval_s=60.0))


def test_repeated_shm_broadcast_warnings_are_a_confident_hang():
    facts = Facts(events=[event(K.SHM_BROADCAST_HANG, i, hang_seconds=60) for i in range(1, 4)])
    [finding] = health.RULE_HANG.evaluate(facts)
    assert finding.confidence == 0.9 and finding.evidence[-1].value == 3


def test_a_stall_followed_by_generated_tokens_is_a_recovered_medium_finding():
    facts = Facts(
        events=[
            event(K.SHM_BROADCAST_HANG, 1, hang_seconds=60),
            event(K.STATS_LINE, 2, running=4, waiting=0, generation_throughput_tps=350.0),
        ]
    )
    [finding] = health.RULE_HANG.evaluate(facts)
    assert finding.severity.value == "medium" and "generated tokens afterwards" in finding.title


def test_an_offline_job_finishing_prompts_after_the_waits_recovered():
    """vLLM 0.32 on CPU, an offline worker's batch of long prefills: two 60 s waits, then its bar finished every
    prompt (offline_data_parallel_contended.log). A bar that starts after the waits is no progress."""
    wait = event(K.SHM_BROADCAST_HANG, 1, hang_seconds=60)
    done = event(K.OFFLINE_PROGRESS, 3, prompts_done=1, prompts_total=32, elapsed_s=198.0)
    [finding] = health.RULE_HANG.evaluate(Facts(events=[wait, wait.model_copy(update={"line_no": 2}), done]))
    assert finding.severity.value == "medium" and "generated tokens afterwards" in finding.title
    fresh = event(K.OFFLINE_PROGRESS, 3, prompts_done=0, prompts_total=32, elapsed_s=0.0)
    [hung] = health.RULE_HANG.evaluate(Facts(events=[wait, wait.model_copy(update={"line_no": 2}), fresh]))
    assert hung.severity.value == "critical"


def test_the_real_offline_worker_that_waited_then_finished_is_a_recovered_stall():
    log = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu" / "offline_data_parallel_contended.log"
    [finding] = health.RULE_HANG.evaluate(Facts(events=parse_lines(log.read_text().splitlines()).events))
    assert finding.title == "engine stalled (2 shm_broadcast warning(s)) but generated tokens afterwards"


def test_a_single_shm_warning_is_a_weaker_hang_signal():
    assert health.RULE_HANG.evaluate(Facts(events=[event(K.SHM_BROADCAST_HANG, hang_seconds=60)]))[0].confidence == 0.6


def test_health_503_means_the_engine_is_dead():
    [finding] = health.RULE_DEAD.evaluate(Facts(endpoint=EndpointFacts(health_status=503)))
    assert finding.evidence[0].value == 503 and "/health 503" in finding.title


def test_a_fatal_error_line_means_the_engine_is_dead():
    [finding] = health.RULE_DEAD.evaluate(Facts(events=[event(K.FATAL_ERROR)]))
    assert finding.confidence == 0.95


def test_a_death_whose_cause_was_cut_names_a_step_budget_beyond_vllms_defaults_as_the_first_suspect():
    # intel/llm-scaler#488: EngineCore's fatal error, the traceback cut; --max-num-batched-tokens=65536 (fixed at 8192)
    facts = Facts(events=[event(K.FATAL_ERROR)], config=config(max_num_batched_tokens=65536))
    [finding] = health.RULE_DEAD.evaluate(facts)
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--max-num-batched-tokens", "65536", "8192")]
    assert "8x vLLM's default on a GPU of 70 GiB or more" in finding.changes[0].reason
    for quiet in (
        Facts(
            events=[event(K.FATAL_ERROR, message="RuntimeError: CUDA error: misaligned address")],
            config=config(max_num_batched_tokens=65536),
        ),
        Facts(events=[event(K.FATAL_ERROR)], config=config(max_num_batched_tokens=16384)),  # a default on large GPUs
    ):
        assert health.RULE_DEAD.evaluate(quiet)[0].changes == []


def test_v0s_stopped_background_loop_is_quoted_and_told_as_v0s():
    # vllm#5822: V0's AsyncLLMEngine; the `raise` line of the frame, then the exception line
    dead = [
        event(K.ENGINE_DEAD, 8, message='AsyncEngineDeadError("Background loop is stopped.")'),
        event(K.ENGINE_DEAD, 9, message="AsyncEngineDeadError: Background loop is stopped."),
    ]
    [finding] = health.RULE_DEAD.evaluate(Facts(events=dead))
    assert "(AsyncEngineDeadError: Background loop is stopped.)" in finding.title
    assert any("upgrade vLLM" in action and "vllm#5903" in action for action in finding.actions)
    [v1] = health.RULE_DEAD.evaluate(Facts(events=[event(K.ENGINE_DEAD, message="EngineDeadError: EngineCore …")]))
    assert not any("upgrade" in action for action in v1.actions)


def test_v0s_background_task_failure_names_the_exception_its_traceback_ends_with():
    log = parse_lines(
        [
            "ERROR 08-27 10:50:39 async_llm_engine.py:65] Engine background task failed",
            "ERROR 08-27 10:50:39 async_llm_engine.py:65] Traceback (most recent call last):",
            'ERROR 08-27 10:50:39 async_llm_engine.py:65]   File "/x/vllm/engine/async_llm_engine.py", line 55, in f',
            "ERROR 08-27 10:50:39 async_llm_engine.py:65]     return_value = task.result()",
            "ERROR 08-27 10:50:39 async_llm_engine.py:65] ValueError: a request's own error",
        ]
    )
    [finding] = health.RULE_DEAD.evaluate(Facts(events=log.events))
    assert "(ValueError: a request's own error)" in finding.title
    assert any("vllm#5903" in action for action in finding.actions)  # V0's loop: told as V0's
    cut = parse_lines(["ERROR 08-27 10:50:39 async_llm_engine.py:65] Engine background task failed"])
    [finding] = health.RULE_DEAD.evaluate(Facts(events=cut.events))
    assert finding.title == "engine dead: fatal error"  # the header is not the cause


def test_the_api_servers_engine_dead_error_alone_says_the_cause_is_elsewhere():
    """A paste of the API server's side only (`AsyncLLM output_handler failed`, EngineDeadError, HTTP 500s):
    the engine core printed the cause before it, under its own prefix; the title says so instead of
    "engine dead: engine dead"."""
    [finding] = health.RULE_DEAD.evaluate(Facts(events=[event(K.ENGINE_DEAD, message="EngineDeadError: EngineCore …")]))
    assert finding.title.startswith("engine dead: the text holds its consequence (EngineDeadError)")
    assert (
        finding.actions[0].startswith("Fetch the engine core's lines") and "(EngineCore_DP0 pid=" in finding.actions[0]
    )
    both = [event(K.FATAL_ERROR, 1), event(K.ENGINE_DEAD, 2, message="EngineDeadError: EngineCore …")]
    [finding] = health.RULE_DEAD.evaluate(Facts(events=both))
    assert finding.title == "engine dead: fatal error"


def test_a_clients_http_500_with_engine_dead_errors_words_is_the_engine_dead():
    """vllm#17604's body, verbatim: the words are EngineDeadError's (v1/engine/exceptions.py), so the client saw the
    engine core die; a paste of the body alone is answered as the death, with the core's log to fetch."""
    body = (
        '{"object":"error","message":"EngineCore encountered an issue. See stack trace (above) for the root '
        'cause.","type":"Internal Server Error","param":null,"code":500}'
    )
    top = evaluate(Facts(events=parse_lines([body]).events)).top
    assert top.rule == "HL-2" and "(EngineDeadError)" in top.title


def test_rpc_timeout_outranks_the_generic_engine_death_it_caused():
    facts = Facts(events=[event(K.RPC_TIMEOUT, 1, rpc_method="execute_model"), event(K.FATAL_ERROR, 2)])
    assert evaluate(facts).top.rule == "HL-3"


def test_a_healthy_probe_and_clean_log_raise_nothing():
    facts = live()
    facts.endpoint = EndpointFacts(health_status=200)
    assert all(rule.evaluate(facts) == [] for rule in health.RULES)


def test_a_broadcast_wait_during_startup_is_compilation_not_a_hang():
    starting = event(K.SHM_BROADCAST_HANG, line_no=55, hang_seconds=60.0, during_startup=True)
    assert health.RULE_HANG.evaluate(Facts(events=[starting])) == []
    serving = event(K.SHM_BROADCAST_HANG, line_no=900, hang_seconds=60.0, during_startup=False)
    [finding] = health.RULE_HANG.evaluate(Facts(events=[starting, serving]))
    assert "1 shm_broadcast" in finding.title


CHAIN = """\
(EngineCore_DP0 pid=200) ERROR 11-20 10:05:00 [core.py:700] EngineCore encountered a fatal error.
(EngineCore_DP0 pid=200) ERROR 11-20 10:05:00 [core.py:700] Traceback (most recent call last):
(EngineCore_DP0 pid=200) ERROR 11-20 10:05:00 [core.py:700]   File "vllm/v1/engine/core.py", line 690, in run_engine_core
(EngineCore_DP0 pid=200) ERROR 11-20 10:05:00 [core.py:700] torch.AcceleratorError: CUDA error: an illegal memory access was encountered
(APIServer pid=100) ERROR 11-20 10:05:01 [async_llm.py:480] AsyncLLM output_handler failed.
(APIServer pid=100) ERROR 11-20 10:05:01 [async_llm.py:480] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
(APIServer pid=100) ERROR 11-20 10:05:02 [core_client.py:600] Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.
"""


def test_the_fatal_error_chain_is_one_finding_named_by_its_root_cause():
    """fatal error -> EngineDeadError -> engine core died: one incident, its cause the traceback's last exception.
    That exception is a CUDA kernel fault, so HL-4 (which kernels to turn off) leads, and the death is HL-2's."""
    from advisor.collect.logs import parse_lines

    result = evaluate(Facts(events=parse_lines(CHAIN.splitlines()).events))
    assert [f.rule for f in result.findings] == ["HL-4", "HL-2"]
    finding = result.findings[1]
    assert "AcceleratorError: CUDA error: an illegal memory access was encountered" in finding.title
    assert any("died unexpectedly" in (e.raw or "") for e in finding.evidence)


def test_an_out_of_memory_inside_the_fatal_errors_traceback_leads_and_the_death_follows():
    """The root exception of the engine core's fatal error is torch's OOM: OP-1.8 names it (with a guessed phase, at
    0.6), and HL-2 stays below it, as it does beside every specific cause."""
    from advisor.collect.logs import parse_lines

    lines = [
        "ERROR 11-30 10:00:00 [core.py:900] EngineCore encountered a fatal error.",
        "ERROR 11-30 10:00:00 [core.py:900] Traceback (most recent call last):",
        'ERROR 11-30 10:00:00 [core.py:900]   File "vllm/v1/engine/core.py", line 890, in run_engine_core',
        "ERROR 11-30 10:00:00 [core.py:900] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. "
        "GPU 0 has a total capacity of 79.19 GiB of which 1.2 GiB is free.",
    ]
    result = evaluate(Facts(events=parse_lines(lines).events))
    assert [f.rule for f in result.findings[:2]] == ["OP-1.8", "HL-2"]
    assert result.findings[1].confidence == health.SPECIFIC_BESIDE


def test_an_rpc_timeout_after_a_kernel_compiled_during_inference_raises_the_step_deadline():
    # MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark#65: an MoE kernel compiled for a shape warm-up missed
    from advisor.collect.logs import parse_lines

    lines = [
        "WARNING [jit_monitor.py:129] CuTeDSL JIT compilation during inference: W4A16FusedMoeKernel",
        "EngineCore ERROR TimeoutError: RPC call to sample_tokens timed out.",
    ]
    [finding] = health.RULE_RPC.evaluate(Facts(events=parse_lines(lines).events))
    assert finding.title.endswith(
        "the CuTeDSL kernel W4A16FusedMoeKernel was JIT-compiled during inference, inside the step"
    )
    [change] = finding.changes
    assert (change.flag, change.kind, change.current, change.proposed) == (
        "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS",
        "env",
        "300",
        "1200",
    )
    assert "--jit-monitor-mode error" in finding.actions[1]
    [plain] = health.RULE_RPC.evaluate(Facts(events=parse_lines(lines[1:]).events))
    assert not plain.changes and plain.title == "RPC call to sample_tokens timed out (1x, > 300 s)"


def _stats(at: str, generation: float, running: int) -> str:
    """A stats line as vLLM 0.32's API server prints it every 10 s, whatever the engine does."""
    return (
        f"(APIServer pid=1) INFO 09-12 {at} [loggers.py:236] Engine 000: Avg prompt throughput: {generation} "
        f"tokens/s, Avg generation throughput: {generation} tokens/s, Running: {running} reqs, Waiting: 6 reqs, "
        "GPU KV cache usage: 12.1%, Prefix cache hit rate: 0.0%"
    )


def test_a_minute_of_stats_lines_with_requests_running_and_no_token_is_a_hang():
    """Timed from the line before the first silent one (its interval began there): 10:00:00 to 10:01:10."""
    lines = [_stats("10:00:00", 230.1, 4)] + [_stats(f"10:0{t // 60}:{t % 60:02d}", 0.0, 4) for t in range(10, 71, 10)]
    [finding] = health.RULE_HANG.evaluate(Facts(events=parse_lines(lines).events))
    assert finding.severity.value == "critical" and finding.confidence == 0.8
    assert finding.title == "engine hung: 0 tokens/s for 70 s in the stats lines with 4 request(s) running"
    assert "every 10 s from the engine's last report" in finding.summary


def test_silent_stats_lines_shorter_than_a_minute_or_followed_by_tokens_are_no_hang():
    short = [_stats("10:00:00", 230.1, 4)] + [_stats(f"10:00:{t}", 0.0, 4) for t in (10, 20, 30, 40, 50)]
    assert health.RULE_HANG.evaluate(Facts(events=parse_lines(short).events)) == []
    idle = [_stats(f"10:0{t // 60}:{t % 60:02d}", 0.0, 0) for t in range(0, 121, 10)]
    assert health.RULE_HANG.evaluate(Facts(events=parse_lines(idle).events)) == []
    silent = [_stats(f"10:0{t // 60}:{t % 60:02d}", 0.0, 4) for t in range(0, 91, 10)]
    [recovered] = health.RULE_HANG.evaluate(Facts(events=parse_lines([*silent, _stats("10:01:40", 88.0, 4)]).events))
    assert recovered.severity.value == "medium"
    assert recovered.title == (
        "engine stalled (0 tokens/s for 90 s in the stats lines with 4 request(s) running) but generated tokens "
        "afterwards"
    )


def test_a_bare_timeout_error_from_the_engine_core_is_a_workers_reply_timing_out():
    # vllm#23582: the shared-memory queue's TimeoutError has no words; the executor re-raises it as the RPC's timeout
    line = "(EngineCore_0 pid=268) ERROR 09-05 21:10:38 [core.py:702] TimeoutError"
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "HL-3" and top.title.startswith("a worker's reply to the engine core timed out")
    chain = [
        line,
        "(EngineCore_0 pid=268) ERROR 09-05 21:10:38 [core.py:702] TimeoutError: RPC call to execute_model timed out.",
    ]
    assert (
        evaluate(Facts(events=parse_lines(chain).events)).top.title
        == "RPC call to execute_model timed out (1x, > 300 s)"
    )
    # a bare TimeoutError no engine core logged, and with no frames, says nothing of where it waited
    assert evaluate(Facts(events=parse_lines(["TimeoutError"]).events)).top.rule == "VC-2"


def test_a_fault_a_kernel_librarys_launch_reported_suspects_that_librarys_attention_backend_first():
    # vllm#25032: flash-attn's own check names its Hopper launch template
    line = (
        "CUDA error (/workspace/.deps/vllm-flash-attn-src/hopper/flash_fwd_combine_launch_template.h:60): an illegal "
        "memory access was encountered"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "HL-4" and top.title.endswith(
        "first suspect the attention backend (FLASH_ATTN, whose kernel launch reported the fault)"
    )
    assert (top.changes[0].flag, top.changes[0].proposed) == ("VLLM_ATTENTION_BACKEND", "FLASHINFER")


def test_rocms_memory_access_fault_is_a_kernel_fault_found_with_hips_serialisation():
    # vllm#35169: the HSA runtime's page fault during graph capture; AITER first when the launch turned it on
    line = (
        "Memory access fault by GPU node-5 (Agent handle: 0x460e3a50) on address 0x7ec4dfe0e000. Reason: Write access "
        "to a read-only page."
    )
    facts = Facts(events=parse_lines([line]).events)
    top = evaluate(facts).top
    assert top.rule == "HL-4" and top.title.startswith("a GPU kernel faulted (ROCm: memory access fault (Write access")
    assert "AMD_SERIALIZE_KERNEL=3" in top.actions[0]
    facts.config = config(env={"VLLM_ROCM_USE_AITER": "1"})
    aiter = evaluate(facts).top
    assert (aiter.changes[0].flag, aiter.changes[0].proposed) == ("VLLM_ROCM_USE_AITER", "0")


def test_pytorchs_line_naming_the_cuda_error_code_is_the_kernel_fault_it_names():
    # christopherowen/spark-vllm-mxfp4-docker#5, verbatim: the only line of the error the paste kept
    line = (
        "vllm-mxfp4  | (EngineCore_DP0 pid=131) ERROR 02-24 19:04:56 [core.py:902] Search for `cudaErrorIllegalAddress' "
        "in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "HL-4" and "an illegal memory access was encountered" in top.title
    other = (
        "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/ for more information."
    )
    assert not [e for e in parse_lines([other]).events if e.kind == K.CUDA_KERNEL_FAULT]


def test_a_subprocess_killed_by_sigill_is_the_illegal_instruction_crash_and_its_output_is_fetched():
    # vllm#32554, verbatim: vLLM's model inspection subprocess on a CPU-only machine
    line = (
        "ERROR 01-18 15:21:03 [registry.py:741] subprocess.CalledProcessError: Command '['/home/skullian/gateway/"
        "scanhealth/.venv/bin/python3', '-m', 'vllm.model_executor.models.registry']' died with <Signals.SIGILL: 4>."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "HL-6" and "illegal instruction" in top.title
    assert "/proc/cpuinfo" in top.actions[0] and "the child's output" in top.actions[1]


def test_hips_check_and_torchs_accelerator_error_are_the_same_kernel_fault():
    # vllm#36180, verbatim (vLLM 0.16 on ROCm 7.0: torch 2.8 on raises torch.AcceleratorError), and CUDA's counterpart
    hip = (
        "(EngineCore_DP0 pid=555309) ERROR 03-05 22:09:18 [core.py:1100] torch.AcceleratorError: HIP error: an "
        "illegal memory access was encountered"
    )
    top = evaluate(Facts(events=parse_lines([hip]).events)).top
    assert top.rule == "HL-4" and top.title.startswith("a GPU kernel faulted (ROCm: an illegal memory access")
    assert "HIP reported it at a later call" in top.summary and "AMD_SERIALIZE_KERNEL=3" in top.actions[0]
    cuda = "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"
    assert evaluate(Facts(events=parse_lines([cuda]).events)).top.title.startswith("a CUDA kernel faulted (an illegal")


def test_asyncios_words_for_the_v0_loops_death_are_that_death():
    """vllm#5371 and #7936 (the seventh and third probes): asyncio's line when V0's background loop's callback raised,
    verbatim; V0's actions, not V1's."""
    for line in (
        "2024-06-10 13:26:25 Exception in callback functools.partial(<function _raise_exception_on_finish at "
        "0x7f1e8f46caf0>, error_callback=<bound method AsyncLLMEngine._error_callback of "
        "<vllm.engine.async_llm_engine.AsyncLLMEngine object at 0x7f1e847108e0>>)",
        "Exception in callback functools.partial(<function _log_task_completion at 0x7fd2ae7ebac0>, "
        "error_callback=<bound method AsyncLLMEngine._error_callback of <vllm.engine.async_llm_engine.AsyncLLMEngine "
        "object at 0x7fd296aa67d0>>)",
    ):
        top = evaluate(Facts(events=parse_lines([line]).events)).top
        assert top.rule == "HL-2" and top.title == "engine dead: fatal error", line
        assert top.actions[0].startswith("Find the first exception before 'Background loop is stopped'")


def test_flashinfers_sampling_kernel_naming_its_own_fault_is_the_first_suspect():
    # vllm#20177, verbatim: FlashInfer's top-p sampling kernel's own launch check
    line = (
        "2025-06-27 17:14:23: (VllmWorker rank=1 pid=776294) ERROR 06-27 17:14:23 [multiproc_executor.py:522] "
        "RuntimeError: TopPSamplingFromProbs failed with error code an illegal memory access was encountered"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "HL-4" and "FlashInfer sampler" in top.title
    assert [(ch.flag, ch.proposed, ch.kind) for ch in top.changes] == [("VLLM_USE_FLASHINFER_SAMPLER", "0", "env")]


def test_a_hip_assertion_in_vllms_skinny_gemm_proposes_turning_the_skinny_kernels_off():
    # ROCm/vllm#527, verbatim: vLLM's ROCm skinny GEMM on an RX 7900 XTX
    line = (
        "/app/vllm/build/temp.linux-x86_64-cpython-312/csrc/rocm/skinny_gemms.hip:497: void wvSplitK_hf_sml_(const int, "
        "const int, const scalar_t *, const scalar_t *__restrict, scalar_t *, const int, const int) [scalar_t = "
        "__hip_bfloat16, THRDS = 64, YTILE = 2, WvPrGrp = 16, A_CHUNK = 8, UNRL = 2, N = 2]: Device-side assertion "
        "`false' failed."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "HL-4" and "wvSplitK_hf_sml_" in top.title
    assert [(ch.flag, ch.proposed) for ch in top.changes] == [("VLLM_ROCM_USE_SKINNY_GEMM", "0")]


def test_vllm_02s_loop_callback_without_functools_partial_is_the_same_v0_death():
    # vllm#1188, verbatim (the reporter's paste, cut by them with "..."): vLLM 0.2's engine added the callback without
    # functools.partial, so asyncio printed the function itself
    line = (
        "Exception in callback _raise_exception_on_finish(request_tracker=<vllm.engine....x7fea792f4550>)(<Task "
        "finishe...this error.')>) at /data/anaconda3/lib/python3.11/site-packages/vllm/engine/async_llm_engine.py:21"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "HL-2" and top.title == "engine dead: fatal error"
    assert top.actions[0].startswith("Find the first exception before 'Background loop is stopped'")


def test_rocms_memory_access_fault_with_its_handle_and_address_left_out_is_still_a_kernel_fault():
    # ROCm/aiter#2187, verbatim: the reporter elided the handle and address; disabling AITER's MoE avoided it
    top = evaluate(Facts(events=parse_lines(["Memory access fault by GPU node-8 ... Reason: Unknown."]).events)).top
    assert top.rule == "HL-4" and top.title.startswith("a GPU kernel faulted (ROCm: memory access fault (Unknown))")
