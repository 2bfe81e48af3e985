"""vLLM V1's scheduling replayed in virtual time over one ramp step.

Why the bundled engine's scheduler and not a re-implementation: it already follows vLLM V1
(token budget shared by decodes and prefill chunks, `--max-num-seqs`, chunked prefill,
prefix-cache hits on full blocks, KV blocks, preemption by recompute of the newest running
request, no admission in a step that preempted), and the engine's tests hold it to that. Here
it runs without a model: each iteration lasts what the step cost says, tokens are counters,
and the clock is the replay's own.

The load follows the ramp's plan: a concurrency step keeps N closed-loop streams busy (a
stream sends its next request when the last one ends), a rate step sends on the plan's own
arrival schedule (`RampPlan.arrival_offsets`, constant or seeded Poisson). Each request
leaves a `RequestRecord` shaped like the load generator's, so the ramp's own statistics
(loadtest.stats) turn the replay into a step result.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from advisor.perf.cost import StepCost, StepShape
from advisor.perf.limits import SchedulerLimits
from advisor.perf.workload import ReplayWorkload
from engine.core.kv_cache_manager import KVCacheManager
from engine.core.request import Request, RequestStatus
from engine.core.scheduler import Scheduler, SchedulerOutput
from loadtest.plan import RampPlan
from loadtest.records import RequestRecord

MAX_ENGINE_STEPS = 400_000  # a bound on any one replay, far above a 2-minute step at 1 ms per iteration
PREFIX_BLOCKS_SPARE = 256  # room for cached shared prefixes in a pool sized for the load


@dataclass(slots=True)
class EngineStep:
    """One virtual iteration: when it ran and what it computed."""

    start: float
    end: float
    shape: StepShape
    used_blocks: int = 0  # KV blocks held by requests during the step (as vllm:kv_cache_usage_perc counts)


@dataclass(slots=True)
class ReplayedRequest:
    index: int
    send: float  # the client's send time (virtual seconds from the step's start)
    arrival: float  # when the engine sees it (send + overhead)
    output_tokens: int
    prompt_tokens: int
    first_scheduled: float | None = None
    token_times: list[float] = field(default_factory=list)
    preemptions: int = 0
    rejected: str = ""


@dataclass(slots=True)
class StepReplay:
    """Everything one replayed step produced; `records` feed loadtest.stats like a real ramp's."""

    requests: list[ReplayedRequest]
    steps: list[EngineStep]
    preemptions: int
    truncated: bool  # hit MAX_ENGINE_STEPS or the drain bound with requests unfinished

    def steps_in_window(self, plan: RampPlan, step: int) -> list[EngineStep]:
        """The iterations that started inside step `step`'s measured window (after its warm-up)."""
        start, end = plan.window(step)
        offset = plan.step_start(step)
        return [s for s in self.steps if start <= s.start + offset < end]

    def records(self, step: int, step_start: float) -> list[RequestRecord]:
        out = []
        for r in self.requests:
            record = RequestRecord(
                step=step,
                index=r.index,
                intended_send_ts=step_start + r.send,
                actual_send_ts=step_start + r.send,
                prompt_tokens=r.prompt_tokens,
                token_source="usage",
            )
            if r.rejected:
                record.error_type, record.error_message, record.status = "http_400", r.rejected, 400
            elif len(r.token_times) < r.output_tokens:
                record.error_type, record.error_message = "cancelled", "still running when the replay ended"
                record.output_tokens = len(r.token_times)
            else:
                record.output_tokens = r.output_tokens
                record.content_chunks = r.output_tokens
                record.ttft_s = r.token_times[0] - r.send
                record.gaps_s = [b - a for a, b in zip(r.token_times, r.token_times[1:], strict=False)]
                record.e2e_s = r.token_times[-1] - r.send
                record.status = 200
            out.append(record)
        return out


