"""OP-5.17: decode slower than the slowest GPU could read the weights points at the GPU, not a flag."""

from __future__ import annotations

from rules.catalog import op5_slow_gpu
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import config, event


def _decoding(generated: float, running: int = 1, prompt: float = 0.0, lines: int = 3) -> list:
    return [
        event(K.STATS_LINE, n, prompt_throughput_tps=prompt, generation_throughput_tps=generated, running=running)
        for n in range(1, lines + 1)
    ]


def _facts(model: str, generated: float, **kwargs) -> Facts:
    facts = Facts(events=_decoding(generated, **kwargs))
    facts.config = config(model=model, enforce_eager=True)
    return facts


def test_an_8b_model_at_under_a_token_a_second_is_the_gpu_not_eager_mode():
    # vllm#8847: Meta-Llama-3-8B-Instruct, one request, 0.8 tokens/s; nvidia-smi said "Reset Required: Yes"
    [finding] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(_facts("meta-llama/Meta-Llama-3-8B-Instruct", 0.8))
    assert "12x slower than even a 150 GB/s GPU" in finding.title
    assert "Reset Required" in finding.actions[0]
    assert finding.changes == []


def test_a_healthy_slow_gpu_a_prefill_interval_or_one_line_is_no_finding():
    for facts in (
        _facts("meta-llama/Meta-Llama-3-8B-Instruct", 12.0),  # an L4 at batch 1, eager: slow, not broken
        _facts("meta-llama/Meta-Llama-3-8B-Instruct", 0.8, prompt=72.0),  # prompts in the interval
        _facts("meta-llama/Meta-Llama-3-8B-Instruct", 0.8, lines=1),
        _facts("my-finetune", 2.0),  # no size known: held to a whole GPU's memory read (0.1 s), 5x, not 10x
    ):
        assert op5_slow_gpu.RULE_SLOW_GPU.evaluate(facts) == []


def test_the_weights_read_follow_quantization_experts_and_tensor_parallel():
    # 0.7 tokens/s per sequence: 1.43 s a token. 70B bf16 on TP 4 reads 35 GB a GPU (0.23 s at 150 GB/s): 6x,
    # not a finding; 30B-A3B decodes 3B active (6 GB, 40 ms): 36x; AWQ 8B reads 4 GB.
    assert op5_slow_gpu.RULE_SLOW_GPU.evaluate(_tp(_facts("Llama-3.3-70B-Instruct", 1.4, running=2), 4)) == []
    [moe] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(_facts("Qwen/Qwen3-30B-A3B", 0.7))
    assert "36x" in moe.title
    [awq] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(_facts("TheBloke/Llama-2-7B-AWQ", 0.7))
    assert "3.5 GB of weights" in awq.summary
    # a mixture whose active part the name does not say is held to the whole-memory floor
    [mixtral] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(_facts("mistralai/Mixtral-8x7B-v0.1", 0.5))
    assert "slower than any GPU reads its whole memory" in mixtral.title


def test_without_the_models_size_a_whole_gpus_read_is_the_floor_and_gguf_is_named():
    # vllm#15018: 0.4 tokens/s with 2 running on a GGUF Q4_K_M; FP16 weights were fine
    facts = Facts(events=_decoding(0.4, running=2, lines=4))
    [finding] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(facts)
    assert "50x slower than any GPU reads its whole memory" in finding.title and finding.confidence == 0.5
    assert "GGUF" in finding.actions[-1] and "FP16 weights" in finding.actions[-1]
    facts.config = config(model="/app/model/DeepSeek-R1-Distill-Qwen-32B-Q4_K_M.gguf")
    [named] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(facts)
    assert named.actions[0].startswith("If the weights are GGUF")  # the launch says GGUF: first


def test_the_cpu_backend_is_not_a_gpu():
    facts = _facts("meta-llama/Meta-Llama-3-8B-Instruct", 0.8)
    facts.config.device = "cpu"
    assert op5_slow_gpu.RULE_SLOW_GPU.evaluate(facts) == []


def _tp(facts: Facts, size: int) -> Facts:
    facts.config.tensor_parallel_size = size
    return facts


def test_weights_offloaded_to_the_cpu_are_named_when_the_launch_offloads():
    facts = _facts("meta-llama/Meta-Llama-3-8B-Instruct", 0.8)
    facts.config.flags["--cpu-offload-gb"] = "10"
    [finding] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(facts)
    assert finding.actions[1].startswith("--cpu-offload-gb moves weights across PCIe")


def test_the_floors_hold_for_every_gpu_servops_knows():
    from advisor.catalog.gpus import GPU_CATALOG

    known = [gpu for gpu in GPU_CATALOG if gpu.memory_bandwidth_tbps]
    assert known and op5_slow_gpu.SLOWEST_GPU_GBPS < min(gpu.memory_bandwidth_tbps * 1000 for gpu in known)
    whole_reads = [gpu.usable_gib * 2**30 / (gpu.memory_bandwidth_tbps * 1e12) for gpu in known]
    assert max(whole_reads) < op5_slow_gpu.WHOLE_MEMORY_READ_S


def test_the_weights_vllm_measured_loading_them_come_before_any_estimate():
    facts = _facts("meta-llama/Meta-Llama-3-8B-Instruct", 0.8)
    facts.events.append(event(K.MODEL_LOADING, 0, weights_gib=4.0))  # a 4-bit checkpoint the name does not say
    [finding] = op5_slow_gpu.RULE_SLOW_GPU.evaluate(facts)
    assert "4.3 GB of weights" in finding.summary
