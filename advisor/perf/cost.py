"""The per-step cost: how long one engine iteration takes, given what it computes.

Why this form: an iteration's time on a memory-bound decoder is a fixed part (kernel
launches, sampling, Python and scheduling overhead, reading the weights once), plus a part
per prompt token computed (prefill is compute-bound: FLOPs per token), per sequence decoded
(a row through every matmul, sampling, detokenising) and per context token whose KV the
attention reads. BLIS/inference-sim fits the same four terms per GPU and model; vLLM's own
scheduler keeps each iteration under `--max-num-batched-tokens`, which is what makes the
prefill term bounded per step.

A fifth term, per sequence prefilling in the step (one prompt chunk), is the fixed part of a
prompt's computation: its own attention call, position and mask set-up, a logits row, Python
bookkeeping. Without it a fit whose computed prompts all had about the same length cannot
tell a chunk's fixed part from its per-token part, and extrapolates to longer prompts with
the sum: on the bundled engine's CPU path, a fit on 30-80-token suffixes priced a 258-token
uncached prompt at about twice its measured time (BENCHMARKS.md, predict_accuracy).
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

from pydantic import BaseModel, Field

FEATURES = ("base", "prefill_tokens", "prefill_seqs", "decode_seqs", "context_tokens")


@dataclass(frozen=True, slots=True)
class StepShape:
    """What one engine iteration computes."""

    prefill_tokens: int = 0  # prompt (or recompute) tokens whose KV this step computes, cache hits excluded
    decode_seqs: int = 0  # sequences that decode one token this step
    context_tokens: int = 0  # KV tokens the attention reads, summed over every scheduled sequence
    prefill_seqs: int = 0  # sequences computing a prompt (or recompute) chunk this step

    def features(self) -> tuple[float, float, float, float, float]:
        """In FEATURES order."""
        return (
            1.0,
            float(self.prefill_tokens),
            float(self.prefill_seqs),
            float(self.decode_seqs),
            float(self.context_tokens),
        )


class StepCost(BaseModel):
    """step time = base_s + prefill_token_s·P + prefill_seq_s·S + decode_seq_s·D + context_token_s·C
    (seconds), S the sequences computing a prompt chunk in the step.

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
    # Per prompt chunk (sequence prefilling in the step); 0 keeps the four-term form (a prior, or a
    # cost written before the term existed).
    prefill_seq_s: float = Field(default=0.0, ge=0)
    overhead_s: float = Field(default=0.0, ge=0)
    relative_error: float = Field(default=0.5, ge=0)
    source: str = ""
    # Optional: base + decode as a measured curve over the decode batch size instead of a line.
    # Real engines are not linear in the batch (a batch of one may take a faster path; large
    # batches amortise the weights), so a calibration that saw several batch sizes pins the step
    # time at each (`decode_knots`, `decode_curve_s`), linear between them and past the last.
    # A calibration solves for the curve's rises from knot to knot, each at least 0, so the curve
    # never falls: a step that decodes one more sequence does all the work of the smaller one
    # and more (see columns()).
    decode_knots: list[float] = Field(default_factory=list)
    decode_curve_s: list[float] = Field(default_factory=list)
    # Optional: how far the server's token gaps spread around its step (ITL p90, p95, p99 over p50), measured
    # where the replay has no tail of its own and replayed on every gap (advisor/perf/gap_spread.py).
    gap_spread: list[float] = Field(default_factory=list)

    def step_time(self, shape: StepShape) -> float:
        return (
            self._head(shape.decode_seqs)
            + self.prefill_token_s * shape.prefill_tokens
            + self.prefill_seq_s * shape.prefill_seqs
            + self.context_token_s * shape.context_tokens
        )

    def decode_step_terms(self, decode_seqs: int) -> tuple[float, float]:
        """(fixed, per context token) of a step that only decodes `decode_seqs` sequences: its time is
        `fixed + per_context_token * context_tokens`, the same float as `step_time` gives it.

        Why: the replay prices millions of decode-only steps whose batch stays the same for a run of
        steps (advisor/perf/replay.py); the batch's part is computed once per run, not once per step.
        Exact because a decode-only shape's prompt terms are `x * 0 == 0.0` and `head + 0.0 == head`."""
        return self._head(decode_seqs), self.context_token_s

    def step_time_of_one(self) -> float:
        """One sequence decoding alone with no context read: the step a change of layout moves most."""
        return self.step_time(StepShape(decode_seqs=1))

    def _head(self, decode_seqs: int) -> float:
        """The step's fixed part plus its decode part, for `decode_seqs` sequences."""
        if not self.decode_knots:
            return self.base_s + self.decode_seq_s * decode_seqs
        weights = hat_weights(self.decode_knots, decode_seqs)
        value = sum(w * v for w, v in zip(weights, self.decode_curve_s, strict=False))
        return max(value, min(self.decode_curve_s))  # a falling last segment never runs below the curve

    def columns(self) -> list[str]:
        """The coefficients a calibration solves for, in feature_row order (then the overhead).

        A curve is solved for as its value at the first knot and its rise to each next knot, all
        non-negative, so the fitted curve never falls with the batch. Why: in a closed-loop ramp
        the KV tokens attention reads grow with the batch (each stream holds about one request's
        context), so the curve and the per-context-token cost are nearly collinear; solved for
        freely, a fit on the bundled engine traded one for the other and put the 16-sequence step
        at 0 ms plus 79 µs per context token, which misprices any workload whose contexts are not
        the calibration's (predict_accuracy, BENCHMARKS.md)."""
        if self.decode_knots:
            return [
                *(f"decode_curve_rise_s[{i}]" for i in range(len(self.decode_knots))),
                "prefill_token_s",
                "prefill_seq_s",
                "context_token_s",
            ]
        return ["base_s", "prefill_token_s", "prefill_seq_s", "decode_seq_s", "context_token_s"]

    def feature_row(self, shape: StepShape) -> list[float]:
        """The step's features: step time = feature_row · the coefficients of columns()."""
        if self.decode_knots:
            return [
                *rise_weights(hat_weights(self.decode_knots, shape.decode_seqs)),
                float(shape.prefill_tokens),
                float(shape.prefill_seqs),
                float(shape.context_tokens),
            ]
        return list(shape.features())

    def with_coefficients(self, values: list[float]) -> StepCost:
        """A copy with the columns() coefficients (and the overhead, last) replaced."""
        *engine, overhead = values
        if self.decode_knots:
            count = len(self.decode_knots)
            return self.model_copy(
                update={
                    "decode_curve_s": [float(v) for v in itertools.accumulate(engine[:count])],
                    "prefill_token_s": float(engine[count]),
                    "prefill_seq_s": float(engine[count + 1]),
                    "context_token_s": float(engine[count + 2]),
                    "overhead_s": float(overhead),
                }
            )
        return self.model_copy(
            update={
                **dict(zip(self.columns(), (float(v) for v in engine), strict=False)),
                "overhead_s": float(overhead),
            }
        )

    def vector(self) -> list[float]:
        """Every coefficient by value (a curve by its values, not its rises): what a fit compares
        between rounds to see whether it has stopped moving."""
        head = self.decode_curve_s if self.decode_knots else [self.base_s]
        tail = (
            [self.prefill_token_s, self.prefill_seq_s, self.context_token_s]
            if self.decode_knots
            else [self.prefill_token_s, self.prefill_seq_s, self.decode_seq_s, self.context_token_s]
        )
        return [*head, *tail, self.overhead_s]

    def with_curve(self, knots: list[float]) -> StepCost:
        """This cost's line as a curve pinned at `knots` (the start of a curve calibration)."""
        values = [self.base_s + self.decode_seq_s * k for k in knots]
        return self.model_copy(update={"decode_knots": list(knots), "decode_curve_s": values})

    def scaled(self, factor: float) -> StepCost:
        """Every engine term times `factor` (the overhead too): the edges of the uncertainty band."""
        return self.model_copy(
            update={
                "base_s": self.base_s * factor,
                "prefill_token_s": self.prefill_token_s * factor,
                "prefill_seq_s": self.prefill_seq_s * factor,
                "decode_seq_s": self.decode_seq_s * factor,
                "context_token_s": self.context_token_s * factor,
                "overhead_s": self.overhead_s * factor,
                "decode_curve_s": [v * factor for v in self.decode_curve_s],
            }
        )

    def describe(self) -> str:
        if self.decode_knots:
            knots = zip(self.decode_knots, self.decode_curve_s, strict=False)
            curve = ", ".join(f"{k:g}: {v * 1e3:.1f} ms" for k, v in knots)
            head = f"step by decode batch ({curve})"
        else:
            head = f"step = {self.base_s * 1e3:.2f} ms + {self.decode_seq_s * 1e3:.3f} ms/decode seq"
        return (
            f"{head} + {self.prefill_seq_s * 1e3:.2f} ms/prompt chunk + "
            f"{self.prefill_token_s * 1e6:.1f} µs/prompt token + "
            f"{self.context_token_s * 1e6:.3f} µs/context token; "
            f"{self.overhead_s * 1e3:.1f} ms per request outside the engine (±{self.relative_error:.0%})"
        )


def rise_weights(weights: list[float]) -> list[float]:
    """Hat weights over a curve's values as weights over its rises: value i is the sum of rises 0..i,
    so rise j weighs the sum of the hat weights from knot j on."""
    return list(itertools.accumulate(reversed(weights)))[::-1]


def hat_weights(knots: list[float], x: float) -> list[float]:
    """Linear-interpolation weights of `x` over `knots` (sorted); past the last knot, the last segment
    extended (weights may then be negative: the curve's slope carries on)."""
    weights = [0.0] * len(knots)
    if len(knots) == 1:
        weights[0] = 1.0
        return weights
    i = min(max(bisect.bisect_right(knots, x) - 1, 0), len(knots) - 2)
    left, right = knots[i], knots[i + 1]
    t = (x - left) / (right - left)
    weights[i], weights[i + 1] = 1.0 - t, t
    return weights
