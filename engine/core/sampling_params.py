"""SamplingParams: what a request asks of the sampler and of the stop checks (vLLM's names).

Validation raises RequestValidationError with vLLM's wording, so the server can answer 400
with the same text a vLLM user would see.
"""

from __future__ import annotations

import dataclasses
import math

from engine.core.errors import RequestValidationError

# Temperatures below this are greedy (vLLM's _SAMPLING_EPS).
SAMPLING_EPS = 1e-5


@dataclasses.dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 or -1: disabled
    seed: int | None = None
    max_tokens: int | None = 16  # None: up to max_model_len
    min_tokens: int = 0
    ignore_eos: bool = False
    stop: list[str] | str | None = None
    stop_token_ids: list[int] | None = None
    include_stop_str_in_output: bool = False
    skip_special_tokens: bool = True
    detokenize: bool = True
    logit_bias: dict[int, float] | dict[str, float] | None = None  # token id -> bias, clamped to [-100, 100]

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        self.stop = [s for s in (self.stop or []) if s]
        self.stop_token_ids = list(self.stop_token_ids or [])
        if self.top_k == -1:
            self.top_k = 0
        self.logit_bias = _logit_bias(self.logit_bias)
        self._verify()

    @property
    def greedy(self) -> bool:
        return self.temperature < SAMPLING_EPS

    def _verify(self) -> None:
        if self.n != 1:
            raise RequestValidationError(f"n must be 1 for this engine, got {self.n}.")
        if not math.isfinite(self.temperature):  # NaN compares false with everything below
            raise RequestValidationError(
                f"temperature must be a finite number, got {self.temperature}.", "temperature", self.temperature
            )
        if self.temperature < 0.0:
            raise RequestValidationError(
                f"temperature must be non-negative, got {self.temperature}.", "temperature", self.temperature
            )
        if not 0.0 < self.top_p <= 1.0:
            raise RequestValidationError(f"top_p must be in (0, 1], got {self.top_p}.", "top_p", self.top_p)
        if self.top_k < 0:
            raise RequestValidationError(f"top_k must be 0 (disable), or at least 1, got {self.top_k}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise RequestValidationError(f"max_tokens must be at least 1, got {self.max_tokens}.")
        if self.min_tokens < 0:
            raise RequestValidationError(f"min_tokens must be greater than or equal to 0, got {self.min_tokens}.")
        if self.max_tokens is not None and self.min_tokens > self.max_tokens:
            raise RequestValidationError(
                f"min_tokens must be less than or equal to max_tokens={self.max_tokens}, got {self.min_tokens}."
            )
        if any(t < 0 for t in self.stop_token_ids or []):
            raise RequestValidationError(f"stop_token_ids must be non-negative, got {self.stop_token_ids}.")


def _logit_bias(bias: dict | None) -> dict[int, float] | None:
    """Keys as token ids and biases clamped to [-100, 100], as vLLM's SamplingParams.from_optional."""
    if not bias:
        return None
    invalid_keys = []
    converted: dict[int, float] = {}
    for token, value in bias.items():
        try:
            token_id = int(token)
        except (TypeError, ValueError):
            invalid_keys.append(token)
            continue
        converted[token_id] = min(100.0, max(-100.0, float(value)))
    if invalid_keys:
        raise RequestValidationError(
            f"logit_bias contains key(s) that cannot be converted to integer token IDs: {invalid_keys!r}",
            "logit_bias",
            invalid_keys,
        )
    return converted


def check_logit_bias_vocab(params: SamplingParams, vocab_size: int) -> None:
    """vLLM's `_validate_logit_bias`: every biased token id must be inside the vocabulary."""
    invalid = [token_id for token_id in params.logit_bias or {} if token_id < 0 or token_id >= vocab_size]
    if invalid:
        raise RequestValidationError(
            f"token_id(s) {invalid} in logit_bias contain out-of-vocab token ids. Vocabulary size: {vocab_size}",
            "logit_bias",
            invalid,
        )
