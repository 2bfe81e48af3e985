"""Scheduler: vLLM V1-style iteration-level scheduling with a token budget.

Each step spends at most `max_num_batched_tokens` tokens: running requests first (decodes,
and the next chunk of prompts being prefilled in chunks), then waiting requests in arrival
order while there is budget, a free sequence slot (`max_num_seqs`) and KV blocks. There is
no separate prefill phase: a step can mix decode tokens and prompt chunks.

When a running request needs a block and the pool is full, the newest running request is
preempted by recompute: its blocks are freed, `num_computed_tokens` goes back to 0 and it
goes to the head of the waiting queue (its prefix may still be cached, so recompute is often
cheap). No request is admitted from the waiting queue in a step that preempted.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable

from engine.core.kv_cache_manager import KVCacheManager
from engine.core.request import Request, RequestStatus


@dataclasses.dataclass(slots=True)
class ScheduledRequest:
    request: Request
    num_computed_tokens: int  # KV already cached before this step (start position of the chunk)
    num_new_tokens: int  # tokens whose KV this step computes
    # True when this chunk reaches the end of the known tokens, so a token is sampled. Set once when
    # the step is scheduled (the request's tokens do not change until its sample is appended): the
    # engine, the scheduler and the performance model's replay (millions of virtual steps per
    # prediction) each read it several times per request per step.
    samples: bool = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.samples = self.num_computed_tokens + self.num_new_tokens == len(self.request.all_token_ids)


@dataclasses.dataclass
class SchedulerOutput:
    scheduled: list[ScheduledRequest]  # decodes (one token, no chunk) first, then prefill chunks
    num_decodes: int
    num_preemptions: int
    num_prompt_tokens: int  # computed prompt tokens this step (cached ones excluded)

    @property
    def total_num_scheduled_tokens(self) -> int:
        return sum(s.num_new_tokens for s in self.scheduled)


class Scheduler:
    def __init__(
        self,
        kv_cache_manager: KVCacheManager,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        max_model_len: int,
        enable_chunked_prefill: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # `clock` stamps first-scheduled and finished times; the performance model
        # (advisor/perf) replays this scheduler in virtual time by passing its own clock.
        self.clock = clock
        self.kv = kv_cache_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.max_model_len = max_model_len
        self.enable_chunked_prefill = enable_chunked_prefill
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.num_preemptions_total = 0

    def add_request(self, request: Request) -> None:
        self.waiting.append(request)

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> SchedulerOutput:
        """One engine step, as vLLM V1 schedules it: the running requests first, oldest first, each its
        next tokens within the step's token budget (preempting the newest when the KV cache is full);
        then, only if nothing was preempted, the waiting queue in order while budget and seats last."""
        scheduled: list[ScheduledRequest] = []
        token_budget, num_preemptions = self._schedule_running(scheduled, self.max_num_batched_tokens)
        if num_preemptions == 0:
            self._schedule_waiting(scheduled, token_budget)
        decodes: list[ScheduledRequest] = []
        prefills: list[ScheduledRequest] = []
        num_prompt_tokens = 0
        for s in scheduled:
            (decodes if s.num_new_tokens == 1 and s.samples else prefills).append(s)
            prompt_len = len(s.request.prompt_token_ids)
            if s.num_computed_tokens < prompt_len:
                num_prompt_tokens += min(s.num_computed_tokens + s.num_new_tokens, prompt_len) - s.num_computed_tokens
            s.request.num_computed_tokens += s.num_new_tokens
        self.num_preemptions_total += num_preemptions
        return SchedulerOutput(decodes + prefills, len(decodes), num_preemptions, num_prompt_tokens)

    def _schedule_running(self, scheduled: list[ScheduledRequest], token_budget: int) -> tuple[int, int]:
        """Phase 1: the running requests' next tokens appended to `scheduled`; the budget left and the
        preemptions it took. A request that preempts itself ends the phase: nothing newer can run."""
        num_preemptions = 0
        index = 0
        while index < len(self.running) and token_budget > 0:
            request = self.running[index]
            num_new = min(request.num_tokens - request.num_computed_tokens, token_budget)
            if num_new <= 0:
                index += 1
                continue
            while not self.kv.allocate_slots(request, num_new):
                victim = self.running.pop()  # the newest running request
                self._preempt(victim)
                num_preemptions += 1
                if victim is request:
                    return token_budget, num_preemptions
            scheduled.append(ScheduledRequest(request, request.num_computed_tokens, num_new))
            token_budget -= num_new
            index += 1
        return token_budget, num_preemptions

    def _schedule_waiting(self, scheduled: list[ScheduledRequest], token_budget: int) -> None:
        """Phase 2: waiting requests admitted in order (their cached prefix counted as computed) until
        the budget, the seats (--max-num-seqs) or the KV cache runs out, or the head's prompt does not
        fit the budget with chunked prefill off."""
        while self.waiting and token_budget > 0 and len(self.running) < self.max_num_seqs:
            request = self.waiting[0]
            computed_blocks, num_cached = self.kv.get_computed_blocks(request)
            num_new = request.num_tokens - num_cached
            if num_new > token_budget and not self.enable_chunked_prefill:
                break
            num_new = min(num_new, token_budget)
            if not self.kv.allocate_slots(request, num_new, computed_blocks):
                break
            self.waiting.popleft()
            request.status = RequestStatus.RUNNING
            request.num_computed_tokens = num_cached
            if request.num_cached_tokens < 0:
                request.num_cached_tokens = num_cached
            if request.first_scheduled_time is None:
                request.first_scheduled_time = self.clock()
            self.running.append(request)
            scheduled.append(ScheduledRequest(request, num_cached, num_new))
            token_budget -= num_new

    def decode_only_steps(self) -> int:
        """How many next steps `schedule()` would spend decoding one token of every running request and
        nothing else: no prompt chunk, no request admitted, no KV block allocated, filled or freed (the
        head of the queue may be refused each time, as it was in this step's conditions). 0 when the
        next step is not such a step. Finishing requests is the caller's (the engine's stop rules), so
        the caller also bounds the count by the tokens each request has left.

        Why: the performance model replays millions of virtual steps per prediction, most of them
        this kind; it takes them without building each step (advisor/perf/replay.py) and then calls
        `skip_decode_steps`. The conditions under which that is exact live here, beside the code
        they mirror."""
        running = self.running
        if not running or len(running) > self.max_num_batched_tokens:
            return 0
        if self._tries_admission(len(running)) and self._head_admissible(self.max_num_batched_tokens - len(running)):
            return 0
        steps = self.max_model_len
        for request in running:
            if request.num_tokens - request.num_computed_tokens != 1:
                return 0
            steps = min(steps, self.kv.decode_steps_in_place(request))
        return steps

    def skip_decode_steps(self, steps: int) -> None:
        """Account for `steps` decode-only steps (`decode_only_steps`) taken without `schedule()`: each
        running request computed `steps` more tokens (appending the sampled ones is the caller's), and
        a refused head of the queue was queried in the prefix cache once per step, as vLLM counts."""
        if self._tries_admission(len(self.running)):
            head = self.waiting[0]
            _, num_cached = self.kv.peek_computed_blocks(head)
            if self.kv.enable_caching:
                self.kv.count_prefix_queries(head, num_cached, times=steps)
        for request in self.running:
            request.num_computed_tokens += steps

    def _tries_admission(self, num_running: int) -> bool:
        """Whether a step with `num_running` decodes goes on to the waiting queue (phase 2)."""
        return bool(self.waiting) and num_running < self.max_num_batched_tokens and num_running < self.max_num_seqs

    def _head_admissible(self, token_budget: int) -> bool:
        """Whether phase 2 would admit the head of the queue with `token_budget` left (reads only)."""
        request = self.waiting[0]
        computed_blocks, num_cached = self.kv.peek_computed_blocks(request)
        num_new = request.num_tokens - num_cached
        if num_new > token_budget and not self.enable_chunked_prefill:
            return False
        return self.kv.can_allocate(request, min(num_new, token_budget), computed_blocks)

    def finish_request(self, request: Request, status: RequestStatus) -> None:
        """Mark finished and free its blocks; works for running and waiting requests."""
        if request.status == RequestStatus.RUNNING:
            self.running.remove(request)
        elif request in self.waiting:
            self.waiting.remove(request)
        request.status = status
        request.finished_time = self.clock()
        self.kv.free(request)

    def _preempt(self, request: Request) -> None:
        self.kv.free(request)
        request.status = RequestStatus.PREEMPTED
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.waiting.appendleft(request)
