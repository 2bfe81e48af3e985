"""A/B in one process: bfloat16 decode steps with the native bf16 layer ops vs the PyTorch twins.

    .venv/bin/python benchmarks/cpu_layer_ops_bf16_ab.py [--json out.json]

One `LLMEngine` (the bundled SmolLM2-135M, bfloat16, CPU, prefix caching off) decodes batches
of 1 and 16 requests (32-token seeded random prompts, greedy, `ignore_eos`); after the prefill
and 3 warm-up decode steps, 40 decode steps are timed one by one and the median kept. The
twins side patches `servops_kernels.cpu_layer_ops.supports_rows` back to its float32-only predicate
(what the engine ran before), so RMSNorm, the fused residual-add RMSNorm, RoPE and SiLU-and-
multiply take the PyTorch twins; everything else (native GEMM, attention, KV write) is the same
on both sides. Sides alternate (native, twins, twins, native per batch size by default); the box
is shared, so read the spread between repeats of one side before the ratio; the best single
step of each side is printed beside the medians as the reading least moved by other load. Greedy tokens are
compared between sides (the native norms and SiLU may round a bf16 step apart from the twins).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time

import torch

from engine.core.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.core.sampling_params import SamplingParams
from servops_kernels import cpu_layer_ops

PROMPT_TOKENS, WARMUP_STEPS = 32, 3


@contextlib.contextmanager
def twins():
    """The row-wise ops as before the bf16 kernels: native for float32 rows only."""
    saved = cpu_layer_ops.supports_rows
    cpu_layer_ops.supports_rows = lambda *tensors: all(t.dtype == torch.float32 for t in tensors) and saved(*tensors)
    try:
        yield
    finally:
        cpu_layer_ops.supports_rows = saved


SIDES = {"native": contextlib.nullcontext, "twins": twins}


def decode_run(engine: LLMEngine, prompts: list[list[int]], steps: int, tag: str) -> tuple[list[float], list]:
    """Per-step wall times of `steps` decode steps after the prefill and warm-up; the tokens."""
    params = SamplingParams(temperature=0.0, max_tokens=1 + WARMUP_STEPS + steps + 1, ignore_eos=True)
    for index, ids in enumerate(prompts):
        engine.add_request(f"{tag}-{index}", ids, params)
    tokens: dict[str, list[int]] = {}
    times = []
    step = 0
    while engine.has_unfinished_requests():
        start = time.perf_counter()
        outputs = engine.step()
        elapsed = time.perf_counter() - start
        for output in outputs:
            tokens.setdefault(output.request_id.split("-", 1)[1], []).extend(output.new_token_ids)
        # step 0 is the prefill (all prompts fit one step); then warm-up, then the measured steps
        if WARMUP_STEPS < step <= WARMUP_STEPS + steps:
            times.append(elapsed)
        step += 1
    assert len(times) == steps, f"expected {steps} measured decode steps, got {len(times)}"
    return times, [tokens[str(i)] for i in range(len(prompts))]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,16", help="batch sizes (1,16)")
    parser.add_argument("--steps", type=int, default=40, help="measured decode steps per run (40)")
    parser.add_argument("--order", default="native,twins,twins,native", help="side order per batch size")
    parser.add_argument("--json", default=None, help="write the results here as JSON")
    args = parser.parse_args(argv)
    if not cpu_layer_ops.available():
        raise SystemExit(f"the native CPU layer ops do not build here: {cpu_layer_ops.unavailable_reason()}")
    engine = LLMEngine(
        EngineConfig(dtype="bfloat16", device="cpu", max_model_len=256, enable_prefix_caching=False, max_num_seqs=64)
    )
    vocab = len(engine.tokenizer)
    gen = torch.Generator().manual_seed(0)
    result: dict = {"threads": torch.get_num_threads(), "steps": args.steps, "runs": [], "summary": []}
    print(f"threads {result['threads']}, {args.steps} measured decode steps per run", flush=True)
    for batch in (int(b) for b in args.batches.split(",")):
        prompts = [torch.randint(100, vocab, (PROMPT_TOKENS,), generator=gen).tolist() for _ in range(batch)]
        medians: dict[str, list[float]] = {side: [] for side in SIDES}
        best: dict[str, float] = {side: float("inf") for side in SIDES}
        outputs: dict[str, list] = {}
        for run, side in enumerate(args.order.split(",")):
            with SIDES[side]():
                times, tokens = decode_run(engine, prompts, args.steps, f"b{batch}r{run}{side}")
            median = statistics.median(times)
            medians[side].append(median)
            best[side] = min(best[side], min(times))
            outputs.setdefault(side, tokens)
            result["runs"].append({"batch": batch, "side": side, "median_s": median, "min_s": min(times)})
            line = f"batch {batch:3d} {side:7s} median {median * 1e3:7.2f} ms  min {min(times) * 1e3:7.2f} ms"
            print(line, flush=True)
        identical = sum(a == b for a, b in zip(outputs["native"], outputs["twins"], strict=True))
        summary = {
            "batch": batch,
            "native_ms": [m * 1e3 for m in medians["native"]],
            "twins_ms": [m * 1e3 for m in medians["twins"]],
            "ratio": statistics.median(medians["twins"]) / statistics.median(medians["native"]),
            "best_step_ms": {side: value * 1e3 for side, value in best.items()},
            "best_step_ratio": best["twins"] / best["native"],
            "token_identical": f"{identical}/{batch}",
        }
        result["summary"].append(summary)
        print(
            f"batch {batch}: twins/native (median of medians) {summary['ratio']:.2f}x, "
            f"best step {summary['best_step_ratio']:.2f}x, "
            f"greedy tokens identical {summary['token_identical']}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
