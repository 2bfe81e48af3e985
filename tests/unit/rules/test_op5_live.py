"""OP-5: where a live server's time goes, each sub-rule on its own signal."""

from pathlib import Path

from advisor.collect.logs import parse_lines
from rules.catalog.op5_kv import RULE_PREEMPTION
from rules.catalog.op5_latency import RULE_ITL_LOAD, RULE_ITL_SINGLE, RULE_LONG_PROMPTS, RULE_LONG_TAIL, RULE_TTFT
from rules.catalog.op5_queueing import RULE_IMBALANCE, RULE_KNEE, RULE_SATURATION, RULE_UPSTREAM
from rules.catalog.op5_reliability import RULE_ABORTS, RULE_TOO_LONG
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import ConfigSource, Facts, LoadTestFacts, MemoryFacts, MetricSnapshot, MetricWindow, Sample, Workload
from tests.unit.rules.factories import config, event, live, snapshot


def _flags(finding):
    return {c.flag: c.proposed for c in finding.changes}


def test_high_ttft_with_an_empty_queue_is_prefill_bound_and_raises_the_step_budget():
    facts = live(waiting=0, ttft={6.0: 20})
    facts.config = config(max_num_batched_tokens=2048)
    [finding] = RULE_TTFT.evaluate(facts)
    assert _flags(finding) == {"--max-num-batched-tokens": "4096"}
    assert finding.evidence[0].threshold == 2.0 and finding.evidence[0].value > 5.0


def test_ttft_target_from_the_workload_replaces_the_default():
    facts = live(waiting=0, ttft={0.8: 50})
    facts.workload = Workload(ttft_slo_s=0.5)
    assert RULE_TTFT.evaluate(facts)[0].evidence[0].threshold == 0.5


def test_high_ttft_with_a_queue_is_not_called_prefill_bound():
    assert RULE_TTFT.evaluate(live(waiting=5, ttft={6.0: 20})) == []


def test_queue_at_the_batch_cap_with_free_kv_raises_max_num_seqs_within_kv_capacity():
    facts = live(running=256, waiting=12, kv=0.55, ttft={3.0: 50})
    facts.config = config(max_num_seqs=256)
    facts.memory = MemoryFacts(kv_cache_tokens=1_000_000)
    facts.workload = Workload(p95_input_tokens=2000, p95_output_tokens=500)
    [finding] = RULE_SATURATION.evaluate(facts)
    assert _flags(finding) == {"--max-num-seqs": "400"}  # 1,000,000 / 2,500 caps the doubling (512)
    assert finding.severity.value == "high"


def test_a_batch_sitting_on_a_default_cap_with_free_kv_is_the_cap_though_the_flag_is_unknown():
    # A stats line alone: 256 running is vLLM's default --max-num-seqs below 70 GiB, 1024 above; the GPU is
    # unknown, so either is the cap when the batch holds exactly that many with requests waiting and KV room.
    for running in (256, 1024):
        [finding] = RULE_SATURATION.evaluate(live(running=running, waiting=95, kv=0.42))
        assert f"at --max-num-seqs {running}, vLLM's default" in finding.title
        assert _flags(finding) == {"--max-num-seqs": str(2 * running)}
        [cap] = [e for e in finding.evidence if e.name == "--max-num-seqs"]
        assert cap.source == "default" and "not in the text" in cap.description


def test_a_batch_off_every_default_or_without_a_kv_reading_says_nothing_of_the_cap():
    no_kv = Facts(snapshot=snapshot({"vllm:num_requests_running": 256, "vllm:num_requests_waiting": 95}, {}, {}))
    for facts in (live(running=200, waiting=95, kv=0.42), no_kv):
        [finding] = RULE_SATURATION.evaluate(facts)
        assert "at --max-num-seqs" not in finding.title and not finding.changes


def test_data_parallel_engines_each_sit_on_the_default_cap_and_the_flag_is_per_engine():
    # vLLM's stats lines come one per engine; running sums them, the cap is each engine's own
    line = (
        "(APIServer pid=1) INFO 12-01 03:10:02 [loggers.py:257] Engine 00{n}: Avg prompt throughput: 800.0 tokens/s, "
        "Avg generation throughput: 2300.0 tokens/s, Running: 256 reqs, Waiting: 40 reqs, GPU KV cache usage: 41.0%, "
        "Prefix cache hit rate: 3.0%"
    )
    facts = Facts(events=parse_lines([line.format(n=0), line.format(n=1)]).events)
    [finding] = RULE_SATURATION.evaluate(facts)
    assert "running 512 at --max-num-seqs 256, vLLM's default" in finding.title
    assert _flags(finding) == {"--max-num-seqs": "512"}


