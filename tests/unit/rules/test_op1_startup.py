"""OP-1: each startup failure vLLM reports becomes a finding with concrete flag values from its numbers."""

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op1_free_memory, op1_kv_fit, op1_oom, op1_unexplained
from rules.evaluate import evaluate
from rules.events import LogEvent, OomPhase
from rules.events import LogEventKind as K
from rules.facts import Facts, MemoryFacts, ModelFacts, ServerConfig, Workload
from tests.unit.rules.factories import config, event, h100


def _one(rule, facts):
    found = rule.evaluate(facts)
    assert len(found) == 1, found
    return found[0]


def _changes(finding):
    return {c.flag: c.proposed for c in finding.changes}


def test_max_model_len_uses_vllms_estimate_rounded_down_to_the_block_size():
    facts = Facts(
        config=config(block_size=32),
        events=[
            event(
                K.MAX_MODEL_LEN_TOO_LARGE,
                max_model_len=262144,
                kv_needed_gib=24.0,
                available_kv_gib=3.18,
                estimated_max_model_len=34750,
            )
        ],
    )
    finding = _one(op1_kv_fit.RULE_MAX_MODEL_LEN, facts)
    assert _changes(finding) == {"--max-model-len": "34720"}
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (24.0, 3.18)
    assert "24 GiB" in finding.title and "3.18 GiB" in finding.title


def test_max_model_len_without_the_estimate_sentence_scales_linearly():
    facts = Facts(
        events=[event(K.MAX_MODEL_LEN_TOO_LARGE, max_model_len=32768, kv_needed_gib=1.75, available_kv_gib=1.20)]
    )
    # 32768 x 1.20 / 1.75 = 22469 -> 22464 (block 16)
    assert _changes(_one(op1_kv_fit.RULE_MAX_MODEL_LEN, facts)) == {"--max-model-len": "22464"}


def test_the_refusal_retold_without_its_length_still_gives_the_share_that_fits_and_the_missing_gib():
    # allenai/olmocr#269, verbatim: the reporter's own shortening; olmocr passed --gpu-memory-utilization twice and
    # vLLM kept the last (0.80 after 0.95)
    [refusal] = parse_lines(["ValueError: 1.75 GiB KV cache is needed, available 0.13 GiB"]).events
    assert refusal.kind == K.MAX_MODEL_LEN_TOO_LARGE and refusal.max_model_len is None
    finding = _one(op1_kv_fit.RULE_MAX_MODEL_LEN, Facts(events=[refusal]))
    assert "1.75 GiB KV > 0.13 GiB" in finding.title
    assert "missing 1.62 GiB" in finding.actions[0] and "about 7%" in finding.actions[0]
    assert "given twice" in finding.actions[1]


def _cpu_refusal(available_kv_gib: float) -> LogEvent:
    # vllm#29233: vLLM's CPU backend before 0.14 took 4 GiB of KV with VLLM_CPU_KVCACHE_SPACE unset
    return event(
        K.MAX_MODEL_LEN_TOO_LARGE,
        max_model_len=40960,
        kv_needed_gib=4.38,
        available_kv_gib=available_kv_gib,
        estimated_max_model_len=37376,
    )


def test_a_pool_of_exactly_the_cpu_backends_unset_default_raises_its_kv_space_first():
    finding = _one(op1_kv_fit.RULE_MAX_MODEL_LEN, Facts(events=[_cpu_refusal(4.0)]))
    [space] = finding.changes
    assert (space.flag, space.current, space.proposed) == ("VLLM_CPU_KVCACHE_SPACE", "4", "5")
    assert space.kind == "env" and space.command_line() == "VLLM_CPU_KVCACHE_SPACE=5"  # the environment, not a flag
    assert "--gpu-memory-utilization does not size it" in space.reason and "unset" in space.reason
    assert [a.flag for a in finding.alternatives] == ["--max-model-len"]


