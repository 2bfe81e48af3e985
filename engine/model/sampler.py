"""Sampler: logits of the last token of each sampled sequence → next token ids.

Vectorised over the batch: greedy rows take the argmax; random rows apply temperature,
top-k and top-p (on one ascending sort, like vLLM), then sample with the exponential-race
trick `argmax(probs / Exp(1))`, which equals a multinomial draw. A request with a `seed`
draws its exponentials from its own generator, so its output does not depend on what else
is in the batch. A request's `logit_bias` is added to its row first (as vLLM's
LogitBiasLogitsProcessor does, before temperature). While a request has fewer than
`min_tokens` outputs, EOS and its stop token ids are masked out.
"""

from __future__ import annotations

import torch

from engine.core.request import Request
from servops_kernels.layer_ops import argmax


def sample(logits: torch.Tensor, requests: list[Request]) -> list[int]:
    """logits [B, V] float32, one row per request in `requests` → one token id each."""
    _apply_logit_bias(logits, requests)
    _mask_min_tokens(logits, requests)
    params = [r.sampling_params for r in requests]
    greedy_tokens = argmax(logits)
    if all(p.greedy for p in params):
        return greedy_tokens.tolist()

    device = logits.device
    temperature = torch.tensor([1.0 if p.greedy else p.temperature for p in params], device=device)
    logits = logits / temperature[:, None]
    top_k = [p.top_k for p in params]
    top_p = [p.top_p for p in params]
    if any(k > 0 for k in top_k) or any(p < 1.0 for p in top_p):
        logits = _apply_top_k_top_p(logits, top_k, top_p)
    probs = torch.softmax(logits, dim=-1)
    race = torch.empty_like(probs).exponential_()
    for row, request in enumerate(requests):
        if request.generator is not None and not request.sampling_params.greedy:
            race[row].exponential_(generator=request.generator)
    sampled = argmax(probs / race)
    is_greedy = torch.tensor([p.greedy for p in params], device=device)
    return torch.where(is_greedy, greedy_tokens, sampled).tolist()


def _apply_top_k_top_p(logits: torch.Tensor, top_k: list[int], top_p: list[float]) -> torch.Tensor:
    vocab = logits.shape[-1]
    sorted_logits, order = logits.sort(dim=-1, descending=False)
    k = torch.tensor([kk if 0 < kk < vocab else vocab for kk in top_k], device=logits.device)
    kth_smallest_kept = sorted_logits.gather(1, (vocab - k).unsqueeze(1))
    sorted_logits = sorted_logits.masked_fill(sorted_logits < kth_smallest_kept, float("-inf"))
    p = torch.tensor(top_p, device=logits.device, dtype=torch.float32)
    cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    drop = cumulative <= (1 - p).unsqueeze(1)
    drop[:, -1] = False  # always keep the most likely token
    sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(1, order, sorted_logits)


def _mask_min_tokens(logits: torch.Tensor, requests: list[Request]) -> None:
    for row, request in enumerate(requests):
        params = request.sampling_params
        if request.num_output_tokens >= params.min_tokens:
            continue
        banned = list(params.stop_token_ids or [])
        if request.eos_token_id is not None and not params.ignore_eos:
            banned.append(request.eos_token_id)
        if banned:
            logits[row, banned] = float("-inf")


def _apply_logit_bias(logits: torch.Tensor, requests: list[Request]) -> None:
    for row, request in enumerate(requests):
        bias = request.sampling_params.logit_bias
        if bias:
            token_ids = torch.tensor(list(bias), device=logits.device)
            logits[row, token_ids] += torch.tensor(list(bias.values()), device=logits.device, dtype=logits.dtype)
