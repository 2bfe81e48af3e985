"""OP-7.108: Triton's kernel cache raced between vLLM's processes."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


@pytest.mark.parametrize(
    ("line", "kernel", "cache"),
    [
        # vllm#6103: Triton LoRA kernels with TP>1 (a maintainer traced it to Triton's cache)
        (
            "[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '/root/.triton/cache/"
            "76c543c0d8742e904f283b49e0ee704b/_sgmv_expand_kernel.json.tmp.pid_450752_42384ec9-f78e-40b0-b440-"
            "c41643b19290'",
            "_sgmv_expand_kernel",
            "/root/.triton/cache",
        ),
        # IBM/vllm PR #34: Mixtral pods with TP>1
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/home/vllm/.triton/cache/"
            "c926ad2ef143810ed738a313c473c7b2/fused_moe_kernel.cubin.tmp.pid_72_945989'",
            "fused_moe_kernel",
            "/home/vllm/.triton/cache",
        ),
    ],
)
def test_a_lost_temporary_file_in_tritons_cache_is_the_race_with_a_triton_that_fixes_it(line, kernel, cache):
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.108" and f"Triton's {kernel}" in top.title and cache in top.summary
    assert "PR #4295" in top.actions[0] and top.changes[0].flag == "TRITON_CACHE_DIR"