def test_the_cpu_kv_space_is_left_alone_on_a_gpu_and_proposed_whatever_the_pool_on_the_cpu_backend():
    on_a_gpu = Facts(memory=MemoryFacts(total_gib=23.6), events=[_cpu_refusal(4.0)])
    assert "VLLM_CPU_KVCACHE_SPACE" not in _changes(_one(op1_kv_fit.RULE_MAX_MODEL_LEN, on_a_gpu))
    unknown = Facts(events=[_cpu_refusal(3.2)])  # not the default: nothing says CPU
    assert "VLLM_CPU_KVCACHE_SPACE" not in _changes(_one(op1_kv_fit.RULE_MAX_MODEL_LEN, unknown))
    cpu = config(device="cpu", env={"VLLM_CPU_KVCACHE_SPACE": "3"})
    finding = _one(op1_kv_fit.RULE_MAX_MODEL_LEN, Facts(config=cpu, events=[_cpu_refusal(3.0)]))
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("VLLM_CPU_KVCACHE_SPACE", "3", "5")]


def test_v0_max_seq_len_text_proposes_the_tokens_that_fit():
    facts = Facts(events=[event(K.V0_MAX_SEQ_LEN_TOO_LARGE, max_model_len=131072, max_seq_len_tokens=61640)])
    assert _changes(_one(op1_kv_fit.RULE_MAX_MODEL_LEN, facts)) == {"--max-model-len": "61632"}


def test_v0_max_seq_len_text_also_offers_a_larger_share_as_its_message_advises():
    # vLLM's own words: "Try increasing gpu_memory_utilization or decreasing max_model_len"; tokens, not GiB,
    # so the share goes toward the safe maximum and says how much more KV it must add
    facts = Facts(events=[event(K.V0_MAX_SEQ_LEN_TOO_LARGE, max_model_len=4096, max_seq_len_tokens=3664)])
    finding = _one(op1_kv_fit.RULE_MAX_MODEL_LEN, facts)
    assert _changes(finding) == {"--max-model-len": "3664"}
    (share,) = [a for a in finding.alternatives if a.flag == "--gpu-memory-utilization"]
    assert (share.current, share.proposed) == ("0.90", "0.95") and "12% more tokens" in share.reason


def test_max_model_len_offers_the_utilization_that_would_fit_as_alternative():
    facts = Facts(
        config=config(gpu_memory_utilization=0.90),
        memory=MemoryFacts(total_gib=80.0),
        events=[
            event(
                K.MAX_MODEL_LEN_TOO_LARGE,
                max_model_len=131072,
                kv_needed_gib=12.0,
                available_kv_gib=10.0,
                estimated_max_model_len=109226,
            )
        ],
    )
    finding = _one(op1_kv_fit.RULE_MAX_MODEL_LEN, facts)
    # 0.90 + 2 GiB / 80 GiB = 0.925 -> 0.93
    assert [(a.flag, a.proposed) for a in finding.alternatives] == [("--gpu-memory-utilization", "0.93")]


@pytest.mark.parametrize("p95_input, safety", [(4000, "safe"), (60000, "unsafe")])
def test_lower_max_model_len_is_safe_only_when_the_workload_fits_under_it(p95_input, safety):
    facts = Facts(
        workload=Workload(p95_input_tokens=p95_input, p95_output_tokens=1000),
        events=[
            event(
                K.MAX_MODEL_LEN_TOO_LARGE,
                max_model_len=131072,
                kv_needed_gib=16.0,
                available_kv_gib=3.18,
                estimated_max_model_len=26048,
            )
        ],
    )
    assert _one(op1_kv_fit.RULE_MAX_MODEL_LEN, facts).changes[0].safety == safety


def test_no_cache_blocks_with_weights_over_75_percent_proposes_tensor_parallel_and_fp8_alternative():
    facts = Facts(
        hardware=h100(count=2),
        config=config(quantization=None),
        events=[
            event(K.MODEL_LOADING, 1, weights_gib=67.72),
            event(K.AVAILABLE_KV_MEMORY, 2, available_kv_gib=-1.44),
            event(K.NO_CACHE_BLOCKS, 3),
        ],
    )
    finding = _one(op1_kv_fit.RULE_NO_CACHE_BLOCKS, facts)
    assert _changes(finding) == {"--tensor-parallel-size": "2"}
    assert [a.flag for a in finding.alternatives] == ["--quantization"]
    assert "-1.44" in finding.title


def test_no_cache_blocks_with_small_weights_raises_utilization():
    facts = Facts(
        config=config(gpu_memory_utilization=0.80),
        hardware=h100(),
        events=[event(K.MODEL_LOADING, 1, weights_gib=15.0), event(K.NO_CACHE_BLOCKS, 2)],
    )
    assert _changes(_one(op1_kv_fit.RULE_NO_CACHE_BLOCKS, facts)) == {"--gpu-memory-utilization": "0.95"}


