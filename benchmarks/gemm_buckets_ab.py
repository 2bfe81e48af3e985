"""A/B: prefill through the engine with the packed GEMM's row buckets vs oneDNN given every row count.

    .venv/bin/python -m benchmarks.gemm_buckets_ab [--pairs 2] [--prompts 40] [--json out.json]

Each side is a fresh process (oneDNN's cache of built GEMMs starts empty, as in a fresh server) running
one `LLM` on the embedded SmolLM2 (bf16 where the CPU has bf16 arithmetic, so the packed weights are in
use) over the same seeded lone prompts of 300-720 random tokens, `max_tokens` 1: a stream of prefill
steps whose row counts differ, as a served load's do. Baseline: `bucket_rows` replaced by the identity
(every count built as it comes). Candidate: the engine as committed (`servops_kernels.cpu_prepack.bucket_rows`).
Sides alternate (baseline, candidate, candidate, baseline, ...); reports prompt tokens per second per
run and the ratio of the medians. Not a test: on a CPU without packing both sides run the same code,
and the script says so.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time

from advisor.cli.options import positive_int

SIDES = ("exact", "buckets")
PROMPT_RANGE = (300, 720)


def one_run(side: str, prompts: int, seed: int) -> dict:
    """In this process: prefill `prompts` lone prompts, return prompt tokens per second."""
    from servops_kernels import cpu_prepack

    if side == "exact":
        cpu_prepack.bucket_rows = lambda rows: rows
    from engine.core.llm import LLM
    from engine.core.sampling_params import SamplingParams

    llm = LLM(max_model_len=2048, max_num_batched_tokens=2048)
    rng = random.Random(seed)
    lengths = [rng.randrange(*PROMPT_RANGE) for _ in range(prompts)]
    params = SamplingParams(max_tokens=1, temperature=0.0)
    start = time.perf_counter()
    for length in lengths:
        ids = [rng.randrange(100, 40000) for _ in range(length)]
        llm.generate([{"prompt_token_ids": ids}], params, use_tqdm=False)
    elapsed = time.perf_counter() - start
    packed = any(getattr(m, "packed", None) is not None for m in llm.llm_engine.runner.model.modules())
    return {"side": side, "tokens": sum(lengths), "seconds": elapsed, "tok_s": sum(lengths) / elapsed, "packed": packed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=positive_int, default=2, help="runs per side (default 2)")
    parser.add_argument("--prompts", type=positive_int, default=40, help="lone prompts per run (default 40)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", help="write the runs and the ratio here")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)  # one run, in a child process
    args = parser.parse_args()
    if args.side:
        print(json.dumps(one_run(args.side, args.prompts, args.seed)))
        return 0
    runs: list[dict] = []
    for pair in range(args.pairs):
        order = SIDES if pair % 2 == 0 else SIDES[::-1]
        for side in order:
            child = [sys.executable, "-m", "benchmarks.gemm_buckets_ab", "--side", side]
            child += ["--prompts", str(args.prompts), "--seed", str(args.seed)]
            out = subprocess.run(child, capture_output=True, text=True, check=True).stdout
            run = json.loads(out.strip().splitlines()[-1])
            runs.append(run)
            print(f"{side:8s} {run['tok_s']:7.0f} prompt tok/s ({run['seconds']:.2f} s)", flush=True)
    if not runs[0]["packed"]:
        print("no packed weights on this CPU/dtype: both sides ran the same code", flush=True)
    median = {side: statistics.median(r["tok_s"] for r in runs if r["side"] == side) for side in SIDES}
    ratio = median["buckets"] / median["exact"]
    print(f"median prompt tok/s: exact {median['exact']:.0f}, buckets {median['buckets']:.0f}: {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"runs": runs, "median_tok_s": median, "ratio": ratio}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