def test_a_known_gpu_narrows_the_default_to_its_own():
    facts = live(running=1024, waiting=30, kv=0.40)
    facts.memory = MemoryFacts(total_gib=22.0)  # an L4: vLLM's default is 256 there, so 1024 was set, not defaulted
    [finding] = RULE_SATURATION.evaluate(facts)
    assert "at --max-num-seqs" not in finding.title


def test_queue_with_full_kv_is_capacity_and_offers_fp8_kv():
    facts = live(running=60, waiting=14, kv=0.99)
    [finding] = RULE_SATURATION.evaluate(facts)
    assert "KV usage 0.99" in finding.title
    assert [a.flag for a in finding.alternatives] == ["--kv-cache-dtype"]
    # in both vLLM's words for the queue (V0's stats line says Pending), with the cache's fill
    assert "waiting; V0's stats line says Pending" in finding.summary and "KV cache is 99% used" in finding.summary
    assert finding.actions == ["Raise the GPU count (replicas, or larger GPUs): the KV cache is full."]


def test_no_queue_no_saturation_finding():
    assert RULE_SATURATION.evaluate(live(running=60, waiting=0, kv=0.99)) == []


def test_preemptions_with_full_kv_cap_max_num_seqs_at_what_fits():
    facts = live(running=60, waiting=14, kv=0.99, preemptions_added=12)
    facts.config = config(max_num_seqs=256)
    facts.memory = MemoryFacts(kv_cache_tokens=162_704)
    facts.workload = Workload(p95_input_tokens=3000, p95_output_tokens=1000)
    [finding] = RULE_PREEMPTION.evaluate(facts)
    assert finding.title == "KV usage 0.99 > 0.9 with 1.2 preemptions/s > 0"
    assert _flags(finding) == {"--max-num-seqs": "40"}  # 162,704 / 4,000
    assert finding.severity.value == "high"
    rate = finding.evidence[0]
    assert (rate.value, rate.threshold, rate.unit) == (1.2, 0, "/s")


def test_a_kv_space_given_in_bytes_offers_room_for_the_requests_in_flight():
    # vLLM's CPU backend at --kv-cache-memory-bytes 45 MiB = 2,048 tokens (23,040 bytes each): 7 running and
    # 9 waiting at 680 tokens each (p95 prompt + p95 max_tokens) need 16 x 680 x 23,040 = 250.7 MB, 240 MiB.
    facts = live(running=7, waiting=9, kv=1.0, preemptions_added=2)
    facts.config = config(max_num_seqs=128, kv_cache_memory_bytes=47_185_920, device="cpu")
    facts.memory = MemoryFacts(kv_cache_tokens=2048)
    facts.workload = Workload(p95_input_tokens=195, p95_output_tokens=485)
    [finding] = RULE_PREEMPTION.evaluate(facts)
    [larger] = [a for a in finding.alternatives if a.flag == "--kv-cache-memory-bytes"]
    assert (larger.current, larger.proposed) == ("47185920", str(240 * 2**20))
    assert "16 requests in flight" in larger.reason and "240 MiB instead of 45 MiB" in larger.reason
    assert "--gpu-memory-utilization" not in [a.flag for a in finding.alternatives]  # the space is not a share


def _preempting_h100(running: int, waiting: int, pool_gib: float) -> Facts:
    """Llama-3.1-8B on an H100 (79.18 GiB) at --gpu-memory-utilization 0.85: 131,072 KV bytes per token
    (2 x 32 layers x 8 KV heads x 128 dims x 2 bytes), requests of 3,000 + 1,000 tokens at p95."""
    facts = live(running=running, waiting=waiting, kv=0.99, preemptions_added=12)
    facts.config = config(max_num_seqs=256, gpu_memory_utilization=0.85)
    tokens = int(pool_gib * 2**30 / 131_072)
    facts.memory = MemoryFacts(
        total_gib=79.18, available_kv_gib=pool_gib, kv_bytes_per_token=131_072, kv_cache_tokens=tokens
    )
    facts.workload = Workload(p95_input_tokens=3000, p95_output_tokens=1000)
    return facts


