"""The server sizes each step's CPU threads to the tokens the step computes, not to the requests in
flight: a lone long prompt is one request whose prefill is a GEMM of many rows (engine/api/threads.py).

A real engine on the tiny model, driven by the real AsyncEngine thread; the thread policy is the
server's, fixed at one thread for few-row steps and two above, and records what it was asked.
"""

from __future__ import annotations

import asyncio

import torch

from engine.api.threads import ThreadPolicy
from engine.core.async_engine import AsyncEngine
from engine.core.llm_engine import LLMEngine
from engine.core.sampling_params import SamplingParams
from servops_kernels.cpu_gemm import MEMORY_BOUND_ROWS

PROMPT_TOKENS = 24  # one prefill step of 24 rows, then one-row decode steps
OUTPUT_TOKENS = 3


def test_a_prompt_chunk_gets_every_thread_and_a_lone_decode_the_few(tiny_engine: LLMEngine):
    engine = tiny_engine
    policy = ThreadPolicy(few=1, many=2, why="test")
    asked: list[int] = []
    seen_threads: list[int] = []

    def threads_for(rows: int) -> int:
        asked.append(rows)
        return policy.threads_for(rows)

    def step_and_record():
        outputs = real_step()
        seen_threads.append(torch.get_num_threads())  # the engine thread's own count
        return outputs

    real_step = engine.step
    engine.step = step_and_record
    async_engine = AsyncEngine(engine, threads_for=threads_for)
    async_engine.start()
    try:

        async def run() -> list[int]:
            params = SamplingParams(temperature=0, max_tokens=OUTPUT_TOKENS, ignore_eos=True)
            stream = await async_engine.add_request("r0", list(range(5, 5 + PROMPT_TOKENS)), params)
            tokens = []
            async for output in stream:
                tokens += output.new_token_ids or []
            return tokens

        tokens = asyncio.run(run())
    finally:
        async_engine.stop()
        engine.step = real_step
    assert len(tokens) == OUTPUT_TOKENS
    assert asked[0] == PROMPT_TOKENS > MEMORY_BOUND_ROWS  # the prefill step: every core
    assert asked[1:] == [1] * (OUTPUT_TOKENS - 1)  # one request decoding: one row a step
    assert seen_threads == [2] + [1] * (OUTPUT_TOKENS - 1)