def test_other_processes_are_blamed_only_on_releases_that_charged_them():
    """vLLM 0.8-0.9.0 counted other processes' GPU memory against this instance. An undated paste keeps the warning
    unless its own wording dates it later: the old bare "No available memory …" (0.4-0.12) keeps it, the wording
    printed from 0.22 on ("… despite its name") drops it, and a stated 0.10 drops it whatever the wording."""
    said = (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine"
    )
    since_0_7 = f"ValueError: {said}."
    since_0_22 = (
        f"ValueError: {said} (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )

    def warns(*lines: str) -> bool:
        finding = _one(op1_kv_fit.RULE_NO_CACHE_BLOCKS, Facts(events=parse_lines(list(lines)).events))
        return any("charges other processes" in action for action in finding.actions)

    assert warns(since_0_7) and not warns(since_0_22)
    assert not warns("INFO 05-01 12:00:00 api_server.py:1 vLLM API server version 0.10.1", since_0_7)


def test_no_cache_blocks_offers_fewer_sequences_where_vllm_may_profile_its_sampler_over_1024():
    seqs = {
        "the flag and GPU unknown": (Facts(events=[event(K.NO_CACHE_BLOCKS)]), None),
        "an H100 on its default": (Facts(hardware=h100(), events=[event(K.NO_CACHE_BLOCKS)]), "1024"),
        "set to 512": (Facts(config=config(max_num_seqs=512), events=[event(K.NO_CACHE_BLOCKS)]), "512"),
    }
    for why, (facts, current) in seqs.items():
        finding = _one(op1_kv_fit.RULE_NO_CACHE_BLOCKS, facts)
        (fewer,) = [a for a in finding.alternatives if a.flag == "--max-num-seqs"]
        assert (fewer.current, fewer.proposed) == (current, "256"), why
        assert "sampler" in fewer.reason
    at_256 = Facts(config=config(max_num_seqs=256), events=[event(K.NO_CACHE_BLOCKS)])
    assert not [a for a in _one(op1_kv_fit.RULE_NO_CACHE_BLOCKS, at_256).alternatives if a.flag == "--max-num-seqs"]


def test_free_memory_below_requested_lowers_utilization_to_what_is_free():
    facts = Facts(
        events=[
            event(
                K.FREE_MEMORY_BELOW_REQUESTED,
                free_gib=31.44,
                total_gib=47.38,
                gpu_memory_utilization=0.95,
                requested_gib=45.01,
            )
        ]
    )
    finding = _one(op1_free_memory.RULE_FREE_MEMORY, facts)
    assert _changes(finding) == {"--gpu-memory-utilization": "0.65"}
    assert (finding.evidence[0].value, finding.evidence[0].threshold, finding.evidence[0].comparison) == (
        31.44,
        45.01,
        "<",
    )


def test_weight_load_oom_doubles_tensor_parallel_when_gpus_allow():
    facts = Facts(
        hardware=h100(count=4),
        config=config(tensor_parallel_size=2),
        events=[event(K.CUDA_OOM, oom_phase=OomPhase.WEIGHT_LOAD)],
    )
    assert _changes(_one(op1_oom.RULE_OOM_WEIGHTS, facts)) == {"--tensor-parallel-size": "4"}


def test_weight_load_oom_on_a_single_gpu_proposes_quantization():
    facts = Facts(hardware=h100(count=1), events=[event(K.CUDA_OOM, oom_phase=OomPhase.WEIGHT_LOAD)])
    finding = _one(op1_oom.RULE_OOM_WEIGHTS, facts)
    assert _changes(finding) == {"--quantization": "fp8"} and finding.changes[0].safety == "unsafe"


def test_weight_load_oom_of_a_prequantized_model_proposes_no_second_quantization():
    facts = Facts(
        hardware=h100(count=1),
        model=ModelFacts(prequantized="fp8"),
        events=[event(K.CUDA_OOM, oom_phase=OomPhase.WEIGHT_LOAD)],
    )
    assert _one(op1_oom.RULE_OOM_WEIGHTS, facts).changes == []


def test_weight_load_oom_of_a_launch_the_log_shows_quantized_proposes_no_second_quantization():
    """The engine config line says `quantization=awq_marlin`: fp8 would be a change already in effect."""
    facts = Facts(
        hardware=h100(count=1),
        config=ServerConfig(quantization="awq_marlin"),
        events=[event(K.CUDA_OOM, oom_phase=OomPhase.WEIGHT_LOAD)],
    )
    assert _one(op1_oom.RULE_OOM_WEIGHTS, facts).changes == []


def _sampler_oom(**sizes):
    """vLLM's RuntimeError naming the warm-up, printed after the torch error it chains (when `sizes` given)."""
    wrapper = event(K.CUDA_OOM, 20, oom_phase=OomPhase.SAMPLER_WARMUP, num_dummy_requests=1024)
    if not sizes:
        return [wrapper]
    return [event(K.CUDA_OOM, 16, oom_phase=OomPhase.UNKNOWN, **sizes), wrapper]


def _sized_sampler_oom(pool_tokens: int, pool_gib: float, free_gib: float) -> Facts:
    """1.16 GiB tried on a 79.19 GiB GPU at utilisation 0.95, with the pool the start-up log printed."""
    return Facts(
        config=config(gpu_memory_utilization=0.95),
        memory=MemoryFacts(kv_cache_tokens=pool_tokens, available_kv_gib=pool_gib, source="startup_log"),
        events=_sampler_oom(tried_to_allocate_gib=1.16, free_gib=free_gib, total_gib=79.19),
    )


def test_sampler_warmup_oom_without_torchs_figures_halves_max_num_seqs_and_says_so():
    finding = _one(op1_oom.RULE_OOM_SAMPLER, Facts(events=_sampler_oom()))
    assert _changes(finding) == {"--max-num-seqs": "512"}
    assert "1024" in finding.title and "halved" in finding.changes[0].reason


def test_sampler_warmup_oom_is_sized_from_the_torch_error_it_chains_and_leads_with_the_cheaper_remedy():
    """1.16 GiB tried, 0.598 free, 79.19 GiB GPU, 41.07 GiB pool of 538,304 tokens.
    Utilisation: 1.16 / 79.19 = 1.46 % -> 0.02, 1.58 GiB, 3.9 % of the pool.
    Batch: 1024 x 0.598 / 1.16 = 527.9 -> 527, 48.5 % of the slots. The pool's 3.9 % leads."""
    facts = _sized_sampler_oom(538_304, 41.07, free_gib=0.598)
    finding = _one(op1_oom.RULE_OOM_SAMPLER, facts)
    assert _changes(finding) == {"--gpu-memory-utilization": "0.93"}
    assert [(a.flag, a.proposed) for a in finding.alternatives] == [("--max-num-seqs", "527")]
    assert "20,759 of its 538,304 tokens (3.9%)" in finding.changes[0].cost
    assert op1_oom.RULE_OOM_OTHER.evaluate(facts) == []  # the chained torch error is the same failure


def test_sampler_warmup_oom_on_a_small_pool_leads_with_the_batch_cut():
    """Same allocation on a 2 GiB pool: 1.58 GiB would be 79 % of it; 1024 x 1.0 / 1.16 = 882 cuts 14 %."""
    finding = _one(op1_oom.RULE_OOM_SAMPLER, _sized_sampler_oom(26_000, 2.0, free_gib=1.0))
    assert _changes(finding) == {"--max-num-seqs": "882"}
    assert [(a.flag, a.proposed) for a in finding.alternatives] == [("--gpu-memory-utilization", "0.93")]


def test_cudagraph_oom_proposes_enforce_eager_or_fewer_sequences():
    facts = Facts(config=config(max_num_seqs=256), events=[event(K.CUDA_OOM, oom_phase=OomPhase.CUDAGRAPH_CAPTURE)])
    finding = _one(op1_oom.RULE_OOM_CUDAGRAPH, facts)
    assert _changes(finding) == {"--enforce-eager": "true"}
    assert [(a.flag, a.proposed) for a in finding.alternatives] == [("--max-num-seqs", "128")]


def test_oom_in_an_unknown_phase_frees_the_failed_allocation_rounded_up_to_a_hundredth():
    """2 GiB of a 79.19 GiB GPU is 2.53 % -> 0.03: 0.95 -> 0.92."""
    facts = Facts(
        config=config(gpu_memory_utilization=0.95),
        events=[
            event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, tried_to_allocate_gib=2.0, free_gib=0.0004, total_gib=79.19)
        ],
    )
    finding = _one(op1_oom.RULE_OOM_OTHER, facts)
    assert _changes(finding) == {"--gpu-memory-utilization": "0.92"}
    assert "tried 2 GiB" in finding.title and "frees 2.38 GiB" in finding.changes[0].reason


