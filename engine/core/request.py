"""Request: one generation request as the scheduler and the block pool see it.

Tokens are kept as one growing list (`all_token_ids` = prompt + output) because the block
hashes, the slot mapping and recompute after preemption all index into the same sequence.
`num_computed_tokens` is how many of those tokens have KV in the cache; preemption by
recompute sets it back to 0.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

from engine.core.sampling_params import SamplingParams


class RequestStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"
    FINISHED_STOPPED = "stop"
    FINISHED_LENGTH = "length"
    FINISHED_ABORTED = "abort"

    @property
    def finished(self) -> bool:
        return self in (RequestStatus.FINISHED_STOPPED, RequestStatus.FINISHED_LENGTH, RequestStatus.FINISHED_ABORTED)


@dataclasses.dataclass(slots=True)
class Request:
    request_id: str
    prompt_token_ids: list[int]
    sampling_params: SamplingParams
    arrival_time: float
    max_tokens: int  # effective: params.max_tokens clamped to max_model_len - prompt length
    eos_token_id: int | None = None
    all_token_ids: list[int] = dataclasses.field(default_factory=list)
    num_computed_tokens: int = 0
    status: RequestStatus = RequestStatus.WAITING
    stop_reason: int | str | None = None
    num_preemptions: int = 0
    num_cached_tokens: int = -1  # prefix-cache hit at first scheduling; -1 until then
    block_hashes: list[int] = dataclasses.field(default_factory=list)
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    last_token_time: float | None = None
    finished_time: float | None = None
    detokenizer: Any = None  # engine.model.detokenizer.IncrementalDetokenizer, when detokenizing
    generator: Any = None  # torch.Generator for a per-request seed

    def __post_init__(self) -> None:
        if not self.all_token_ids:
            self.all_token_ids = list(self.prompt_token_ids)

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_tokens(self) -> int:
        return len(self.all_token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.all_token_ids) - len(self.prompt_token_ids)

    @property
    def output_token_ids(self) -> list[int]:
        return self.all_token_ids[len(self.prompt_token_ids) :]

    def append_output_token(self, token_id: int) -> None:
        self.all_token_ids.append(token_id)

    def extend_output_tokens(self, token_ids: Iterable[int]) -> None:
        """Several sampled tokens at once (the performance model's replay of a run of decode steps)."""
        self.all_token_ids.extend(token_ids)
