"""How far continuous batching can beat HF `generate()` when both are bound by the same GEMMs.

    .venv/bin/python benchmarks/gemm_ceiling.py                      # 128 requests, HF batch 32
    .venv/bin/python benchmarks/gemm_ceiling.py --num-requests 256 --hf-batch-size 8

Runs the throughput workload of `engine_throughput.py` (same seed, same prompts and output
lengths) through the engine and through HF `generate()` with static batches, timing every
linear layer (q/k/v/o, MLP, LM head) on both sides with forward hooks. Prints, per side,
the wall time and the time inside linear layers, and the *ceiling*: HF's wall time over the
engine's linear-layer time, i.e. the speedup the engine would reach if everything but its
matrix multiplies (attention, sampling, scheduling, Python) took no time at all. Where that
ceiling is below a goal, no engine-side change short of faster matrix multiplies (or fewer of
them) can meet it. Not a test; writes JSON with `--json`.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from engine_throughput import hf_static_batches, make_workload
from torch import nn
from transformers import AutoConfig

from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from engine.model.default_model import ensure_default_model


class LinearTimer:
    """Sums the wall time spent inside hooked modules' forward calls."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started: float | None = None

    def attach(self, modules) -> None:
        for module in modules:
            module.register_forward_pre_hook(self._pre)
            module.register_forward_hook(self._post)

    def _pre(self, *_args) -> None:
        self._started = time.perf_counter()

    def _post(self, *_args) -> None:
        self.seconds += time.perf_counter() - self._started


def run_engine(model_dir: str, workload, dtype: str) -> dict:
    llm = LLM(model_dir, dtype=dtype, max_model_len=512, max_num_seqs=256, max_num_batched_tokens=2048)
    model = llm.llm_engine.runner.model
    llm.generate([workload[0][0]], SamplingParams(temperature=0, max_tokens=4, ignore_eos=True), use_tqdm=False)
    timer = LinearTimer()
    timer.attach(m for m in model.modules() if isinstance(m, nn.Linear))
    compute_logits = model.compute_logits

    def timed_logits(hidden):  # the LM head is a plain F.linear on the (tied) embedding
        start = time.perf_counter()
        logits = compute_logits(hidden)
        timer.seconds += time.perf_counter() - start
        return logits

    model.compute_logits = timed_logits
    params = [SamplingParams(temperature=0, max_tokens=n, ignore_eos=True) for _, n in workload]
    start = time.perf_counter()
    llm.generate([p for p, _ in workload], params, use_tqdm=False)
    return {"seconds": time.perf_counter() - start, "linear_seconds": timer.seconds}


def run_hf(model_dir: str, workload, dtype: str, batch_size: int) -> dict:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype)).eval()
    timer = LinearTimer()
    timer.attach(m for m in model.modules() if isinstance(m, nn.Linear))
    start = time.perf_counter()
    hf_static_batches(
        model, workload, batch_size, on_batch=lambda done, total: print(f"  hf batch {done}/{total}", flush=True)
    )
    return {"seconds": time.perf_counter() - start, "linear_seconds": timer.seconds, "batch_size": batch_size}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-requests", type=int, default=128, help="requests from the seeded workload (128)")
    parser.add_argument("--hf-batch-size", type=int, default=32, help="HF static batch size (32)")
    parser.add_argument("--dtype", default="float32", help="model dtype for both sides (float32)")
    parser.add_argument("--model", default=None, help="local HF model dir (default: the embedded SmolLM2)")
    parser.add_argument("--seed", type=int, default=0, help="workload seed (as engine_throughput.py)")
    parser.add_argument("--json", default=None, help="write the results here as JSON")
    args = parser.parse_args(argv)
    model_dir = args.model or str(ensure_default_model())
    vocab = AutoConfig.from_pretrained(model_dir).vocab_size
    workload = make_workload(args.num_requests, vocab, args.seed)
    useful = sum(n for _, n in workload)
    engine = run_engine(model_dir, workload, args.dtype)
    print(f"engine: {engine['seconds']:.1f} s, {engine['linear_seconds']:.1f} s in linear layers", flush=True)
    hf = run_hf(model_dir, workload, args.dtype, args.hf_batch_size)
    print(f"hf batch {hf['batch_size']}: {hf['seconds']:.1f} s, {hf['linear_seconds']:.1f} s in linear layers")
    result = {
        "num_requests": args.num_requests,
        "useful_tokens": useful,
        "vocab": vocab,
        "dtype": args.dtype,
        "threads": torch.get_num_threads(),
        "engine": engine,
        "hf": hf,
        "measured_ratio": hf["seconds"] / engine["seconds"],
        "ceiling_ratio": hf["seconds"] / engine["linear_seconds"],
        "linear_work_ratio": hf["linear_seconds"] / engine["linear_seconds"],
    }
    print(
        f"measured engine / HF throughput: {result['measured_ratio']:.2f}x; "
        f"ceiling with only the engine's linear layers left: {result['ceiling_ratio']:.2f}x; "
        f"HF's linear-layer time / the engine's: {result['linear_work_ratio']:.2f}x"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