def test_on_a_gpu_the_utilisation_is_sized_for_the_requests_in_flight():
    # 40 requests x 4,000 tokens x 128 KiB = 19.53 GiB of KV against 15 GiB: 4.53 GiB more out of 79.18 GiB
    # is 0.057 more of the device, so 0.85 -> 0.91 (rounded up to the hundredth).
    [finding] = RULE_PREEMPTION.evaluate(_preempting_h100(running=30, waiting=10, pool_gib=15.0))
    [share] = [a for a in finding.alternatives if a.flag == "--gpu-memory-utilization"]
    assert (share.current, share.proposed) == ("0.85", "0.91")
    assert "40 requests in flight" in share.reason and "19.53 GiB of KV per GPU instead of 15 GiB" in share.reason
    assert share.cost == "4.75 GiB less headroom on each 79.18 GiB GPU"


def test_a_share_past_the_safe_maximum_stops_there_and_says_how_many_requests_it_holds():
    # 74 requests need 36.13 GiB against 20 GiB: 1.06 of the device, past 0.95. At 0.95 the pool is
    # 20 + 0.10 x 79.18 = 27.92 GiB, which holds 57 requests of 4,000 tokens.
    [finding] = RULE_PREEMPTION.evaluate(_preempting_h100(running=60, waiting=14, pool_gib=20.0))
    [share] = [a for a in finding.alternatives if a.flag == "--gpu-memory-utilization"]
    assert share.proposed == "0.95"
    assert "57 of the 74 requests in flight" in share.reason and "all of them would need 1.06" in share.reason


def test_without_memory_figures_the_utilisation_offered_is_vllms_default():
    facts = _preempting_h100(running=30, waiting=10, pool_gib=15.0)
    facts.memory = MemoryFacts(kv_cache_tokens=122_880)
    [finding] = RULE_PREEMPTION.evaluate(facts)
    [share] = [a for a in finding.alternatives if a.flag == "--gpu-memory-utilization"]
    assert (share.proposed, share.reason) == ("0.92", "more memory for KV blocks")


def test_a_kv_space_left_at_its_default_is_not_grown_in_bytes():
    facts = live(running=7, waiting=9, kv=1.0, preemptions_added=2)
    facts.config = config(max_num_seqs=128, kv_cache_memory_bytes=47_185_920, source=ConfigSource.DEFAULT)
    facts.memory = MemoryFacts(kv_cache_tokens=2048)
    facts.workload = Workload(p95_input_tokens=195, p95_output_tokens=485)
    [finding] = RULE_PREEMPTION.evaluate(facts)
    assert "--kv-cache-memory-bytes" not in [a.flag for a in finding.alternatives]


def test_preemptions_from_stats_lines_are_a_rate_over_their_intervals():
    facts = Facts(
        events=[
            event(K.STATS_LINE, i, running=48, waiting=9, kv_usage=0.98, preemptions=n)
            for i, n in enumerate((5, 7, 6), start=1)
        ],
        config=config(max_num_seqs=128),
    )
    [finding] = RULE_PREEMPTION.evaluate(facts)
    assert finding.evidence[0].value == 0.6  # 18 preemptions / 30 s
    assert _flags(finding) == {"--max-num-seqs": "36"}  # 75 % of 48 running


def test_since_start_preemption_counter_alone_is_weak_evidence():
    facts = Facts(
        snapshot=snapshot(
            gauges={"vllm:num_requests_running": 8, "vllm:gpu_cache_usage_perc": 0.5},
            counters={"vllm:num_preemptions_total": 42},
        )
    )
    [finding] = RULE_PREEMPTION.evaluate(facts)
    assert finding.confidence == 0.5 and finding.severity.value == "medium"


def test_no_preemptions_no_finding_even_at_high_kv_usage():
    assert RULE_PREEMPTION.evaluate(live(running=60, kv=0.97, preemptions_added=0)) == []


def test_high_itl_under_load_lowers_a_large_step_budget_to_2048():
    facts = live(running=120, itl={0.04: 20_000, 0.25: 10_000})
    facts.config = config(max_num_batched_tokens=8192)
    [finding] = RULE_ITL_LOAD.evaluate(facts)
    assert _flags(finding) == {"--max-num-batched-tokens": "2048"}
    assert finding.evidence[0].threshold == 0.1 and finding.evidence[0].value > 0.2


