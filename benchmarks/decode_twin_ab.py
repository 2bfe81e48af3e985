"""A/B in one run: engine throughput with the SDPA decode twin vs the strided-matmul twin.

    git show 5b8c214:kernels/torch_ref.py > /tmp/torch_ref_old.py
    .venv/bin/python benchmarks/decode_twin_ab.py [/tmp/torch_ref_old.py]

The baseline is kernels/torch_ref.py as of commit 5b8c214 (the folder is servops_kernels/ since e851ed1):
gathered blocks, masked SDPA with grouped heads folded into query rows. The candidate is the current twin (since then:
servops_kernels/torch_decode.py, length-sorted chunks with a per-step gather plan). Same engine, same
SmolLM2 weights (float32), 24 seeded requests (prompts 32–256 tokens, 16–128 output tokens
forced), alternating A and B twice so both see the same machine load.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import time

import servops_kernels.torch_ref as current_twin
from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from engine.model.default_model import ensure_default_model


def load_baseline(path: str):
    spec = importlib.util.spec_from_file_location("baseline_torch_ref", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    baseline = module.paged_decode_attention

    def without_plan(*args, plan=None, **kwargs):  # that twin predates the per-step gather plan
        return baseline(*args, **kwargs)

    return without_plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "baseline",
        nargs="?",
        default="/tmp/torch_ref_old.py",
        help="the baseline torch_ref.py (default: /tmp/torch_ref_old.py)",
    )
    args = parser.parse_args()
    # servops_kernels.attention calls torch_ref.paged_decode_attention through the module, so
    # swapping the module attribute swaps the twin the engine runs.
    twins = {"sdpa (baseline)": load_baseline(args.baseline), "strided": current_twin.paged_decode_attention}
    llm = LLM(str(ensure_default_model()), dtype="float32", max_model_len=512)
    rng = random.Random(0)
    prompts = [[rng.randrange(100, 40000) for _ in range(rng.randint(32, 256))] for _ in range(24)]
    params = [SamplingParams(max_tokens=rng.randint(16, 128), ignore_eos=True, temperature=0) for _ in prompts]
    useful_tokens = sum(p.max_tokens for p in params)
    for round_index in range(2):
        rates = {}
        for name, twin in twins.items():
            current_twin.paged_decode_attention = twin
            start = time.perf_counter()
            llm.generate(prompts, params, use_tqdm=False)
            rates[name] = useful_tokens / (time.perf_counter() - start)
        ratio = rates["strided"] / rates["sdpa (baseline)"]
        print(
            f"round {round_index}: "
            + ", ".join(f"{n} {r:.1f} tok/s" for n, r in rates.items())
            + f", ratio {ratio:.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
