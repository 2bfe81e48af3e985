"""The per-step cost: how long one engine iteration takes, given what it computes.

Why this form: an iteration's time on a memory-bound decoder is a fixed part (kernel
launches, sampling, Python and scheduling overhead, reading the weights once), plus a part
per prompt token computed (prefill is compute-bound: FLOPs per token), per sequence decoded
(a row through every matmul, sampling, detokenising) and per context token whose KV the
attention reads. BLIS/inference-sim fits the same four terms per GPU and model; vLLM's own
scheduler keeps each iteration under `--max-num-batched-tokens`, which is what makes the
prefill term bounded per step.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

FEATURES = ("base", "prefill_tokens", "decode_seqs", "context_tokens")


@dataclass(frozen=True, slots=True)
class StepShape:
    """What one engine iteration computes."""

    prefill_tokens: int = 0  # prompt (or recompute) tokens whose KV this step computes, cache hits excluded
    decode_seqs: int = 0  # sequences that decode one token this step
    context_tokens: int = 0  # KV tokens the attention reads, summed over every scheduled sequence

    def features(self) -> tuple[float, float, float, float]:
        return 1.0, float(self.prefill_tokens), float(self.decode_seqs), float(self.context_tokens)


class StepCost(BaseModel):
    """step time = base_s + prefill_token_s·P + decode_seq_s·D + context_token_s·C (seconds).

    `overhead_s` is per request and outside the engine: from the client's send to the engine
    seeing the request (HTTP, chat template, tokenisation) plus streaming the first token
    back; it adds to TTFT and e2e but takes no engine time. `relative_error` is the 1-sigma
    relative error of latency and throughput predictions made with this cost (from the
    calibration's residuals, or stated for a prior), `source` says where the numbers came from.
    """

    base_s: float = Field(ge=0)
    prefill_token_s: float = Field(ge=0)
    decode_seq_s: float = Field(ge=0)
    context_token_s: float = Field(ge=0)
    overhead_s: float = Field(default=0.0, ge=0)
    relative_error: float = Field(default=0.5, ge=0)
    source: str = ""

    def step_time(self, shape: StepShape) -> float:
        return (self.base_s + self.prefill_token_s * shape.prefill_tokens + self.decode_seq_s * shape.decode_seqs
                + self.context_token_s * shape.context_tokens)

    def coefficients(self) -> tuple[float, float, float, float]:
        return self.base_s, self.prefill_token_s, self.decode_seq_s, self.context_token_s

    def scaled(self, factor: float) -> StepCost:
        """Every engine term times `factor` (the overhead too): the edges of the uncertainty band."""
        return self.model_copy(update={
            "base_s": self.base_s * factor, "prefill_token_s": self.prefill_token_s * factor,
            "decode_seq_s": self.decode_seq_s * factor, "context_token_s": self.context_token_s * factor,
            "overhead_s": self.overhead_s * factor})

    def describe(self) -> str:
        return (f"step = {self.base_s * 1e3:.2f} ms + {self.prefill_token_s * 1e6:.1f} µs/prompt token + "
                f"{self.decode_seq_s * 1e3:.3f} ms/decode seq + {self.context_token_s * 1e6:.3f} µs/context token; "
                f"{self.overhead_s * 1e3:.1f} ms per request outside the engine (±{self.relative_error:.0%})")
