"""Subprocess worker for test_engine_backends: greedy tokens from the engine on a tiny model.

Run as `python -m tests.unit.servops_kernels.greedy_worker MODEL_DIR` with SERVOPS_ATTENTION_BACKEND
and TRITON_INTERPRET set by the caller (a fresh process, so Triton sees TRITON_INTERPRET before
its first import). The batch is built to reach every kernel path the engine uses: a chunked
prefill (prompts longer than the 32-token step budget), decodes batched with prefill chunks,
and a prefix-cache hit in the second round. Prints one JSON line.
"""

from __future__ import annotations

import json
import sys

import torch


def main(model_dir: str) -> None:
    torch.set_num_threads(1)  # the CI box has two shared cores
    from engine.core.llm import LLM
    from engine.core.sampling_params import SamplingParams
    from servops_kernels.attention import backend_for

    llm = LLM(
        model_dir,
        device="cpu",
        dtype="float32",
        device_memory_gib=0.25,
        max_model_len=256,
        max_num_batched_tokens=32,
        max_num_seqs=4,
        seed=0,
    )
    greedy = SamplingParams(temperature=0.0, max_tokens=5, ignore_eos=True)
    prefix = "A paged cache keeps each block of keys once; "
    first = llm.generate(
        [prefix + "decode reads them.", "hi", prefix + "prefill chunks cross blocks."], greedy, use_tqdm=False
    )
    second = llm.generate([prefix + "decode reads them again."], greedy, use_tqdm=False)
    outputs = first + second
    triton_kernels = sys.modules.get("servops_kernels.paged_decode")
    print(
        json.dumps(
            {
                "backend": backend_for("cpu"),
                "triton_interpreted": bool(triton_kernels and triton_kernels.INTERPRETED),
                "tokens": [list(o.output_token_ids) for o in outputs],
                "cached_tokens": [o.num_cached_tokens for o in outputs],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
