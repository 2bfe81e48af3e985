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
        _facts("my-finetune", 0.8),  # no size in the catalog or the name
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
    assert op5_slow_gpu.RULE_SLOW_GPU.evaluate(_facts("mistralai/Mixtral-8x7B-v0.1", 0.1)) == []  # active unknown


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


def test_the_floor_bandwidth_is_below_every_gpu_servops_knows():
    from advisor.catalog.gpus import GPU_CATALOG

    known = [gpu.memory_bandwidth_tbps * 1000 for gpu in GPU_CATALOG if gpu.memory_bandwidth_tbps]
    assert known and op5_slow_gpu.SLOWEST_GPU_GBPS < min(known)