def test_high_itl_with_one_request_is_not_a_load_problem():
    facts = live(running=1, itl={0.14: 2000})
    assert RULE_ITL_LOAD.evaluate(facts) == []
    assert RULE_ITL_SINGLE.evaluate(facts)[0].severity.value == "medium"


def test_fewer_requests_in_the_server_than_clients_sent_points_upstream():
    facts = live(running=20, waiting=0)
    facts.workload = Workload(client_concurrency=64)
    [finding] = RULE_UPSTREAM.evaluate(facts)
    assert "running + waiting 20 < 80 % of 64" in finding.title
    assert finding.severity.value == "high"  # 44 of the 64 wait outside the server
    facts = live(running=40, waiting=0)
    facts.workload = Workload(client_concurrency=64)
    [finding] = RULE_UPSTREAM.evaluate(facts)
    assert finding.severity.value == "medium" and "outside" not in finding.summary  # most reach it


def _two_scrapes(start: tuple[float, float], end: tuple[float, float]) -> Facts:
    """A scrape pair whose running/waiting gauges differ between its two ends."""
    before, after = (
        snapshot(
            {"vllm:num_requests_running": run, "vllm:num_requests_waiting": wait},
            {"vllm:generation_tokens_total": n},
        )
        for (run, wait), n in ((start, 1e6), (end, 1e6 + 500))
    )
    return Facts(snapshot=after, window=MetricWindow.from_snapshots(before, after, 2.0))


def test_one_scrape_catching_a_closed_loop_client_between_requests_is_not_an_upstream_bottleneck():
    """The demo's case (4 Locust users, --max-num-seqs 1): the second scrape saw 1 running + 2 waiting
    while the fourth user was between two requests; the first saw all 4 inside. A hold-up before vLLM
    would show at both scrapes, so this is no OP-5.6 finding, and the queue behind the cap stays on top."""
    facts = _two_scrapes(start=(1, 3), end=(1, 2))
    facts.workload = Workload(client_concurrency=4)
    assert RULE_UPSTREAM.evaluate(facts) == []


def test_a_shortfall_at_both_scrapes_is_upstream_and_names_both_instants():
    facts = _two_scrapes(start=(1, 1), end=(1, 2))
    facts.workload = Workload(client_concurrency=4)
    [finding] = RULE_UPSTREAM.evaluate(facts)
    assert "running + waiting 3 < 80 % of 4" in finding.title  # the larger of the two ends
    assert [e.location for e in finding.evidence if e.name == "running + waiting"] == ["start of the 2 s window"]
    assert [e.value for e in finding.evidence if e.name == "running + waiting"] == [2.0]


def test_most_client_requests_held_upstream_ranks_before_the_servers_own_slow_steps():
    """Real vLLM behind a 4-connection client pool with 64 requests in flight (the vLLM tier's overload
    case): its ITL p99 at 4 running is the server's own reading, but 60 of the 64 requests never reach
    it, so the hold-up is what the clients feel first."""
    facts = live(running=4, waiting=0, itl={0.03: 900, 0.49: 100})
    facts.workload = Workload(client_concurrency=64)
    ranked = evaluate(facts).findings
    [upstream] = [f for f in ranked if f.rule == "OP-5.6"]
    assert upstream.severity.value == "high" and "94%" in upstream.summary
    assert "OP-5.4" in [f.rule for f in ranked]
    assert ranked[0].rule == "OP-5.6"


def test_p95_prompt_above_the_step_budget_is_a_low_note_with_a_power_of_two_budget():
    facts = Facts(config=config(max_num_batched_tokens=2048), workload=Workload(p95_input_tokens=6000))
    [finding] = RULE_LONG_PROMPTS.evaluate(facts)
    assert finding.severity.value == "low" and _flags(finding) == {"--max-num-batched-tokens": "8192"}


def test_abort_share_above_five_percent_is_flagged():
    def snap(stop, abort):
        return MetricSnapshot(
            counters={
                "vllm:request_success_total": [
                    Sample(labels={"finished_reason": "stop"}, value=stop),
                    Sample(labels={"finished_reason": "abort"}, value=abort),
                ]
            }
        )

    facts = Facts(window=MetricWindow.from_snapshots(snap(0, 0), snap(88, 12), 10.0))
    [finding] = RULE_ABORTS.evaluate(facts)
    assert finding.evidence[0].value == 0.12 and finding.evidence[0].threshold == 0.05