def test_a_few_mib_failing_on_a_full_gpu_also_offers_eager_mode_for_cuda_graph_capture():
    # vllm#15598: "Tried to allocate 2.00 MiB … 448.00 KiB is free"; the start succeeded with --enforce-eager
    small = {"tried_to_allocate_gib": 2 / 1024, "free_gib": 448 / 1024**2, "total_gib": 44.53}
    finding = _one(op1_oom.RULE_OOM_OTHER, Facts(events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, **small)]))
    assert [(a.flag, a.proposed) for a in finding.alternatives] == [("--enforce-eager", "true")]
    assert (
        "CUDA graph capture" in finding.alternatives[0].reason
        and "a 2 MiB allocation" in finding.alternatives[0].reason
    )
    eager = Facts(config=config(enforce_eager=True), events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, **small)])
    large = {**small, "tried_to_allocate_gib": 2.0}
    for facts in (eager, Facts(events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, **large)])):
        assert not [a for a in _one(op1_oom.RULE_OOM_OTHER, facts).alternatives if a.flag == "--enforce-eager"]


def test_oom_where_pytorch_alone_holds_more_than_the_share_is_the_weights_not_the_pool():
    # QwenLM/Qwen3 issue 67: a 72B model on one 80 GB GPU; PyTorch 78.33 GiB > 0.9 x 79.33 = 71.4 GiB
    oom = {"tried_to_allocate_gib": 0.375, "free_gib": 0.34, "total_gib": 79.33, "torch_allocated_gib": 78.33}
    finding = _one(op1_oom.RULE_OOM_OTHER, Facts(events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, **oom)]))
    assert _changes(finding) == {"--tensor-parallel-size": "2"} and "beyond the 71.4 GiB share" in finding.title
    assert [a.flag for a in finding.alternatives] == ["--quantization"]
    # another process on the GPU, or PyTorch within the share: the failed allocation's headroom, as before
    for other in ({"other_processes": True}, {"torch_allocated_gib": 70.0}):
        facts = Facts(events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, **{**oom, **other})])
        assert list(_changes(_one(op1_oom.RULE_OOM_OTHER, facts))) == ["--gpu-memory-utilization"]


