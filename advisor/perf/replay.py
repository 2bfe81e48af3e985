"""vLLM V1's scheduling replayed in virtual time over one ramp step, in the load of the steps around it.

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
from advisor.perf.gap_spread import spread_gaps
from advisor.perf.limits import SchedulerLimits
from advisor.perf.workload import ReplayWorkload
from engine.core.kv_cache_manager import KVCacheManager
from engine.core.request import Request, RequestStatus
from engine.core.scheduler import Scheduler, SchedulerOutput
from loadtest.plan import RampPlan
from loadtest.records import RequestRecord

MAX_ENGINE_STEPS = 400_000  # a bound on any one replay, far above a 2-minute step at 1 ms per iteration
PREFIX_BLOCKS_SPARE = 256  # room for cached shared prefixes in a pool sized for the load
# What bounds one replay, as the commands that replay say it in their --help.
REPLAY_BOUNDS = (
    f"each replayed load step stops after {MAX_ENGINE_STEPS:,} engine iterations (and says it was cut short), "
    "and holds a KV pool no larger than its streams can fill, whatever size the server has"
)


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

    def records(self, step: int, step_start: float, gap_spread: list[float] | None = None) -> list[RequestRecord]:
        """The replayed requests as the load generator records them; `gap_spread`: the server's measured
        spread of token gaps, replayed on each request's gaps (advisor/perf/gap_spread.py)."""
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
                gaps = [b - a for a, b in zip(r.token_times, r.token_times[1:], strict=False)]
                record.gaps_s = spread_gaps(gaps, gap_spread or [], r.index)
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
    """Replay step `step` of `plan` in the load around it: the previous step's load for one step
    length before it (the lead-in), this step's sends in [0, step length), then the next step's load
    (the lead-out) while this step's requests finish within `drain_s` (default: as the ramp gives
    them, see below). Only this step's requests are returned; the others only occupy the engine.

    Why the neighbours: the load generator moves from one step to the next without a pause, so a
    step opens on the previous step's streams mid-flight and its late requests finish under the next
    step's load. Replayed from an empty server instead, sixteen closed-loop streams all sent their
    first request at once: with `--max-num-batched-tokens 64` their prompts took a dozen seconds of
    full steps to get in, the step's measured requests then ran mostly after its end in steps with
    no prompt, and ITL p50 came out at 155 ms where real vLLM measured 290 ms; sixteen 260-token
    uncached prompts at once finished no request inside the step at all (predict_accuracy on the
    2-core AVX2 box, BENCHMARKS.md)."""
    return _StepReplayer(plan, step, limits, cost, workload, drain_s).run()


