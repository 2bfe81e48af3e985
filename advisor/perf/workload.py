"""The requests of a ramp step in tokens, drawn exactly as the load generator drew them.

Why the same draws: `loadtest.workload` gives request n of step k its own
`random.Random(f"{seed}:{step}:{n}")`; drawing the output length, the input length and the
shared-prefix group in the same order reproduces the very lengths and prefix groups the
measured ramp sent, so the replay and the measurement see the same requests.

What the ramp file cannot say is measured instead: the chat template adds tokens to every
prompt (SmolLM2's adds about 36 on vLLM 0.32), so the prompt length is the drawn word count
plus the overhead the server's own `usage.prompt_tokens` showed (`prompt_tokens` in the
step); those template tokens open every prompt and are shared like a prefix.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from pydantic import BaseModel, Field

from loadtest.results import Percentiles
from loadtest.workload import LengthSpec, WorkloadSpec

# Token-id ranges that keep shared and unique content apart in the replay's prefix hashing.
_TEMPLATE_BASE = 1_000_000
_PREFIX_BASE = 2_000_000
_PREFIX_STRIDE = 100_000
_UNIQUE_BASE = 10_000_000


@dataclass(frozen=True, slots=True)
class RequestShape:
    """One replayed request: its prompt token ids (shared parts first) and how many tokens it decodes."""

    prompt_ids: tuple[int, ...]
    output_tokens: int


class ReplayWorkload(BaseModel):
    """The workload of a ramp in the replay's terms."""

    spec: WorkloadSpec
    template_tokens: int = Field(default=0, ge=0, description="tokens the chat template adds to every prompt")
    prompt_quantiles: Percentiles | None = Field(
        default=None, description="measured prompt lengths, used when the prompts came from a file"
    )
    mean_output_tokens: float | None = Field(default=None, description="measured, for file workloads")
    notes: list[str] = Field(default_factory=list)

    def longest_request_tokens(self) -> int:
        """A generous bound on prompt + output tokens of any request (sizes an 'unlimited' KV pool)."""
        output = self.spec.output_len.mean + 4 * self.spec.output_len.spread
        if self.spec.kind == "file":
            q = self.prompt_quantiles
            prompt = 1.5 * (q.p99 or q.p50 or 128) if q else 4096
            output = max(output, self.mean_output_tokens or 0)
        else:
            prompt = (
                self.template_tokens + self.spec.prefix_len + self.spec.input_len.mean + 4 * self.spec.input_len.spread
            )
        return int(prompt + output) + 1

    def request(self, step: int, index: int) -> RequestShape:
        rng = random.Random(f"{self.spec.seed}:{step}:{index}")
        output = self.spec.output_len.draw(rng)
        if self.spec.kind == "file":
            return self._file_request(rng, step, index, output)
        input_len = self.spec.input_len.draw(rng)
        shared: list[int] = list(range(_TEMPLATE_BASE, _TEMPLATE_BASE + self.template_tokens))
        if self.spec.kind == "shared-prefix" and self.spec.prefix_len and rng.random() < self.spec.share:
            group = rng.randrange(self.spec.groups)
            base = (
                _PREFIX_BASE
                + group * _PREFIX_STRIDE
                + (step * self.spec.groups * _PREFIX_STRIDE if self.spec.unique_prefix_per_step else 0)
            )
            shared += range(base, base + self.spec.prefix_len)
        unique_start = _UNIQUE_BASE + (step * 1_000_000 + index) * 4096
        return RequestShape(tuple(shared) + tuple(range(unique_start, unique_start + max(1, input_len))), output)

    def _file_request(self, rng: random.Random, step: int, index: int, output: int) -> RequestShape:
        q = self.prompt_quantiles
        length = 128 if q is None or q.p50 is None else _from_quantiles(q, rng.random())
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
