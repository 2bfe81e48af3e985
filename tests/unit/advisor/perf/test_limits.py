"""The scheduler limits a launch runs with: its flags, then its engine's defaults."""

import pytest

from advisor.collect.server_args import parse_command
from advisor.errors import UserError
from advisor.perf import limits as L
from rules import vllm_defaults as D


def test_the_bundled_engine_defaults_restated_in_the_table_are_engine_configs():
    from engine.core.config import EngineConfig

    config = EngineConfig()
    config.resolve_max_model_len(8192)
    assert (D.BUNDLED_MAX_NUM_SEQS, D.BUNDLED_BLOCK_SIZE, D.BUNDLED_CHUNKED_BUDGET) == (
        config.max_num_seqs,
        config.block_size,
        config.max_num_batched_tokens,
    )
    assert D.BUNDLED_GPU_MEMORY_UTILIZATION == config.gpu_memory_utilization


@pytest.mark.parametrize(
    ("text", "kind", "seqs", "budget", "block"),
    [
        ("python -m engine serve --model m", "bundled", 256, 2048, 16),
        ("servops serve --max-num-seqs 2", "bundled", 2, 2048, 16),
        ("VLLM_CPU_KVCACHE_SPACE=1 vllm serve m", "vllm-cpu", 128, 2048, 128),
        ("vllm serve m --max-num-seqs 8 --max-num-batched-tokens 512", "vllm-cuda", 8, 512, 16),
    ],
)
def test_flags_left_out_take_the_engines_defaults(text, kind, seqs, budget, block):
    command = parse_command(text)
    assert L.engine_kind(command) == kind
    limits = L.limits_for(command, kind)
    assert (limits.max_num_seqs, limits.max_num_batched_tokens, limits.block_size) == (seqs, budget, block)


def test_a_kv_size_in_tokens_becomes_whole_blocks_and_caching_follows_its_flag():
    limits = L.limits_for(parse_command("--no-enable-prefix-caching --block-size 32"), "vllm-cuda", kv_tokens=1000)
    assert limits.num_blocks == 31 and not limits.enable_prefix_caching


@pytest.mark.parametrize("text", ["--max-num-seqs zero", "--max-num-seqs 0"])
def test_a_bad_number_names_the_flag(text):
    with pytest.raises(UserError, match="--max-num-seqs"):
        L.limits_for(parse_command(text), "vllm-cuda")


@pytest.mark.parametrize(
    ("text", "seqs", "budget"), [("-tp 2", 256, 4096), ("-pp 2 -tp 2", 512, 8192), ("", 128, 2048)]
)
def test_vllms_cpu_defaults_scale_with_the_ranks_of_one_engine(text, seqs, budget):
    """vLLM's CPU backend multiplies its API-server defaults by TP x PP (vllm/engine/arg_utils.py
    get_batch_defaults), as triage's collector does for the config it reads (advisor/catalog/vllm_versions.py)."""
    limits = L.limits_for(parse_command(f"vllm serve m {text}"), "vllm-cpu")
    assert (limits.max_num_seqs, limits.max_num_batched_tokens) == (seqs, budget)
