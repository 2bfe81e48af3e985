"""A/B in one run: engine throughput with the SDPA decode twin vs the strided-matmul twin.

    git show 5b8c214:kernels/torch_ref.py > /tmp/torch_ref_old.py
    .venv/bin/python benchmarks/decode_twin_ab.py

The baseline is kernels/torch_ref.py as of commit 5b8c214 (gather blocks, masked SDPA with
grouped heads folded into query rows); the candidate is the current twin. Same engine, same
SmolLM2 weights (float32), 24 seeded requests (prompts 32–256 tokens, 16–128 output tokens
forced), alternating A and B twice so both see the same machine load.
"""
import importlib.util, random, time, sys
import torch
from engine.default_model import ensure_default_model
from engine.llm import LLM
from engine.sampling_params import SamplingParams
import kernels.torch_ref as new_ref
spec = importlib.util.spec_from_file_location("old_ref", sys.argv[1] if len(sys.argv) > 1 else "/tmp/torch_ref_old.py")
old_ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(old_ref)
impls = {"old": old_ref.paged_decode_attention, "new": new_ref.paged_decode_attention}
model = str(ensure_default_model())
llm = LLM(model, dtype="float32", max_model_len=512)
rng = random.Random(0)
prompts = [[rng.randrange(100, 40000) for _ in range(rng.randint(32, 256))] for _ in range(24)]
params = [SamplingParams(max_tokens=rng.randint(16, 128), ignore_eos=True, temperature=0) for _ in prompts]
useful = sum(p.max_tokens for p in params)
for rnd in range(2):
    for name in ("old", "new"):
        new_ref.paged_decode_attention = impls[name]
        t = time.perf_counter()

        t = time.perf_counter()
        outs = llm.generate(prompts, params, use_tqdm=False)
        dt = time.perf_counter() - t
        print(f"round {rnd} {name}: {useful/dt:.1f} useful tok/s ({dt:.1f} s)", flush=True)
