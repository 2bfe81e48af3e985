"""AP-1 … AP-7: configurations that set up a known failure; defaults never fire, symptoms raise severity."""

import pytest

from rules.catalog import ap_features_off, ap_sizing
from rules.events import LogEventKind as K
from rules.events import OomPhase
from rules.facts import ConfigSource, Facts, Hardware, MemoryFacts, Workload
from tests.unit.rules.factories import config, event, healthy, live, llama8b


def _flags(finding):
    return {c.flag: c.proposed for c in finding.changes}


def test_util_099_is_flagged_with_value_beside_threshold_and_proposes_092():
    [finding] = ap_sizing.RULE_UTIL.evaluate(Facts(config=config(gpu_memory_utilization=0.99)))
    assert finding.title == "--gpu-memory-utilization 0.99 >= 0.98"
    assert (finding.evidence[0].value, finding.evidence[0].threshold) == (0.99, 0.98)
    assert _flags(finding) == {"--gpu-memory-utilization": "0.92"} and finding.severity.value == "low"


def test_default_utilization_is_never_flagged():
    assert ap_sizing.RULE_UTIL.evaluate(Facts(config=config(ConfigSource.DEFAULT, gpu_memory_utilization=0.99))) == []


def test_util_099_with_an_oom_in_the_log_is_medium():
    facts = Facts(config=config(gpu_memory_utilization=0.99), events=[event(K.CUDA_OOM, oom_phase=OomPhase.RUNTIME)])
    assert ap_sizing.RULE_UTIL.evaluate(facts)[0].severity.value == "medium"


def test_max_model_len_at_model_maximum_for_short_requests_proposes_twice_p95_as_power_of_two():
    facts = Facts(
        config=config(max_model_len=131072),
        model=llama8b(),
        workload=Workload(p95_input_tokens=2500, p95_output_tokens=500),
    )
    [finding] = ap_sizing.RULE_MAX_LEN.evaluate(facts)
    assert _flags(finding) == {"--max-model-len": "8192"} and finding.changes[0].safety == "unsafe"


def test_max_model_len_below_the_model_maximum_is_a_choice_not_an_antipattern():
    facts = Facts(config=config(max_model_len=16384), model=llama8b(), workload=Workload(p95_input_tokens=2500))
    assert ap_sizing.RULE_MAX_LEN.evaluate(facts) == []


def test_prefix_caching_off_with_high_reuse_is_medium():
    facts = Facts(config=config(enable_prefix_caching=False), workload=Workload(prefix_reuse_share=0.6))
    [finding] = ap_features_off.RULE_PREFIX_OFF.evaluate(facts)
    assert finding.severity.value == "medium" and _flags(finding) == {"--enable-prefix-caching": "true"}
    assert finding.changes[0].command_line() == "--enable-prefix-caching"


def test_prefix_caching_off_with_unique_prompts_is_fine():
    facts = Facts(config=config(enable_prefix_caching=False), workload=Workload(prefix_reuse_share=0.02))
    assert ap_features_off.RULE_PREFIX_OFF.evaluate(facts) == []


def test_chunked_prefill_off_with_itl_spikes_is_medium():
    facts = live(running=30, itl={0.04: 5000, 0.45: 200})
    facts.config = config(enable_chunked_prefill=False)
    [finding] = ap_features_off.RULE_CHUNKED_OFF.evaluate(facts)
    assert finding.severity.value == "medium" and _flags(finding) == {"--enable-chunked-prefill": "true"}


def test_enforce_eager_set_explicitly_is_flagged():
    [finding] = ap_features_off.RULE_EAGER.evaluate(Facts(config=config(enforce_eager=True)))
    assert finding.changes[0].command_line() == "--no-enforce-eager"


def test_enforce_eager_on_vllms_cpu_backend_speaks_of_compilation_not_cuda_graphs():
    facts = Facts(config=config(enforce_eager=True))
    facts.config.device = "cpu"
    [finding] = ap_features_off.RULE_EAGER.evaluate(facts)
    assert "torch.compile" in finding.changes[0].reason and "CUDA" not in finding.summary + finding.changes[0].cost


def test_enforce_eager_after_a_graph_capture_oom_is_the_fix_not_an_antipattern():
    facts = Facts(config=config(enforce_eager=True), events=[event(K.CUDA_OOM, oom_phase=OomPhase.CUDAGRAPH_CAPTURE)])
    assert ap_features_off.RULE_EAGER.evaluate(facts) == []


def test_max_num_seqs_far_above_kv_capacity_is_capped_at_what_fits():
    facts = Facts(
        config=config(max_num_seqs=1024),
        memory=MemoryFacts(kv_cache_tokens=162_704),
        workload=Workload(p95_input_tokens=7000, p95_output_tokens=1000),
    )
    [finding] = ap_sizing.RULE_SEQS.evaluate(facts)
    assert _flags(finding) == {"--max-num-seqs": "20"}
    assert finding.evidence[0].value == 1024 and finding.evidence[0].threshold == round(2 * 162_704 / 8000, 1)


def test_max_num_seqs_over_capacity_reads_kv_tokens_from_the_startup_log():
    facts = Facts(
        config=config(max_num_seqs=1024),
        workload=Workload(p95_input_tokens=7000, p95_output_tokens=1000),
        events=[event(K.KV_CACHE_SIZE, kv_cache_tokens=162_704)],
    )
    assert ap_sizing.RULE_SEQS.evaluate(facts)[0].evidence[1].source == "log"


def test_default_max_num_seqs_over_capacity_is_flagged_as_the_default():
    facts = Facts(
        config=config(ConfigSource.DEFAULT, max_num_seqs=1024),
        memory=MemoryFacts(kv_cache_tokens=162_704),
        workload=Workload(p95_input_tokens=7000, p95_output_tokens=1000),
    )
    [finding] = ap_sizing.RULE_SEQS.evaluate(facts)
    assert "(vLLM's default)" in finding.title


def test_tp_over_pcie_for_a_model_that_fits_one_gpu_proposes_replicas():
    facts = Facts(
        config=config(tensor_parallel_size=2),
        memory=MemoryFacts(weights_gib=7.5),
        hardware=Hardware(gpu_name="L40S", usable_gib=44.4, gpu_count=2, interconnect="pcie"),
    )
    [finding] = ap_sizing.RULE_TP_PCIE.evaluate(facts)
    assert _flags(finding) == {"--tensor-parallel-size": "1", "--data-parallel-size": "2"}


@pytest.mark.parametrize("rule", ap_sizing.RULES + ap_features_off.RULES, ids=lambda r: r.code)
def test_antipatterns_are_silent_on_a_well_configured_server(rule):
    assert rule.evaluate(healthy()) == []


def test_the_whole_gpu_is_refused_at_startup_from_the_release_that_checks_free_memory():
    # vllm#17939: --gpu-memory-utilization=1 ended in "Engine core initialization failed"; removing it fixed the start
    from rules.catalog import ap_sizing

    [finding] = ap_sizing.RULE_UTIL.evaluate(Facts(config=config(gpu_memory_utilization=1.0)))
    assert finding.severity.value == "critical" and "vLLM refuses at startup" in finding.title
    assert "CUDA context" in finding.summary
    old = Facts(config=config(gpu_memory_utilization=1.0, vllm_version="0.8.5"))
    assert ap_sizing.RULE_UTIL.evaluate(old)[0].severity.value == "low"  # before the check: headroom only
