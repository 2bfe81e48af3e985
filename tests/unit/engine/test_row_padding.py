"""Steps of more than EXACT_ROWS tokens reach the model padded to a GEMM row bucket, and the padding
changes no token: padding rows write no KV (slot -1) and attention reads none of them.

The runner pads only where the weights are packed for oneDNN (servops_kernels.cpu_prepack); here the switch is
set by hand, so the test runs on any CPU, in float32 (exact products, so any leak of a padding row into a
real one would change the greedy tokens).
"""

from __future__ import annotations

import random

import pytest
import torch

from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from servops_kernels import cpu_prepack
from tests.helpers.tiny_model import build_tiny_model


@pytest.fixture(scope="module")
def llm(tmp_path_factory) -> LLM:
    return LLM(
        str(build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))),
        dtype="float32",
        device_memory_gib=0.25,
        max_model_len=256,
        max_num_batched_tokens=150,  # not a bucket: prompts chunked, decodes and chunks mixed in one step
        enable_prefix_caching=False,  # every run computes every prompt
    )


def test_padded_steps_give_the_same_tokens(llm: LLM, monkeypatch):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    runner = llm.llm_engine.runner
    rows_seen: list[int] = []
    real_forward = runner.model.forward

    def recording(input_ids, meta, kv_caches):
        rows_seen.append((input_ids.shape[0], meta.num_padding))
        return real_forward(input_ids, meta, kv_caches)

    monkeypatch.setattr(runner.model, "forward", recording)
    rng = random.Random(7)
    prompts = [{"prompt_token_ids": [rng.randrange(5, 250) for _ in range(rng.randrange(10, 120))]} for _ in range(6)]
    params = SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)
    try:
        tokens = {}
        for pad in (False, True):
            runner.pad_to_buckets = pad
            rows_seen.clear()
            tokens[pad] = [r.outputs[0].token_ids for r in llm.generate(prompts, params, use_tqdm=False)]
            if pad:
                padded = [(rows, extra) for rows, extra in rows_seen if extra]
                assert padded, f"no step had more rows than EXACT_ROWS: {rows_seen}"
                for rows, extra in rows_seen:
                    assert rows == cpu_prepack.bucket_rows(rows - extra)
            else:
                assert all(extra == 0 for _, extra in rows_seen)
    finally:
        runner.pad_to_buckets = False
        torch.set_num_threads(before)
    assert tokens[True] == tokens[False]
