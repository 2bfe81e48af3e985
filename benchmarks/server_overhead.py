"""What the HTTP server costs: the same burst through `python -m engine serve` vs `LLMEngine.step()`.

Baseline (same run, same machine, same config): the burst added straight to an in-process
`LLMEngine` and stepped to completion. Measured: the burst sent as concurrent streaming
`/v1/completions` requests (SSE, `ignore_eos`, greedy, usage chunk) to a server process.
Ratio = server output tokens/s ÷ baseline output tokens/s (1.0 = the server costs nothing).

    .venv/bin/python benchmarks/server_overhead.py [--model DIR] [--requests 16] [--prompt-tokens 32]
        [--max-tokens 64] [--repeats 3] [--device-memory-gib 1] [--json out.json]

Without --model it builds the tiny random Llama from tests.helpers.tiny_model (the server's cost is
then most visible, since the model itself is nearly free).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.helpers.server_process import running_server  # noqa: E402

FLAGS = ("--max-model-len", "512", "--disable-log-requests", "--disable-log-stats")


def prompts(count: int, prompt_tokens: int, tokenizer, first: int = 0) -> list[list[int]]:
    """Distinct prompts of exactly `prompt_tokens` tokens (distinct: no prefix-cache help)."""
    result = []
    for index in range(first, first + count):
        ids = tokenizer.encode(f"{index:04d} " + "lorem ipsum dolor sit amet " * 64, add_special_tokens=False)
        result.append(ids[:prompt_tokens])
    return result


def make_engine(model_dir: str, device_memory_gib: float):
    from engine.core.config import EngineConfig
    from engine.core.llm_engine import LLMEngine

    return LLMEngine(EngineConfig(model=model_dir, device_memory_gib=device_memory_gib, max_model_len=512))


def run_baseline(engine, burst: list[list[int]], max_tokens: int, tag: str) -> tuple[float, int]:
    from engine.core.sampling_params import SamplingParams

    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
    start = time.perf_counter()
    for index, ids in enumerate(burst):
        engine.add_request(f"{tag}-{index}", ids, params)
    tokens = 0
    while engine.has_unfinished_requests():
        tokens += sum(len(output.new_token_ids) for output in engine.step())
    return time.perf_counter() - start, tokens


async def run_server_burst(base_url: str, model: str, burst: list[list[int]], max_tokens: int) -> tuple[float, int]:
    async def one(session: aiohttp.ClientSession, ids: list[int]) -> int:
        payload = {
            "model": model,
            "prompt": ids,
            "max_tokens": max_tokens,
            "temperature": 0,
            "ignore_eos": True,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        completion_tokens = 0
        async with session.post(f"{base_url}/v1/completions", json=payload) as response:
            async for raw in response.content:
                line = raw.decode().strip()
                if line.startswith("data: {"):
                    chunk = json.loads(line[6:])
                    if chunk.get("usage"):
                        completion_tokens = chunk["usage"]["completion_tokens"]
        return completion_tokens

    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as session:
        start = time.perf_counter()
        counts = await asyncio.gather(*(one(session, ids) for ids in burst))
        return time.perf_counter() - start, sum(counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="HF model dir (default: build the tiny random Llama)")
    parser.add_argument("--requests", type=int, default=16, help="requests in the burst (default 16)")
    parser.add_argument("--prompt-tokens", type=int, default=32, help="prompt length in tokens (default 32)")
    parser.add_argument("--max-tokens", type=int, default=64, help="output tokens per request (default 64)")
    parser.add_argument("--repeats", type=int, default=3, help="bursts per side; the median is reported")
    parser.add_argument("--device-memory-gib", type=float, default=1.0, help="memory budget on both sides")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    model_dir = args.model
    if model_dir is None:
        from tests.helpers.tiny_model import build_tiny_model

        model_dir = str(build_tiny_model(Path(tempfile.mkdtemp(prefix="bench-tiny-"))))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    # One fresh burst per repeat and a warm-up on each side, so neither is charged first-call costs.
    bursts = [
        prompts(args.requests, args.prompt_tokens, tokenizer, first=(1 + r) * args.requests)
        for r in range(args.repeats)
    ]
    warmup = prompts(2, args.prompt_tokens, tokenizer)
    expected = args.requests * args.max_tokens

    engine = make_engine(model_dir, args.device_memory_gib)
    run_baseline(engine, warmup, 4, "warmup")
    baseline = [run_baseline(engine, burst, args.max_tokens, f"b{r}") for r, burst in enumerate(bursts)]
    del engine
    with running_server(model_dir, *FLAGS, "--device-memory-gib", str(args.device_memory_gib)) as server:
        asyncio.run(run_server_burst(server.base_url, server.model, warmup, 4))
        served = [
            asyncio.run(run_server_burst(server.base_url, server.model, burst, args.max_tokens)) for burst in bursts
        ]
    for _, tokens in baseline + served:
        assert tokens == expected, f"expected {expected} output tokens, got {tokens}"

    baseline_tps = statistics.median(tokens / seconds for seconds, tokens in baseline)
    served_tps = statistics.median(tokens / seconds for seconds, tokens in served)
    figures = {
        "model": model_dir,
        "requests": args.requests,
        "prompt_tokens": args.prompt_tokens,
        "max_tokens": args.max_tokens,
        "repeats": args.repeats,
        "baseline_engine_tokens_per_s": round(baseline_tps, 1),
        "server_http_tokens_per_s": round(served_tps, 1),
        "ratio_server_over_engine": round(served_tps / baseline_tps, 3),
        "baseline_runs_s": [round(seconds, 3) for seconds, _ in baseline],
        "server_runs_s": [round(seconds, 3) for seconds, _ in served],
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
