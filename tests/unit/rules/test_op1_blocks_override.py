"""OP-1.15: --num-gpu-blocks-override replaced the KV cache size the memory profile found."""

from __future__ import annotations

from rules.facts import ServerConfig
from tests.unit.rules.factories import top_finding

# vllm#27181, verbatim: a maintainer's `vllm serve facebook/opt-125m --num_gpu_blocks_override=1` on an H100
ONE_BLOCK = (
    "(EngineCore_DP0 pid=2717573) INFO 10-19 21:10:01 [kv_cache_utils.py:772] Overriding num_gpu_blocks=125643 with "
    "num_gpu_blocks_override=1"
)


def test_one_overridden_block_is_a_cache_no_ordinary_request_fits():
    top = top_finding(ONE_BLOCK)
    assert top.rule == "OP-1.15" and top.severity == "critical"
    assert top.title.startswith("--num-gpu-blocks-override holds the KV cache to 1 block(s), about 16 tokens")
    assert "125,643" in top.title and "vllm#27181" in top.summary
    [change] = top.changes
    assert (change.flag, change.current, change.command_line()) == (
        "--num-gpu-blocks-override",
        "1",
        "remove --num-gpu-blocks-override",
    )


def test_a_cache_held_below_max_model_len_says_such_requests_exist():
    line = (
        "INFO 10-19 21:10:01 [kv_cache_utils.py:772] Overriding num_gpu_blocks=10000 with num_gpu_blocks_override=500"
    )
    held = top_finding(line, config=ServerConfig(max_model_len=32768, block_size=16))
    assert held.severity == "critical" and "--max-model-len 32,768 is above what the cache holds" in held.summary
    roomy = top_finding(line, config=ServerConfig(max_model_len=4096, block_size=16))
    assert roomy.severity == "medium" and "8,000 tokens" in roomy.title


def test_more_blocks_than_the_profile_found_is_memory_the_profile_did_not_leave():
    line = "INFO 01-02 03:04:05 llm_engine.py:1] Overriding num_gpu_blocks=1000 with num_gpu_blocks_override=5000"
    top = top_finding(line)
    assert top.rule == "OP-1.15" and top.title.startswith("--num-gpu-blocks-override asks for 5,000 KV blocks")
    assert "at or below 1,000" in top.actions[0]


def test_an_override_equal_to_the_profile_changes_nothing():
    line = "INFO 01-02 03:04:05 llm_engine.py:1] Overriding num_gpu_blocks=1000 with num_gpu_blocks_override=1000"
    top = top_finding(line)
    assert top is None or top.rule != "OP-1.15"
