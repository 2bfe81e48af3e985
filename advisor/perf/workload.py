"""The requests of a ramp step in tokens: the very prompts the load generator sent.

Why the generator's own prompts: `loadtest.workload.Workload.prompt` makes every draw of request
n of step k (its output length, its input length, its shared-prefix group); the replay asks it
for the same request and turns each word into one token id, the same id for the same word. So
the replay sees the lengths and the shared prefixes the measured ramp sent, whatever the
workload kind, and a new kind needs nothing here: a second copy of the draws would replay a
kind it does not know as something else, silently. Only `file` prompts are not replayed from
the file, which need not exist where the prediction runs: their lengths come from the ramp's
measured prompt quantiles.

What the ramp file cannot say is measured instead: the chat template adds tokens to every
prompt (SmolLM2's adds about 36 on vLLM 0.32), so the prompt length is the drawn word count
plus the overhead the server's own `usage.prompt_tokens` showed (`prompt_tokens` in the
step); those template tokens open every prompt and are shared like a prefix.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from loadtest.results import Percentiles
from loadtest.workload import LengthSpec, Workload, WorkloadSpec

# Token-id ranges that keep template, words and file prompts apart in the replay's prefix hashing.
# Prompt tokens assumed where a ramp recorded none (a file workload without its prompts' lengths).
UNMEASURED_PROMPT_TOKENS = 128
_TEMPLATE_BASE = 1_000_000
_WORD_BASE = 2_000_000
_UNIQUE_BASE = 10_000_000_000


@dataclass(frozen=True, slots=True)
class RequestShape:
    """One replayed request: its prompt token ids (shared parts first) and how many tokens it decodes."""

    prompt_ids: tuple[int, ...]
    output_tokens: int


class ReplayWorkload(BaseModel):
    """The workload of a ramp in the replay's terms (frozen: the requests it caches stay true)."""

    model_config = ConfigDict(frozen=True)

    spec: WorkloadSpec
    template_tokens: int = Field(default=0, ge=0, description="tokens the chat template adds to every prompt")
    prompt_quantiles: Percentiles | None = Field(
        default=None, description="measured prompt lengths, used when the prompts came from a file"
    )
    mean_output_tokens: float | None = Field(default=None, description="measured, for file workloads")
    notes: list[str] = Field(default_factory=list)
    _sent: Workload | None = PrivateAttr(default=None)  # the load generator, asked for each request's prompt
    _word_ids: dict[str, int] = PrivateAttr(default_factory=dict)  # one token id per distinct word
    _shapes: dict[tuple[int, int], RequestShape] = PrivateAttr(default_factory=dict)  # by (step, index)

    def typical_request_tokens(self) -> int:
        """Prompt + output tokens of the median request: what a shorter --max-model-len refuses most of."""
        if self.spec.kind == "file":
            q = self.prompt_quantiles
            prompt = q.p50 if q and q.p50 else UNMEASURED_PROMPT_TOKENS
            return int(prompt + (self.mean_output_tokens or self.spec.output_len.mean))
        prompt = self.template_tokens + self.spec.prefix_len + self.spec.input_len.mean
        return int(prompt + self.spec.output_len.mean)

    def longest_request_tokens(self) -> int:
        """A generous bound on prompt + output tokens of any request (sizes an 'unlimited' KV pool)."""
        output = self.spec.output_len.mean + 4 * self.spec.output_len.spread
        if self.spec.kind == "file":
            q = self.prompt_quantiles
            prompt = 1.5 * (q.p99 or q.p50 or UNMEASURED_PROMPT_TOKENS) if q else 4096
            output = max(output, self.mean_output_tokens or 0)
        else:
            prompt = (
                self.template_tokens + self.spec.prefix_len + self.spec.input_len.mean + 4 * self.spec.input_len.spread
            )
        return int(prompt + output) + 1

    def request(self, step: int, index: int) -> RequestShape:
        if self.spec.kind == "file":
            rng = random.Random(f"{self.spec.seed}:{step}:{index}")
            return self._file_request(rng, step, index, self.spec.output_len.draw(rng))
        shape = self._shapes.get((step, index))
        if shape is None:  # calibration and what-ifs replay the same requests many times over
            if self._sent is None:
                self._sent = Workload(self.spec)
            prompt, output = self._sent.prompt(step, index)
            text = prompt if isinstance(prompt, str) else "\n".join(m.get("content", "") for m in prompt)
            ids = self._word_ids
            words = tuple(ids.setdefault(word, _WORD_BASE + len(ids)) for word in text.split())
            template = tuple(range(_TEMPLATE_BASE, _TEMPLATE_BASE + self.template_tokens))
            # An empty prompt still costs the engine a token: a chat template or a BOS token always adds one.
            shape = self._shapes[(step, index)] = RequestShape(template + (words or (_WORD_BASE - 1,)), output)
        return shape

    def _file_request(self, rng: random.Random, step: int, index: int, output: int) -> RequestShape:
        q = self.prompt_quantiles
        length = UNMEASURED_PROMPT_TOKENS if q is None or q.p50 is None else _from_quantiles(q, rng.random())
        if self.mean_output_tokens:
            output = max(1, round(self.mean_output_tokens))
        unique_start = _UNIQUE_BASE + (step * 1_000_000 + index) * 65_536
        return RequestShape(tuple(range(unique_start, unique_start + max(1, length))), output)


