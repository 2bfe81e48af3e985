"""Sampler behaviour on hand-made logits."""

from __future__ import annotations

import torch

from engine.core.request import Request
from engine.core.sampling_params import SamplingParams
from engine.model.sampler import sample


def req(params: SamplingParams, eos: int | None = None, seed_generator: bool = False) -> Request:
    r = Request("r", [1, 2, 3], params, arrival_time=0.0, max_tokens=params.max_tokens or 16, eos_token_id=eos)
    if params.seed is not None:
        r.generator = torch.Generator().manual_seed(params.seed)
    return r


def logits(*rows: list[float]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def test_greedy_takes_the_argmax():
    assert sample(logits([0.1, 3.0, 0.2], [5.0, 0.0, 1.0]), [req(SamplingParams(temperature=0))] * 2) == [1, 0]


def test_top_k_one_is_greedy_even_at_high_temperature():
    rows = logits(*[[0.0, 1.0, 0.5, 0.9]] * 20)
    out = sample(rows, [req(SamplingParams(temperature=5.0, top_k=1))] * 20)
    assert out == [1] * 20


def test_tiny_top_p_keeps_only_the_most_likely_token():
    rows = logits(*[[0.0, 2.0, 1.9, 0.5]] * 20)
    assert sample(rows, [req(SamplingParams(temperature=1.0, top_p=0.01))] * 20) == [1] * 20


def test_top_k_never_samples_outside_the_k_best():
    torch.manual_seed(0)
    rows = logits(*[[3.0, 2.9, 2.8, -1.0, -1.0, 2.7]] * 200)
    out = sample(rows, [req(SamplingParams(temperature=2.0, top_k=2))] * 200)
    assert set(out) == {0, 1}


def test_random_sampling_follows_the_distribution():
    torch.manual_seed(0)
    rows = logits(*[[0.0, 0.0]] * 2000)
    out = sample(rows, [req(SamplingParams(temperature=1.0))] * 2000)
    assert 800 < sum(out) < 1200  # fair coin


def test_same_seed_gives_the_same_tokens_whatever_else_is_in_the_batch():
    flat = [0.0] * 50
    alone = [sample(logits(flat), [r])[0] for r in [req(SamplingParams(temperature=1.0, seed=7))] for _ in range(1)]
    r1, r2 = req(SamplingParams(temperature=1.0, seed=7)), req(SamplingParams(temperature=1.0, seed=7))
    first = [sample(logits(flat), [r1])[0] for _ in range(10)]
    batched = [sample(logits(flat, flat), [req(SamplingParams(temperature=1.0)), r2])[1] for _ in range(10)]
    assert first == batched
    assert alone[0] == first[0]


def test_min_tokens_masks_eos_and_stop_token_ids():
    params = SamplingParams(temperature=0, min_tokens=2, stop_token_ids=[1])
    r = req(params, eos=0)
    assert sample(logits([9.0, 8.0, 1.0]), [r]) == [2]
    r.append_output_token(2)
    r.append_output_token(2)
    assert sample(logits([9.0, 8.0, 1.0]), [r]) == [0]  # min_tokens reached: EOS allowed again


def test_ignore_eos_does_not_mask_eos_under_min_tokens_but_eos_is_not_banned_either():
    r = req(SamplingParams(temperature=0, min_tokens=3, ignore_eos=True), eos=0)
    assert sample(logits([9.0, 1.0]), [r]) == [0]
