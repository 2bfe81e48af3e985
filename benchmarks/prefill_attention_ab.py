"""A/B in one engine process: long fresh prompts attended by the native kernel vs dense SDPA.

    .venv/bin/python -m benchmarks.prefill_attention_ab [--prompts 80] [--seed 5] [--json out.json]

One `LLM` on the embedded SmolLM2 (its default dtype: bf16 where the CPU has bf16 arithmetic),
prefix caching off so no prompt is a hit, prefills lone prompts of 512 +- 128 random words
(`max_tokens` 1, engine_vs_vllm's long workload). Baseline: fresh chunks of
`servops_kernels.attention.CPU_DENSE_PREFILL_MIN_TOKENS` tokens or more attended with dense causal SDPA (the
dispatch before the AMX tile path). Candidate: the dispatch as committed
(`servops_kernels.attention.dense_prefill_min_tokens`: every bf16 chunk to the native kernel where it runs on
the AMX tiles). The two alternate prompt by prompt in ABBA order, so slow spells of a shared machine
fall on both; reports prompt tokens per second per side and the ratio. Where the committed dispatch
equals the baseline (no AMX, float32) both sides run the same code and the script says so.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from advisor.cli.options import positive_int

WORDS = "alpha beta gamma delta river mountain paper light window garden music silver quiet table orange number"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=positive_int, default=80, help="lone prompts, both sides together (80)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", help="write the per-side figures and the ratio here")
    args = parser.parse_args()

    from engine.core.llm import LLM
    from engine.core.sampling_params import SamplingParams
    from servops_kernels.attention import CPU_DENSE_PREFILL_MIN_TOKENS, describe_prefill

    llm = LLM(max_model_len=2048, max_num_batched_tokens=2048, enable_prefix_caching=False)
    runner = llm.llm_engine.runner
    committed = runner.dense_prefill_min_tokens
    sides = {"dense": CPU_DENSE_PREFILL_MIN_TOKENS, "committed": committed}
    print(f"committed dispatch: {describe_prefill(runner.device, runner.dtype, runner.head_dim)}", flush=True)
    if committed == CPU_DENSE_PREFILL_MIN_TOKENS:
        print("both sides run the same dispatch here (no AMX tile path for this dtype/CPU)", flush=True)
    rng, words = random.Random(args.seed), WORDS.split()
    params = SamplingParams(temperature=0.0, max_tokens=1)
    seconds, tokens = dict.fromkeys(sides, 0.0), dict.fromkeys(sides, 0)
    llm.generate(["warm up " * 200], params, use_tqdm=False)
    for i in range(args.prompts):
        side = ("dense", "committed")[(i // 2 + i) % 2]  # A B B A A B B A ...
        runner.dense_prefill_min_tokens = sides[side]
        prompt = " ".join(rng.choice(words) for _ in range(max(64, int(rng.gauss(512, 128)))))
        start = time.perf_counter()
        output = llm.generate([prompt], params, use_tqdm=False)[0]
        seconds[side] += time.perf_counter() - start
        tokens[side] += len(output.prompt_token_ids)
    rates = {side: tokens[side] / seconds[side] for side in sides}
    ratio = rates["committed"] / rates["dense"]
    for side, rate in rates.items():
        print(f"{side}: {tokens[side]} prompt tokens in {seconds[side]:.1f} s, {rate:.0f} tok/s", flush=True)
    print(f"committed / dense: {ratio:.3f}x", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"dtype": str(runner.dtype), "rates": rates, "tokens": tokens, "ratio": ratio}, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