class _StepReplayer:
    """One replay's state: the engine's scheduler on a virtual clock, the sends still to come, and the
    requests in flight.

    The loop (`run`) is vLLM's engine loop with the network in front of it: sends that are due become
    arrivals after the per-request overhead, arrivals are added to the scheduler, one scheduled
    iteration advances the clock by the step cost, and a finished request's closed-loop stream sends
    its next one. The step's own requests are recorded; the neighbours' only occupy the engine.
    """

    def __init__(
        self,
        plan: RampPlan,
        step: int,
        limits: SchedulerLimits,
        cost: StepCost,
        workload: ReplayWorkload,
        drain_s: float | None,
    ) -> None:
        self.plan, self.step, self.limits, self.cost, self.workload = plan, step, limits, cost, workload
        self.clock = _Clock()
        enough = _enough_blocks(plan, step, limits, workload)
        self.kv = KVCacheManager(
            min(limits.num_blocks, enough) if limits.num_blocks else enough,
            limits.block_size,
            enable_caching=limits.enable_prefix_caching,
        )
        self.scheduler = Scheduler(
            self.kv,
            limits.max_num_seqs,
            limits.max_num_batched_tokens,
            limits.max_model_len,
            enable_chunked_prefill=limits.enable_chunked_prefill,
            clock=self.clock,
        )
        self.step_s = plan.step_s
        if drain_s is None:  # as the load generator: a request may run for its timeout, but not past the
            # ramp's end plus the cool-down, when whatever is still in flight is recorded as cancelled
            drain_s = min(plan.request_timeout_s, (plan.steps - step - 1) * self.step_s + plan.cooldown_s)
        self.deadline = self.step_s + drain_s
        self.clock.now = -(self.step_s if step > 0 else 0.0)  # the lead-in
        # (send time, stream or -1, the ramp step that sends it): this step's sends, and the neighbours'
        self.sends: list[tuple[float, int, int]] = _first_sends(plan, step)
        self.arrivals: list[tuple[float, str]] = []  # (engine arrival, request id) heap
        self.replayed: list[ReplayedRequest] = []
        self.sent_by_step: dict[int, int] = {}  # request n of ramp step k is prompt (k, n)
        self.live: dict[str, tuple[Request, ReplayedRequest | None, int]] = {}
        self.own_pending = 0  # this step's requests not finished yet
        self.engine_steps: list[EngineStep] = []
        self.preemptions = 0

    def run(self) -> StepReplay:
        truncated = False
        while True:
            self._admit_due()
            if self.clock.now >= self.step_s and self.own_pending == 0:
                break  # this step's requests are done; its sends are over
            if not self.scheduler.has_unfinished_requests():
                upcoming = [heap[0][0] for heap in (self.sends, self.arrivals) if heap]
                if not upcoming:
                    break
                self.clock.now = max(self.clock.now, min(upcoming))
                continue
            if self._out_of_time(self.clock.now):
                truncated = True
                break
            if not self._decode_run():
                self._engine_step()
        return StepReplay(
            requests=self.replayed, steps=self.engine_steps, preemptions=self.preemptions, truncated=truncated
        )

    def _admit_due(self) -> None:
        """Sends that are due go out; arrivals that are due reach the scheduler."""
        while self.sends and self.sends[0][0] <= self.clock.now:
            at, stream, k = heapq.heappop(self.sends)
            if self._may_send(at, k):
                self._send(at, stream, k)
        while self.arrivals and self.arrivals[0][0] <= self.clock.now:
            _, request_id = heapq.heappop(self.arrivals)
            self.scheduler.add_request(self.live[request_id][0])

    def _engine_step(self) -> None:
        """One scheduled iteration: the clock moves by its cost, sampled tokens are appended."""
        out = self.scheduler.schedule()
        if self.clock.now >= 0:  # the lead-in's preemptions are the step before's
            self.preemptions += out.num_preemptions
        if not out.scheduled:  # nothing fits (a prompt larger than the whole KV pool): reject the head
            self.own_pending -= _reject_unschedulable(self.scheduler, self.live, self.limits)
            return
        shape = shape_of(out)
        start = self.clock.now
        self.clock.now = start + self.cost.step_time(shape)
        used_blocks = self.kv.num_blocks - self.kv.pool.num_free_blocks()
        self.engine_steps.append(EngineStep(start, self.clock.now, shape, used_blocks))
        for scheduled in out.scheduled:
            self._advance(scheduled, start)

    def _decode_run(self) -> bool:
        """Steps that only decode every running request, taken without building them: False when the
        next step is not one (then `_engine_step` takes it).

        Why: most virtual steps of a replay are of this kind, and building each through `schedule()`
        (a scheduled entry per request, the allocator, the step's shape) was most of a prediction's
        time. Each step here is the one `_engine_step` would take, in the same float arithmetic: the
        same shape priced by the same `step_time`, the same clock, tokens and EngineStep. The run stops
        before anything else would happen: a block to allocate or fill, a request admitted
        (`Scheduler.decode_only_steps`), a request's last token (its finish sends the stream's next
        request), a send or arrival due, the step's end with none of its own requests left, the drain
        deadline or MAX_ENGINE_STEPS.
        tests/unit/advisor/perf/test_decode_runs.py holds it to `_engine_step` on replays of every kind."""
        steps = self.scheduler.decode_only_steps()
        if not steps:  # most calls between runs end here: nothing is copied or summed before this check
            return False
        running = list(self.scheduler.running)
        steps = min(steps, *(request.max_tokens - request.num_output_tokens - 1 for request in running))
        if steps <= 0:
            return False
        items = [item for item in (self.live[request.request_id][1] for request in running) if item is not None]
        due = min((heap[0][0] for heap in (self.sends, self.arrivals) if heap), default=float("inf"))
        used_blocks = self.kv.num_blocks - self.kv.pool.num_free_blocks()
        decodes = len(running)
        context = sum(request.num_computed_tokens + 1 for request in running)
        # What run() checks before each step after the first, as one bound on the clock and one on the
        # count: a send or arrival due, the drain deadline, the step's end once its own requests are done
        # (own_pending == 0), MAX_ENGINE_STEPS (each step taken adds one EngineStep).
        stop_at = min(due, self.deadline, self.step_s if self.own_pending == 0 else float("inf"))
        steps = min(steps, max(1, MAX_ENGINE_STEPS - len(self.engine_steps)))
        fixed, per_context_token = self.cost.decode_step_terms(decodes)
        record = self.engine_steps.append
        ends: list[float] = []  # the end of each step taken: a token time of every running request
        now = self.clock.now
        for taken in range(steps):
            if taken and now >= stop_at:
                break
            end = now + (fixed + per_context_token * context)  # cost.step_time of this shape, the same float
            record(EngineStep(now, end, StepShape(decode_seqs=decodes, context_tokens=context), used_blocks))
            ends.append(end)
            now = end
            context += decodes
        self.clock.now = now
        self.scheduler.skip_decode_steps(len(ends))
        for request in running:  # the tokens sampled, as _advance appends them step by step
            first = _UNIQUE_OUTPUT + request.num_output_tokens
            request.extend_output_tokens(range(first, first + len(ends)))
        for item in items:
            item.token_times.extend(ends)
        return True

    def _out_of_time(self, now: float) -> bool:
        """The drain deadline or the bound on engine steps: the replay ends truncated."""
        return now >= self.deadline or len(self.engine_steps) >= MAX_ENGINE_STEPS

    def _advance(self, scheduled, start: float) -> None:
        """A scheduled request after its iteration: first scheduled, a token sampled, or finished."""
        request, item, stream = self.live[scheduled.request.request_id]
        if item is not None:
            if item.first_scheduled is None:
                item.first_scheduled = start
            item.preemptions = request.num_preemptions
        if not scheduled.samples:
            return
        request.append_output_token(_UNIQUE_OUTPUT + request.num_output_tokens)
        if item is not None:
            item.token_times.append(self.clock.now)
        if request.num_output_tokens >= request.max_tokens:
            self.scheduler.finish_request(request, RequestStatus.FINISHED_LENGTH)
            del self.live[request.request_id]
            self.own_pending -= item is not None
            if stream >= 0:
                self._send_next(self.clock.now, stream)

    def _stream_step(self, at: float) -> int:
        """The ramp step whose load a stream's send at `at` belongs to."""
        return self.step - 1 if at < 0 else self.step if at < self.step_s else self.step + 1

    def _may_send(self, at: float, k: int) -> bool:
        """A send happens while its step's load is on (the lead-out only until this step's requests end)."""
        if k < self.step:
            return at < 0
        if k == self.step:
            return at < self.step_s
        return at < self.deadline and self.own_pending > 0

    def _send(self, at: float, stream: int, k: int) -> None:
        n = self.sent_by_step.get(k, 0)
        self.sent_by_step[k] = n + 1
        shape = self.workload.request(k, n)
        own = k == self.step
        item = None
        if own:
            item = ReplayedRequest(
                index=n,
                send=at,
                arrival=at + self.cost.overhead_s,
                output_tokens=shape.output_tokens,
                prompt_tokens=len(shape.prompt_ids),
            )
            self.replayed.append(item)
        request_id = str(n) if own else f"{k}:{n}"  # the neighbours' requests: ids of their own
        if len(shape.prompt_ids) + shape.output_tokens > self.limits.max_model_len:
            if item is not None:
                item.rejected = (
                    f"prompt ({len(shape.prompt_ids)} tokens) + max_tokens ({shape.output_tokens}) exceeds "
                    f"--max-model-len {self.limits.max_model_len}"
                )
            if stream >= 0:
                self._send_next(at, stream)
            return
        request = Request(
            request_id=request_id,
            prompt_token_ids=list(shape.prompt_ids),
            sampling_params=None,
            arrival_time=at + self.cost.overhead_s,
            max_tokens=shape.output_tokens,
        )
        self.live[request_id] = (request, item, stream)
        self.own_pending += item is not None
        heapq.heappush(self.arrivals, (at + self.cost.overhead_s, request_id))

    def _send_next(self, at: float, stream: int) -> None:
        """A closed-loop stream sends again at `at` if the step it falls in still runs that stream."""
        k = self._stream_step(at)
        if 0 <= k < self.plan.steps and stream < int(self.plan.levels[k]) and self._may_send(at, k):
            heapq.heappush(self.sends, (at, stream, k))