def workload_from_ramp(config: dict, steps: list[dict]) -> ReplayWorkload:
    """The replay workload of a ramp result (`config` and `steps` of its JSON)."""
    spec = WorkloadSpec.model_validate(config.get("workload") or {})
    notes: list[str] = []
    measured = [s["prompt_tokens"] for s in steps if s.get("prompt_tokens") and s["prompt_tokens"].get("p50")]
    template = 0
    if spec.kind != "file":
        if measured:
            prompt_p50 = sorted(m["p50"] for m in measured)[len(measured) // 2]
            template = max(0, round(prompt_p50 - _median_words(spec.input_len) - spec.prefix_len * _shared(spec)))
            notes.append(
                f"prompts: {_median_words(spec.input_len)} words drawn as the ramp drew them, plus "
                f"{template} template tokens (the server's usage.prompt_tokens p50 was {prompt_p50:g})"
            )
        else:
            notes.append(
                "prompts: the ramp recorded no usage.prompt_tokens (older servops or a server without "
                "usage), so chat-template tokens are not counted; prefill is underestimated"
            )
    ok = [s for s in steps if s.get("ok_requests")]
    mean_output = (sum(s.get("output_tokens", 0) for s in ok) / sum(s["ok_requests"] for s in ok)) if ok else None
    return ReplayWorkload(
        spec=spec,
        template_tokens=template,
        prompt_quantiles=Percentiles.model_validate(measured[0]) if measured else None,
        mean_output_tokens=mean_output if spec.kind == "file" else None,
        notes=notes,
    )


def _median_words(length: LengthSpec) -> int:
    return length.mean


def _shared(spec: WorkloadSpec) -> float:
    return spec.share if spec.kind == "shared-prefix" else 0.0


def _from_quantiles(q: Percentiles, u: float) -> int:
    """A length at quantile u, linear between the recorded quantiles (p50 below the median)."""
    points = [(0.5, q.p50), (0.9, q.p90 or q.p50), (0.95, q.p95 or q.p90 or q.p50), (0.99, q.p99 or q.p50)]
    if u <= 0.5:
        return max(1, round(q.p50 * (0.5 + u)))  # a spread below the median the quantiles do not record
    for (u0, v0), (u1, v1) in itertools.pairwise(points):
        if u <= u1:
            return max(1, round(v0 + (v1 - v0) * (u - u0) / (u1 - u0)))
    return max(1, round(points[-1][1]))