def _ramp(itl_after_knee: float, throughput_after_knee: float) -> LoadTestFacts:
    return LoadTestFacts.model_validate(
        {
            "steps": [
                {
                    "offered": 4,
                    "requests": 200,
                    "output_tokens_per_s": 900,
                    "itl_s": {"p99": 0.04},
                    "server": {"num_requests_running": 30},
                },
                {
                    "offered": 8,
                    "requests": 400,
                    "output_tokens_per_s": 1600,
                    "itl_s": {"p99": 0.05},
                    "server": {"num_requests_running": 62},
                },
                {
                    "offered": 12,
                    "requests": 600,
                    "output_tokens_per_s": throughput_after_knee,
                    "itl_s": {"p99": itl_after_knee},
                    "server": {"num_requests_running": 140},
                },
            ],
            "knee": {"offered": 8},
            "safe_operating_point": {"offered": 7.2},
        }
    )


def test_past_the_knee_latency_grows_but_throughput_does_not_so_cap_at_the_knee_batch():
    facts = Facts(
        loadtest=_ramp(itl_after_knee=0.12, throughput_after_knee=1650),
        config=config(ConfigSource.DEFAULT, max_num_seqs=256),
    )
    [finding] = RULE_KNEE.evaluate(facts)
    assert _flags(finding) == {"--max-num-seqs": "62"}
    assert {e.name: e.value for e in finding.evidence}["ITL p99 growth past the knee"] == 2.4


def test_past_the_knee_with_real_throughput_gains_is_fine():
    assert RULE_KNEE.evaluate(Facts(loadtest=_ramp(itl_after_knee=0.12, throughput_after_knee=2200))) == []


PROMPT_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)


def _tail_facts(version: str | None) -> Facts:
    from tests.unit.rules.factories import TTFT_BUCKETS, histogram

    def snap(ttft, prompts):
        return snapshot(
            histograms={
                "vllm:time_to_first_token_seconds": histogram(ttft, TTFT_BUCKETS),
                "vllm:request_prompt_tokens": histogram(prompts, PROMPT_BUCKETS),
            }
        )

    before = snap({}, {})
    after = snap({0.2: 95, 6.0: 5}, {800: 95, 15000: 5})  # 5 % long prompts, 5 % slow first tokens
    facts = Facts(window=MetricWindow.from_snapshots(before, after, 60.0))
    if version:
        facts.config = config(vllm_version=version)
    return facts


def test_ttft_tail_with_a_matching_prompt_tail_is_blamed_on_long_prompts():
    [finding] = RULE_LONG_TAIL.evaluate(_tail_facts("0.33.0"))
    names = {e.name: e for e in finding.evidence}
    assert names["TTFT p99 / p50"].value >= 5 and names["prompt tokens p99 / p50"].value >= 4
    assert _flags(finding) == {"--long-prefill-token-threshold": "2048"}  # 2 x p50 prompt (~590) -> power of two


def test_long_prefill_threshold_is_only_proposed_where_vllm_has_it():
    [finding] = RULE_LONG_TAIL.evaluate(_tail_facts("0.15.0"))
    assert finding.changes == [] and finding.actions


def test_uniform_slowness_is_not_a_long_prompt_tail():
    from tests.unit.rules.factories import TTFT_BUCKETS, histogram

    def snap(ttft, prompts):
        return snapshot(
            histograms={
                "vllm:time_to_first_token_seconds": histogram(ttft, TTFT_BUCKETS),
                "vllm:request_prompt_tokens": histogram(prompts, PROMPT_BUCKETS),
            }
        )

    facts = Facts(window=MetricWindow.from_snapshots(snap({}, {}), snap({6.0: 100}, {800: 100}), 60.0))
    assert RULE_LONG_TAIL.evaluate(facts) == []


def _two_replicas(a: tuple[float, float], b: tuple[float, float]) -> Facts:
    def snap():
        return MetricSnapshot(
            gauges={
                "vllm:num_requests_running": [
                    Sample(labels={"instance": "a:8000"}, value=a[0]),
                    Sample(labels={"instance": "b:8000"}, value=b[0]),
                ],
                "vllm:num_requests_waiting": [
                    Sample(labels={"instance": "a:8000"}, value=a[1]),
                    Sample(labels={"instance": "b:8000"}, value=b[1]),
                ],
            }
        )

    return Facts(window=MetricWindow.from_snapshots(snap(), snap(), 30.0))