def test_oom_beside_another_process_leaves_it_and_the_failed_allocation_outside_the_share():
    # NovaSky-AI/SkyRL PR 2051: 594 MiB failed, 582 MiB free of 22.03 GiB; another process held 796 MiB
    oom = {"tried_to_allocate_gib": 594 / 1024, "free_gib": 582 / 1024, "total_gib": 22.03}
    others = {"other_processes": True, "other_processes_gib": 796 / 1024, "this_process_gib": 20.67}
    finding = _one(
        op1_oom.RULE_OOM_OTHER, Facts(events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, **oom, **others)])
    )
    # (0.777 + 0.580) / 22.03 = 6.2 % -> 0.07: 0.90 -> 0.83
    assert _changes(finding) == {"--gpu-memory-utilization": "0.83"}
    assert "another process" in finding.title and "0.78 GiB" in finding.title and "20.67 GiB" in finding.title
    assert "sampler warm-up" in finding.summary and "CUDA graph capture" in finding.summary


def test_oom_without_the_gpus_size_lowers_utilization_by_the_fixed_step_and_says_so():
    facts = Facts(
        config=config(gpu_memory_utilization=0.95),
        events=[event(K.CUDA_OOM, oom_phase=OomPhase.UNKNOWN, tried_to_allocate_gib=2.0, free_gib=0.0004)],
    )
    finding = _one(op1_oom.RULE_OOM_OTHER, facts)
    assert _changes(finding) == {"--gpu-memory-utilization": "0.90"}
    assert "fixed step" in finding.changes[0].reason


def test_profiling_error_has_no_flag_but_an_action():
    facts = Facts(events=[event(K.MEMORY_PROFILING_ERROR, initial_free_gib=40.1, current_free_gib=44.3)])
    finding = _one(op1_free_memory.RULE_PROFILING, facts)
    assert finding.changes == [] and finding.actions