def _first_sends(plan: RampPlan, step: int) -> list[tuple[float, int, int]]:
    """The sends the plan makes by itself, as a heap: each stream's first request of the step replayed and
    of its neighbours (later ones follow their stream's last answer), or every send of a rate step."""
    sends: list[tuple[float, int, int]] = []
    neighbours = _neighbours(plan, step)
    for k, offset in neighbours:
        if plan.mode == "concurrency":
            # streams that run on from the step replayed before start nothing new at the boundary
            kept = int(plan.levels[k - 1]) if k > neighbours[0][0] else 0
            for stream in range(kept, int(plan.levels[k])):
                heapq.heappush(sends, (offset, stream, k))
        else:
            for at in plan.arrival_offsets(k):
                heapq.heappush(sends, (offset + at, -1, k))
    return sends


def _neighbours(plan: RampPlan, step: int) -> list[tuple[int, float]]:
    """(ramp step, its start relative to `step`'s start) for the lead-in, the step and the lead-out."""
    return [(k, (k - step) * plan.step_s) for k in (step - 1, step, step + 1) if 0 <= k < plan.steps]


_UNIQUE_OUTPUT = 900_000_000


def _enough_blocks(plan: RampPlan, step: int, limits: SchedulerLimits, workload: ReplayWorkload) -> int:
    """A pool no request of this step can exhaust: the pool replayed when the size is unknown (no
    preemption), and the most replayed when it is known. Why a known pool larger than this is replayed
    at this size: every replayed request has a prompt of its own (only the shared prefix repeats, for
    which the spare is kept), so blocks beyond what the streams can hold at once are never used and
    change nothing, while allocating them would make a server's size from a log or a flag (10^10
    tokens) the replay's memory."""
    concurrent = limits.max_num_seqs
    if plan.mode == "concurrency":  # the lead-in and lead-out run their own step's streams
        concurrent = min(concurrent, max(int(plan.levels[k]) for k, _ in _neighbours(plan, step)))
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


def _reject_unschedulable(scheduler: Scheduler, live: dict, limits: SchedulerLimits) -> int:
    """Abort the request at the head of the queue; 1 when it was one of the replayed step's own."""
    request = scheduler.waiting[0] if scheduler.waiting else scheduler.running[0]
    scheduler.finish_request(request, RequestStatus.FINISHED_ABORTED)
    _, item, _ = live.pop(request.request_id)
    if item is None:
        return 0
    item.rejected = f"needs more KV blocks than the pool's {limits.num_blocks} of {limits.block_size} tokens"
    return 1


class _Clock:
    """The replay's virtual time, readable as a zero-argument clock by the scheduler."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now