def test_one_replica_queueing_while_another_idles_is_an_imbalance():
    [finding] = RULE_IMBALANCE.evaluate(_two_replicas((60, 12), (9, 0)))
    assert finding.title.startswith("a:8000 has 12 waiting while b:8000 has 9 requests")
    assert finding.evidence[1].threshold == 30.0


def test_evenly_loaded_replicas_are_fine():
    assert RULE_IMBALANCE.evaluate(_two_replicas((60, 12), (58, 10))) == []


def test_rejected_long_requests_raise_max_model_len_when_the_memory_allows():
    events = [
        event(
            K.REQUEST_TOO_LONG,
            i,
            max_model_len=8192,
            prompt_tokens=9000 + i,
            requested_tokens=11300 if i == 3 else None,
        )
        for i in range(1, 6)
    ]
    facts = Facts(events=events, memory=MemoryFacts(max_model_len_that_fits=26048))
    [finding] = RULE_TOO_LONG.evaluate(facts)
    assert finding.severity.value == "medium" and _flags(finding) == {"--max-model-len": "12288"}
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (11300, 8192)


def test_rejected_long_requests_without_memory_figures_only_advise():
    facts = Facts(events=[event(K.REQUEST_TOO_LONG, max_model_len=8192, prompt_tokens=9000)])
    [finding] = RULE_TOO_LONG.evaluate(facts)
    assert finding.severity.value == "low" and finding.changes == [] and finding.actions


def test_a_max_tokens_refused_as_too_large_counts_the_prompt_and_the_max_tokens():
    """vLLM 0.10-0.17's words name the max_tokens and the prompt's tokens, not their sum: the request is both."""
    line = (
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"'max_tokens' or "
        "'max_completion_tokens' is too large: 4096. This model's maximum context length is 4096 tokens and your "
        "request has 300 input tokens (4096 > 4096 - 300). None\", 'type': 'BadRequestError', 'param': None, 'code': "
        "400}"
    )
    [finding] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.endswith("(longest 4,396 tokens)")
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (4396, 4096)
    assert finding.actions[0].startswith("Lower the request's max_tokens in the client to at most 3,796")


def test_a_prompt_refused_with_vllms_words_on_image_tokens_lowers_the_images_resolution_first():
    # EvolvingLMMs-Lab/lmms-eval#988: Qwen2.5-VL under an evaluation harness, 163k tokens of images and text
    line = (
        "ValueError: The decoder prompt (length 163270) is longer than the maximum model length of 128000. Make "
        "sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens. For image "
        "inputs, the number of image tokens depends on the number of images, and possibly their aspect ratios."
    )
    [finding] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([line]).events))
    assert (
        finding.actions[0].startswith("Make the images cost fewer tokens") and "lower max_pixels" in finding.actions[0]
    )
    assert "images' (or video frames') tokens" in finding.summary
    plain = Facts(events=[event(K.REQUEST_TOO_LONG, max_model_len=8192, prompt_tokens=9000)])
    assert not RULE_TOO_LONG.evaluate(plain)[0].actions[0].startswith("Make the images")


def test_every_releases_words_for_a_prompt_over_the_context_are_a_request_too_long():
    # 0.7's V1 processor (hiyouga/LlamaFactory#7723), and 0.11 on, which counts the first output token with the prompt
    older = "ValueError: Prompt length of 5016 is longer than the maximum model length of 4096."
    newer = (
        "ValueError: The decoder prompt (length 8192) plus the number of requested output tokens (at least 1) is "
        "longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number "
        "of text tokens (prompt + requested output tokens)."
    )
    [five] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([older]).events))
    assert five.title.endswith("--max-model-len 4096 (longest 5,016 tokens)")
    [exact] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([newer]).events))
    assert exact.title.endswith("--max-model-len 8192 (longest 8,193 tokens)")  # the prompt and one output token
    [longer] = exact.alternatives
    assert "8,192 tokens, the whole context, with no room to answer" in longer.reason


