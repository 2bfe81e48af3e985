"""Lone prefills at a few prompt lengths, timed after a ramp: what one prompt token costs.

Why: a ramp's steps mix prefill with decode, and its prompts often all have about the same length,
so the performance model's fit cannot tell a step's fixed part from its per-prompt-token part; on a
shared-prefix ramp each fit of the same server put the per-token cost somewhere else (0.18, 1.17
and 2.8 ms, docs/predict.md), and every prediction with prefix caching off inherited that. A lone
request of L uncached prompt tokens and one output token is one engine step (L within the token
budget) whose time is the fixed part plus L times the per-token part, so a few lengths, each timed
on an idle server, pin the slope directly (advisor.perf.calibrate reads them as extra fit rows).

Not records.measure_request, the ramp's own measurement: it times the first chunk with content,
and a lone sampled token may decode to no text (the tiny test model's often does), which it counts
as an empty response; here the first chunk carrying a choice is the token.

How: `/v1/completions`, streamed, `max_tokens` 1; each prompt opens with a random number so no
block of it is in the prefix cache; lengths interleaved over the repeats so a slow second of the
host does not fall on one length only. The prompt length is the server's own count
(`usage.prompt_tokens`); the time is the client's TTFT, as the ramp measures it.
"""

from __future__ import annotations

import json
import random

from loadtest.errors import LoadTestError
from loadtest.http_stream import Endpoint, stream_post
from loadtest.plan import auth_headers
from loadtest.results import PrefillProbe, ProbeTiming
from loadtest.workload import WORDS

REPEATS = 3
TIMEOUT_S = 60.0
# The longest probe prompt, in words. Why a bound: each prompt is built in memory before it is sent, and a
# 10^8-word one took minutes and gigabytes before the server could refuse it; no server serves a context
# much past a million tokens, so a longer probe measures nothing it could.
MAX_PROBE_WORDS = 1_048_576


def run_prefill_probe(
    endpoint: str,
    model: str,
    lengths: list[int],
    repeats: int = REPEATS,
    api_key: str | None = None,
    authorization: str | None = None,
    seed: int = 0,
) -> PrefillProbe:
    """Time `repeats` lone requests of each length (in words, ~tokens), one at a time; LoadTestError
    naming the length and what the server did when a request fails."""
    target = Endpoint.parse(endpoint)
    headers = auth_headers(api_key, authorization)
    rng = random.Random(f"{seed}:prefill-probe")
    timings = []
    for _ in range(repeats):
        for words in lengths:
            prompt = " ".join([f"#{rng.randrange(10**9)}", *(rng.choice(WORDS) for _ in range(max(0, words - 1)))])
            timings.append(_one(target, model, words, prompt, headers))
    return PrefillProbe(timings=timings)


def _one(target: Endpoint, model: str, words: int, prompt: str, headers: dict[str, str]) -> ProbeTiming:
    body = {
        "model": model,
        "prompt": prompt,
        "max_tokens": 1,
        "temperature": 0.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    seen: dict[str, float | int] = {}

    def on_event(at: float, event) -> None:  # stream_post keeps the [DONE] marker to itself
        chunk = json.loads(event.data)
        if chunk.get("choices") and "first" not in seen:
            seen["first"] = at
        usage = chunk.get("usage") or {}
        if usage.get("prompt_tokens"):
            seen["prompt_tokens"] = int(usage["prompt_tokens"])

    try:
        outcome = stream_post(target, "/v1/completions", body, on_event, TIMEOUT_S, headers)
    except (ValueError, TypeError) as exc:  # a body that is not the OpenAI stream format
        raise LoadTestError(f"prefill probe ({words} words): the server's stream is not JSON ({exc})") from None
    where = f"prefill probe ({words} words) against {target.url('/v1/completions')}"
    if outcome.error_type:
        raise LoadTestError(
            f"{where}: {outcome.error_message or outcome.error_type}; give lengths that fit the server's "
            "--max-model-len and the model it serves"
        )
    if "first" not in seen or "prompt_tokens" not in seen:
        raise LoadTestError(
            f"{where}: no token or no usage.prompt_tokens in the stream; the server must stream /v1/completions "
            "with stream_options.include_usage (vLLM and servops serve do)"
        )
    return ProbeTiming(words=words, prompt_tokens=int(seen["prompt_tokens"]), ttft_s=seen["first"] - outcome.sent_perf)
