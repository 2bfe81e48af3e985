"""KV pressure on the shared server (64 blocks): preemptions are visible as vLLM V1 shows them.

V1 logs no per-preemption line; it shows them in `vllm:num_preemptions_total`,
`vllm:request_num_preemptions` and `Preemptions: N` in the stats line. Preempted requests are
recomputed and still finish with every token they asked for.
"""

from __future__ import annotations

import asyncio
import re

import openai
import pytest

from tests.integration.server.prom import value

pytestmark = pytest.mark.integration

BURST = 10  # x 9 blocks each at full length = 90 blocks > 64


def test_burst_beyond_kv_capacity_preempts_and_every_request_still_completes(server):
    before = server.metrics_text()

    async def one(client: openai.AsyncOpenAI, index: int) -> int:
        result = await client.completions.create(
            model=server.model, prompt=f"request number {index:02d}", max_tokens=120, extra_body={"ignore_eos": True}
        )
        return result.usage.completion_tokens

    async def burst() -> list[int]:
        async with openai.AsyncOpenAI(
            base_url=server.openai_base_url, api_key="EMPTY", max_retries=0, timeout=300
        ) as client:
            return await asyncio.gather(*(one(client, index) for index in range(BURST)))

    assert asyncio.run(burst()) == [120] * BURST
    after = server.metrics_text()
    preemptions = value(after, "vllm:num_preemptions_total") - value(before, "vllm:num_preemptions_total")
    assert preemptions > 0
    per_request = value(after, "vllm:request_num_preemptions_sum") - value(before, "vllm:request_num_preemptions_sum")
    assert per_request == preemptions
    assert value(after, "vllm:kv_cache_usage_perc") == 0.0
    assert server.wait_for_log(", Preemptions: ", timeout_s=10)
    assert re.search(r"Waiting: \d+ reqs, Preemptions: [1-9]\d*, CPU KV cache usage: \d+\.\d%", server.log_text())