def test_sglangs_words_and_litellms_context_window_error_are_a_request_too_long():
    # getkimchi/kimchi#794, verbatim: LiteLLM's hosted_vllm provider relaying the refusal, the paste cut after "the"
    cut = (
        'Error: {"detail":"ContextWindowExceededError: Hosted_vllmException - {\\"object\\":\\"error\\",\\"message\\"'
        ':\\"The input (1492905 tokens) is longer than the'
    )
    [relayed] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([cut]).events))
    assert relayed.title == "1 request(s) longer than the context length (longest 1,492,905 tokens)"
    whole = "The input (90000 tokens) is longer than the model's context length (65536 tokens)."
    [sglang] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([whole]).events))
    assert sglang.title.endswith("--max-model-len 65536 (longest 90,000 tokens)")
    chain = (
        "litellm.exceptions.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
        "Hosted_vllmException - Error code: 400"
    )
    findings = evaluate(Facts(events=parse_lines([chain]).events)).findings
    assert [f.title for f in findings] == ["1 request(s) longer than the context length"]


def test_data_parallel_stats_lines_sum_per_engine_and_keep_the_fullest_kv():
    lines = []
    for _interval in range(3):
        for engine, kv in (("0", 0.97), ("1", 0.40)):
            lines.append(
                event(
                    K.STATS_LINE,
                    len(lines) + 1,
                    engine=engine,
                    running=20,
                    waiting=3,
                    kv_usage=kv,
                    preemptions=3 if engine == "0" else None,
                )
            )
    [finding] = RULE_PREEMPTION.evaluate(Facts(events=lines))
    assert finding.evidence[0].value == 0.3  # 9 preemptions over 3 intervals of 10 s, not 6
    assert finding.evidence[1].value == 0.97
    [queue] = RULE_SATURATION.evaluate(Facts(events=lines))
    assert queue.evidence[0].value == 6  # 3 waiting on each engine


STEP_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)  # vLLM's iteration_tokens


def _budget_facts(steps: dict[float, int], prompts: dict[float, int]) -> Facts:
    """TTFT 6 s with nothing waiting, and the window's step sizes and prompt lengths as vLLM exposes them."""
    from tests.unit.rules.factories import TTFT_BUCKETS, histogram

    def snap(ttft, step, prompt):
        return snapshot(
            gauges={"vllm:num_requests_waiting": 0, "vllm:num_requests_running": 8},
            histograms={
                "vllm:time_to_first_token_seconds": histogram(ttft, TTFT_BUCKETS),
                "vllm:iteration_tokens_total": histogram(step, STEP_BUCKETS),
                "vllm:request_prompt_tokens": histogram(prompt, PROMPT_BUCKETS),
            },
        )

    facts = Facts(window=MetricWindow.from_snapshots(snap({}, {}, {}), snap({6.0: 20}, steps, prompts), 10.0))
    facts.config = config(max_num_batched_tokens=2048)
    return facts


def test_ttft_with_steps_far_below_the_budget_proposes_no_bigger_budget():
    [finding] = RULE_TTFT.evaluate(_budget_facts({30: 90, 1500: 10}, {150: 20}))
    assert finding.changes == [] and "steps stay below --max-num-batched-tokens 2048" in finding.title
    assert finding.confidence < RULE_ITL_LOAD.evaluate(live(running=32, itl={2.0: 100}))[0].confidence


def test_ttft_with_most_steps_at_the_budget_raises_it():
    [finding] = RULE_TTFT.evaluate(_budget_facts({30: 20, 2048: 80}, {150: 20}))
    assert _flags(finding) == {"--max-num-batched-tokens": "4096"}


def test_ttft_with_prompts_longer_than_the_budget_raises_it():
    [finding] = RULE_TTFT.evaluate(_budget_facts({30: 90, 2048: 10}, {4000: 20}))
    assert _flags(finding) == {"--max-num-batched-tokens": "8192"}  # the p95 prompt as a power of two


def test_itl_under_load_names_the_engine_step_rate():
    from tests.unit.rules.factories import ITL_BUCKETS, histogram

    after = snapshot(
        gauges={"vllm:num_requests_running": 32},
        histograms={
            "vllm:inter_token_latency_seconds": histogram({0.4: 100}, ITL_BUCKETS),
            "vllm:iteration_tokens_total": histogram({30: 40}, STEP_BUCKETS),
        },
    )
    facts = Facts(window=MetricWindow.from_snapshots(snapshot(), after, 8.0))
    [finding] = RULE_ITL_LOAD.evaluate(facts)
    steps = next(e for e in finding.evidence if e.name.startswith("engine steps/s"))
    assert steps.value == 5.0 and finding.changes == []


