"""What the engine hands back per step: RequestOutput (contract in docs/architecture.md)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class RequestMetrics:
    """Timestamps are time.monotonic() seconds."""

    arrival_time: float
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    last_token_time: float | None = None
    finished_time: float | None = None
    num_preemptions: int = 0

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_token_time is None else self.first_token_time - self.arrival_time

    @property
    def e2e_s(self) -> float | None:
        return None if self.finished_time is None else self.finished_time - self.arrival_time


@dataclasses.dataclass
class CompletionOutput:
    """vLLM's `RequestOutput.outputs[0]`, for code written against vLLM's offline API."""

    index: int
    text: str
    token_ids: list[int]
    finish_reason: str | None
    stop_reason: int | str | None


@dataclasses.dataclass
class RequestOutput:
    request_id: str
    prompt_token_ids: list[int]
    new_token_ids: list[int]
    output_token_ids: list[int]
    new_text: str
    text: str
    finished: bool
    finish_reason: str | None  # "stop" | "length" | "abort" once finished
    stop_reason: int | str | None
    num_cached_tokens: int
    metrics: RequestMetrics
    prompt: str | None = None

    @property
    def outputs(self) -> list[CompletionOutput]:
        return [CompletionOutput(0, self.text, self.output_token_ids, self.finish_reason, self.stop_reason)]
