"""The KV pool a change of `--kv-cache-memory-bytes` or `--gpu-memory-utilization` gives the replay
(advisor/perf/pool.py), and the model's choice of the share for a preempting server."""

from __future__ import annotations

import pytest

from advisor.collect.server_args import parse_command
from advisor.errors import UserError
from advisor.perf.pool import (
    DeviceShare,
    pool_bytes,
    pool_tokens_after,
    pool_tokens_for_share,
    search_values,
    share_search_values,
)

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


# A GPU server at --gpu-memory-utilization 0.85 whose log said 'Available KV cache memory: 20 GiB' and
# 'KV cache size: 163,840 tokens' on an 80 GiB device.
SHARED = parse_command("vllm serve m --gpu-memory-utilization 0.85")
H100 = DeviceShare(pool_gib=20.0, device_gib=80.0)


def test_a_larger_share_adds_that_share_of_the_device_to_the_pool():
    # 0.85 -> 0.95: 0.10 x 80 = 8 GiB more, 28 / 20 of the tokens.
    assert pool_tokens_for_share(SHARED, 163_840, "0.95", H100) == 229_376
    assert pool_tokens_for_share(SHARED, 163_840, "0.85", H100) == 163_840
    # Left out of the launch: vLLM's default share (0.92 from vLLM 0.20 on) is what runs.
    assert pool_tokens_for_share(parse_command("vllm serve m"), 163_840, "0.95", H100) == int(163_840 * 22.4 / 20)
    assert share_search_values(SHARED, H100) == ["0.90", "0.92", "0.95"]
    assert share_search_values(parse_command("vllm serve m --gpu-memory-utilization 0.92"), H100) == ["0.95"]
    assert share_search_values(SHARED, None) == []  # no pool in GiB: nothing to weigh


def test_a_share_the_model_cannot_size_is_one_clear_error():
    with pytest.raises(UserError, match="--kv-cache-gib, the log's 'Available KV cache memory: N GiB'"):
        pool_tokens_for_share(SHARED, 163_840, "0.95", None)
    with pytest.raises(UserError, match="between 0 and 1"):
        pool_tokens_for_share(SHARED, 163_840, "95", H100)
    with pytest.raises(UserError, match="leaves no KV cache"):
        pool_tokens_for_share(SHARED, 163_840, "0.5", H100)  # 20 - 0.35 x 80 < 0
    # A KV space given in bytes is what vLLM sizes the pool by; the share is then no lever.
    with pytest.raises(UserError, match="gives its KV space in bytes"):
        pool_tokens_for_share(FLAG, 2048, "0.95", H100)
    assert share_search_values(FLAG, H100) == []