def test_a_queue_while_preempting_is_the_kv_caches_doing_even_when_the_gauge_dips():
    """Real vLLM 0.32 under a tiny KV space: KV usage read 0.6 at the scrape instant (it dips between
    preemptions) while 12 requests waited and 2.5 preemptions happened per 10 s."""
    facts = live(running=7, waiting=12, kv=0.6, preemptions_added=2.5, ttft={6.0: 20})
    facts.config = config(max_num_seqs=128)
    [preempting] = RULE_PREEMPTION.evaluate(facts)
    [queue] = RULE_SATURATION.evaluate(facts)
    assert preempting.severity.value == "high" and queue.severity.value == "medium"
    assert "the KV cache runs out" in queue.title and "compute-bound" not in queue.title
    assert not queue.changes


def test_a_smaller_step_budget_is_not_proposed_when_no_prompt_or_step_reaches_it():
    """Real vLLM 0.32 with two pipeline stages on its CPU backend defaults to a 4096-token budget; its
    16-stream window had p99 prompts of 199 tokens and p99 steps of 852: 2048 would split nothing, so
    OP-5.4 keeps its finding and drops the change, with the two figures as evidence."""
    from advisor.triage.collect import run_triage
    from advisor.triage.result import TriageRequest

    corpus = Path(__file__).parents[2] / "fixtures" / "vllm_cpu"
    result = run_triage(
        TriageRequest(
            logs=str(corpus / "layout_pp2.log"),
            metrics_files=[str(corpus / "layout_pp2_before.prom"), str(corpus / "layout_pp2_after.prom")],
            metrics_interval_s=10,
        )
    )
    [finding] = [f for f in result.findings if f.rule == RULE_ITL_LOAD.code]
    assert result.facts.config.max_num_batched_tokens == 4096
    assert [c.flag for c in finding.changes if c.flag == "--max-num-batched-tokens"] == []
    budget = [e for e in finding.evidence if e.threshold == 2048 and e.comparison == "<="]
    assert {e.name for e in budget} == {"vllm:request_prompt_tokens p99", "vllm:iteration_tokens_total p99"}


def _stats(at: str, prompt: float, generation: float, running: int, waiting: int) -> str:
    """A stats line as vLLM 0.32's API server prints it every 10 s (vllm/v1/metrics/loggers.py)."""
    return (
        f"(APIServer pid=1) INFO 09-12 {at} [loggers.py:236] Engine 000: Avg prompt throughput: {prompt} tokens/s, "
        f"Avg generation throughput: {generation} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
        "GPU KV cache usage: 4.2%, Prefix cache hit rate: 0.0%"
    )


def test_a_queue_behind_an_engine_that_finished_no_token_is_not_called_compute_bound():
    """The stats line is printed whether the engine steps or not: 0.0 tokens/s with 12 running is a stall, which
    replicas would not mend."""
    lines = [_stats("10:00:00", 512.0, 230.1, 12, 0), _stats("10:00:10", 0.0, 0.0, 12, 40)]
    [queue] = RULE_SATURATION.evaluate(Facts(events=parse_lines(lines).events))
    assert queue.title == "40 requests waiting > 0 (not capacity: 12 running and 0 tokens/s in the last stats interval)"
    assert "stalled, not busy" in queue.actions[0] and "HL-1" in queue.actions[0]
    busy = [_stats("10:00:00", 512.0, 230.1, 12, 40)]
    assert "compute-bound" in RULE_SATURATION.evaluate(Facts(events=parse_lines(busy).events))[0].title


def test_a_request_past_the_context_names_the_multi_turn_client_that_grows_into_it():
    # PrimeIntellect-ai/verifiers#398, verbatim: a multi-turn rollout's history outgrew an 8192-token server
    body = (
        "Error getting model response: Error code: 400 - {'error': {'message': \"This model's maximum context length "
        "is 8192 tokens. However, your request has 8195 input tokens. Please reduce the length of the input messages. "
        "None\", 'type': 'BadRequestError', 'param': None, 'code': 400}}"
    )
    [finding] = RULE_TOO_LONG.evaluate(Facts(events=parse_lines([body]).events))
    assert "--max-model-len 8192" in finding.title and "multi-turn RL rollout" in finding.actions[-1]