def replay_step(
    plan: RampPlan,
    step: int,
    limits: SchedulerLimits,
    cost: StepCost,
    workload: ReplayWorkload,
    drain_s: float | None = None,
) -> StepReplay:
    """Replay step `step` of `plan` from an empty server; sends stop at the step's end, then the
    requests in flight get `drain_s` to finish (default: as the ramp gives them, see below)."""
    clock = _Clock()
    kv = KVCacheManager(
        limits.num_blocks or _enough_blocks(plan, step, limits, workload),
        limits.block_size,
        enable_caching=limits.enable_prefix_caching,
    )
    scheduler = Scheduler(
        kv,
        limits.max_num_seqs,
        limits.max_num_batched_tokens,
        limits.max_model_len,
        enable_chunked_prefill=limits.enable_chunked_prefill,
        clock=clock,
    )
    step_s = plan.step_s
    if drain_s is None:  # as the load generator: a request may run for its timeout, but not past the
        # ramp's end plus the cool-down, when whatever is still in flight is recorded as cancelled
        drain_s = min(plan.request_timeout_s, (plan.steps - step - 1) * step_s + plan.cooldown_s)
    deadline = step_s + drain_s
    sends: list[tuple[float, int]] = []  # (send time, stream or -1) heap
    if plan.mode == "concurrency":
        for stream in range(int(plan.levels[step])):
            heapq.heappush(sends, (0.0, stream))
    else:
        for offset in plan.arrival_offsets(step):
            heapq.heappush(sends, (offset, -1))
    arrivals: list[tuple[float, int]] = []  # (engine arrival, request index) heap
    replayed: list[ReplayedRequest] = []
    live: dict[str, tuple[Request, ReplayedRequest, int]] = {}
    engine_steps: list[EngineStep] = []
    preemptions = 0

    def send(at: float, stream: int) -> None:
        index = len(replayed)
        shape = workload.request(step, index)
        item = ReplayedRequest(
            index=index,
            send=at,
            arrival=at + cost.overhead_s,
            output_tokens=shape.output_tokens,
            prompt_tokens=len(shape.prompt_ids),
        )
        replayed.append(item)
        if len(shape.prompt_ids) + shape.output_tokens > limits.max_model_len:
            item.rejected = (
                f"prompt ({len(shape.prompt_ids)} tokens) + max_tokens ({shape.output_tokens}) exceeds "
                f"--max-model-len {limits.max_model_len}"
            )
            if stream >= 0:
                heapq.heappush(sends, (at, stream))
            return
        request = Request(
            request_id=str(index),
            prompt_token_ids=list(shape.prompt_ids),
            sampling_params=None,
            arrival_time=item.arrival,
            max_tokens=shape.output_tokens,
        )
        live[request.request_id] = (request, item, stream)
        heapq.heappush(arrivals, (item.arrival, index))

    truncated = False
    while True:
        while sends and sends[0][0] < step_s and sends[0][0] <= clock.now:
            at, stream = heapq.heappop(sends)
            send(at, stream)
        while arrivals and arrivals[0][0] <= clock.now:
            _, index = heapq.heappop(arrivals)
            scheduler.add_request(live[str(index)][0])
        if not scheduler.has_unfinished_requests():
            upcoming = [
                t
                for t in (sends[0][0] if sends and sends[0][0] < step_s else None, arrivals[0][0] if arrivals else None)
                if t is not None
            ]
            if not upcoming:
                break
            clock.now = max(clock.now, min(upcoming))
            continue
        if clock.now >= deadline or len(engine_steps) >= MAX_ENGINE_STEPS:
            truncated = True
            break
        out = scheduler.schedule()
        preemptions += out.num_preemptions
        if not out.scheduled:  # nothing fits (a prompt larger than the whole KV pool): reject the head
            _reject_unschedulable(scheduler, live, limits)
            continue
        shape = shape_of(out)
        start = clock.now
        clock.now = start + cost.step_time(shape)
        engine_steps.append(EngineStep(start, clock.now, shape, kv.num_blocks - kv.pool.num_free_blocks()))
        for s in out.scheduled:
            request, item, stream = live[s.request.request_id]
            if item.first_scheduled is None:
                item.first_scheduled = start
            item.preemptions = request.num_preemptions
            if not s.samples:
                continue
            request.append_output_token(_UNIQUE_OUTPUT + len(item.token_times))
            item.token_times.append(clock.now)
            if request.num_output_tokens >= request.max_tokens:
                scheduler.finish_request(request, RequestStatus.FINISHED_LENGTH)
                del live[request.request_id]
                if stream >= 0 and clock.now < step_s:
                    heapq.heappush(sends, (clock.now, stream))
    return StepReplay(requests=replayed, steps=engine_steps, preemptions=preemptions, truncated=truncated)


_UNIQUE_OUTPUT = 900_000_000


def _enough_blocks(plan: RampPlan, step: int, limits: SchedulerLimits, workload: ReplayWorkload) -> int:
    """A pool no request of this step can exhaust (the size is unknown: model no preemption)."""
    concurrent = limits.max_num_seqs
    if plan.mode == "concurrency":
        concurrent = min(concurrent, int(plan.levels[step]))
    per_request = -(-min(workload.longest_request_tokens(), limits.max_model_len) // limits.block_size) + 1
    return concurrent * per_request + PREFIX_BLOCKS_SPARE


def shape_of(out: SchedulerOutput) -> StepShape:
    """The cost-relevant shape of a scheduled iteration."""
    prefill = chunks = decode = context = 0
    for s in out.scheduled:
        context += s.num_computed_tokens + s.num_new_tokens
        if s.num_new_tokens == 1 and s.samples:
            decode += 1
        else:
            prefill += s.num_new_tokens
            chunks += 1
    return StepShape(prefill_tokens=prefill, decode_seqs=decode, context_tokens=context, prefill_seqs=chunks)


def _reject_unschedulable(scheduler: Scheduler, live: dict, limits: SchedulerLimits) -> None:
    request = scheduler.waiting[0] if scheduler.waiting else scheduler.running[0]
    scheduler.finish_request(request, RequestStatus.FINISHED_ABORTED)
    _, item, _ = live.pop(request.request_id)
    item.rejected = f"needs more KV blocks than the pool's {limits.num_blocks} of {limits.block_size} tokens"


class _Clock:
    """The replay's virtual time, readable as a zero-argument clock by the scheduler."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now
