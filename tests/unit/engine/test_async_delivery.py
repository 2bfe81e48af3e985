"""The engine thread hands a step's outputs to the event loop in one call, and every stream still
gets all of its outputs in order (engine/core/async_engine.py, `_deliver_all`).

A real engine on the tiny model, driven by the real AsyncEngine thread; the running loop's
`call_soon_threadsafe` is wrapped to count the calls that carry outputs.
"""

from __future__ import annotations

import asyncio

from engine.core import async_engine as async_engine_module
from engine.core.async_engine import AsyncEngine
from engine.core.llm_engine import LLMEngine
from engine.core.sampling_params import SamplingParams

STREAMS = 4
OUTPUT_TOKENS = 5


def test_one_wakeup_per_step_and_every_stream_gets_its_tokens_in_order(tiny_engine: LLMEngine):
    engine = tiny_engine
    steps_with_outputs: list[int] = []
    real_step = engine.step

    def step_and_count():
        outputs = real_step()
        if outputs:
            steps_with_outputs.append(len(outputs))
        return outputs

    engine.step = step_and_count
    async_engine = AsyncEngine(engine)
    batches: list[int] = []

    async def run() -> dict[str, list[int]]:
        loop = asyncio.get_running_loop()
        real_call = loop.call_soon_threadsafe

        def counting_call(callback, *args, **kwargs):
            if callback is async_engine_module._put_all:
                batches.append(len(args[0]))
            return real_call(callback, *args, **kwargs)

        loop.call_soon_threadsafe = counting_call
        params = SamplingParams(temperature=0, max_tokens=OUTPUT_TOKENS, ignore_eos=True)
        streams = {
            f"r{i}": await async_engine.add_request(f"r{i}", list(range(5 + i, 13 + i)), params) for i in range(STREAMS)
        }

        async def drain(stream) -> list[int]:
            tokens: list[int] = []
            async for output in stream:
                assert list(output.output_token_ids[: len(tokens)]) == tokens  # in order, none lost
                tokens += output.new_token_ids or []
            return tokens

        results = await asyncio.gather(*(drain(s) for s in streams.values()))
        return dict(zip(streams, results, strict=True))

    async_engine.start()
    try:
        tokens = asyncio.run(run())
    finally:
        async_engine.stop()
        engine.step = real_step
    assert all(len(t) == OUTPUT_TOKENS for t in tokens.values())
    # one call per step that produced outputs, carrying all of that step's outputs
    assert batches == steps_with_outputs
    assert sum(batches) == STREAMS * OUTPUT_TOKENS and max(batches) > 1