def test_engine_failure_without_known_cause_is_reported_once():
    assert _one(op1_unexplained.RULE_UNEXPLAINED, Facts(events=[event(K.ENGINE_CORE_FAILED)])).confidence == 0.5


def test_a_worker_that_failed_to_start_is_the_same_wrapper_and_the_finding_says_where_its_cause_is():
    # vllm#45784, verbatim: the engine core's multiproc executor after a GPU worker failed (vLLM 0.23)
    line = (
        "(EngineCore pid=1362711) ERROR 06-22 10:58:02 [core.py:1195] Exception: WorkerProc initialization failed "
        "due to an exception in a background process. See stack trace for root cause."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-1.9" and "a GPU worker process failed" in top.title
    assert "(VllmWorker rank=N pid=…)" in top.actions[0] and "OOMKilled" in top.actions[1]


@pytest.mark.parametrize(
    "line",
    [
        # vllm#10856, verbatim: V0's front end (0.6) after the engine process failed to start in Docker
        "zmq.error.ZMQError: Operation not supported",
        "future: <Task finished name='Task-10' coro=<MQLLMEngineClient.run_output_handler_loop() done, defined at "
        "/usr/local/lib64/python3.9/site-packages/vllm/engine/multiprocessing/client.py:178>"
        "exception=ZMQError('Operation not supported')>",
    ],
)
def test_the_front_ends_closed_sockets_are_an_engine_that_failed_to_start_with_its_cause_before(line):
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-1.9" and "the engine failed" in top.title
    assert "closed" in top.summary and "first traceback before it" in top.summary


def test_closed_sockets_after_a_known_cause_leave_it_to_the_specific_rule():
    lines = [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.10 GiB of which 1.06 GiB is free.",
        "zmq.error.ZMQError: Operation not supported",
    ]
    assert evaluate(Facts(events=parse_lines(lines).events)).top.rule != "OP-1.9"


def test_engine_failure_with_a_known_cause_leaves_it_to_the_specific_rule():
    facts = Facts(events=[event(K.NO_CACHE_BLOCKS, 1), event(K.ENGINE_CORE_FAILED, 2)])
    assert op1_unexplained.RULE_UNEXPLAINED.evaluate(facts) == []


@pytest.mark.parametrize(
    "rule", op1_kv_fit.RULES + op1_free_memory.RULES + op1_oom.RULES + op1_unexplained.RULES, ids=lambda r: r.code
)
def test_startup_rules_are_silent_on_a_clean_startup_log(rule):
    facts = Facts(
        events=[
            event(K.VERSION, 1, version="0.33.0"),
            event(K.AVAILABLE_KV_MEMORY, 2, available_kv_gib=57.1),
            event(K.KV_CACHE_SIZE, 3, kv_cache_tokens=415792, max_model_len=32768, max_concurrency=12.69),
        ]
    )
    assert rule.evaluate(facts) == []


def test_no_cache_blocks_on_a_host_without_gpus_for_the_split_puts_what_fits_it_first():
    # The one 80 GB GPU: weights leave no KV room; the maintainers raised the share before any TP
    facts = Facts(
        hardware=h100(count=1),
        config=config(quantization=None, gpu_memory_utilization=0.9),
        events=[
            event(K.MODEL_LOADING, 1, weights_gib=67.72),
            event(K.AVAILABLE_KV_MEMORY, 2, available_kv_gib=-1.44),
            event(K.NO_CACHE_BLOCKS, 3),
        ],
    )
    finding = _one(op1_kv_fit.RULE_NO_CACHE_BLOCKS, facts)
    assert [c.flag for c in finding.changes] == ["--gpu-memory-utilization"]
    assert [a.flag for a in finding.alternatives][:1] == ["--quantization"]
    split = finding.alternatives[-1]
    assert (split.flag, split.proposed) == ("--tensor-parallel-size", "2") and "more hardware" in split.cost


def test_torch_npus_out_of_memory_is_read_with_its_numbers_and_named_as_the_npus():
    """vllm-ascend#1987's line, verbatim with the issue title's 【BUG】： before it: torch_npu words its allocator's
    failure as torch before 2.1 worded CUDA's, which is read the same way (numbers included)."""
    line = (
        "【BUG】：RuntimeError: NPU out of memory. Tried to allocate 3.47 GiB (NPU 0; 60.97 GiB total capacity; "
        "58.92 GiB already allocated; 58.92 GiB current active; 1.66 GiB free; 58.95 GiB reserved in total by "
        "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation."
    )
    [oom] = [e for e in parse_lines([line]).events if e.kind == K.CUDA_OOM]
    assert (oom.device, oom.tried_to_allocate_gib, oom.total_gib, oom.torch_allocated_gib) == (
        "NPU",
        3.47,
        60.97,
        58.92,
    )
    assert oom.free_gib == 1.66
    [finding] = op1_oom.RULE_OOM_OTHER.evaluate(Facts(events=[oom]))
    assert finding.title.startswith("NPU out of memory") and "CUDA" not in finding.title


def test_rocms_and_intels_allocators_are_read_with_their_numbers_and_named_as_what_ran_out():
    """RooCodeInc/Roo-Code#6541 (vLLM on an AMD GPU, the error returned to the client inside V0's `Engine loop is not
    running`) and intel/ipex-llm#12584 (an Arc A770 in Docker Compose: no free figure), verbatim."""
    hip = (
        "Engine loop is not running. Inspect the stacktrace to find the original error: OutOfMemoryError('HIP out of "
        "memory. Tried to allocate 1.63 GiB. GPU 0 has a total capacity of 63.98 GiB of which 1.18 GiB is free. Of "
        "the allocated memory 57.09 GiB is allocated by PyTorch, with 26.00 MiB allocated in private pools (e.g., HIP "
        "Graphs), and 1.23 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
        "try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
        "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)')."
    )
    xpu = (
        "intel-gpu-vllm  | RuntimeError: XPU out of memory. Tried to allocate 1.02 GiB (GPU 0; 15.56 GiB total "
        "capacity; 0 bytes already allocated; 0 bytes reserved in total by PyTorch)"
    )
    [on_rocm] = [e for e in parse_lines([hip]).events if e.kind == K.CUDA_OOM]
    assert (on_rocm.device, on_rocm.tried_to_allocate_gib, on_rocm.total_gib, on_rocm.free_gib) == (
        "HIP",
        1.63,
        63.98,
        1.18,
    )
    [on_xpu] = [e for e in parse_lines([xpu]).events if e.kind == K.CUDA_OOM]
    assert (on_xpu.device, on_xpu.tried_to_allocate_gib, on_xpu.total_gib, on_xpu.free_gib) == (
        "XPU",
        1.02,
        15.56,
        None,
    )
    assert on_xpu.torch_allocated_gib == 0.0
    for oom, name in ((on_rocm, "HIP"), (on_xpu, "XPU")):
        [finding] = op1_oom.RULE_OOM_OTHER.evaluate(Facts(events=[oom]))
        assert finding.title.startswith(f"{name} out of memory") and "CUDA" not in finding.title


def test_torch_before_2_1_words_cudas_out_of_memory_with_the_same_numbers():
    line = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
        "capacity; 14.56 GiB already allocated; 3.12 MiB free; 14.60 GiB reserved in total by PyTorch)"
    )
    [oom] = [e for e in parse_lines([line]).events if e.kind == K.CUDA_OOM]
    assert oom.device is None and oom.total_gib == 15.78 and oom.torch_allocated_gib == 14.56
    assert round(oom.tried_to_allocate_gib * 1024, 2) == 20.0


def test_pytorchs_nvml_assertion_is_an_out_of_memory_worded_without_its_numbers():
    # pytorch#112377: the caching allocator asks NVML for the GPU's memory to word its OOM, and asserts when NVML
    # fails (MIG slices, Jetson); xorbitsai/inference#4229 pasted it from vLLM's engine core at start
    line = (
        "(EngineCore_DP0 pid=8915) ERROR 11-10 02:59:02 [core.py:708] RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT "
        'FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1131, please report a bug to PyTorch. '
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert (top.rule, top.title) == ("OP-1.8", "CUDA out of memory in no phase the text names")
    assert "NVML" in top.summary and top.changes[0].flag == "--gpu-memory-utilization"


def test_a_bare_oom_names_the_device_its_allocator_named():
    top = evaluate(Facts(events=parse_lines(["torch.OutOfMemoryError: XPU out of memory."]).events)).findings[0]
    assert top.rule == "OP-1.8" and top.title.startswith("XPU out of memory")
    cuda = evaluate(Facts(events=parse_lines(["torch.OutOfMemoryError: CUDA out of memory."]).events)).findings[0]
    assert cuda.title.startswith("CUDA out of memory")
