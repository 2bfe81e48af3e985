"""The scheduler replay on cases small enough to compute by hand: every virtual time is exact.

Cost in these tests: step = 1 s + 0.25 s per prompt token + 0.5 s per decode sequence
(context reads and prompt chunks free unless a test says otherwise), no overhead outside the engine. Streams
send once: the step is shorter than any request, so no stream sends a second one.
"""

import pytest

from advisor.perf.cost import StepCost
from advisor.perf.limits import SchedulerLimits
from advisor.perf.replay import replay_step
from advisor.perf.workload import ReplayWorkload
from loadtest.plan import RampPlan
from loadtest.workload import LengthSpec, WorkloadSpec

COST = StepCost(base_s=1.0, prefill_token_s=0.25, decode_seq_s=0.5, context_token_s=0.0)


def _plan(streams: int) -> RampPlan:
    return RampPlan(
        endpoint="http://x",
        model="m",
        mode="concurrency",
        levels=[float(streams)],
        step_s=0.5,
        request_timeout_s=1000.0,
        cooldown_s=1000.0,
    )


def _workload(prompt: int, output: int) -> ReplayWorkload:
    return ReplayWorkload(spec=WorkloadSpec(input_len=LengthSpec(mean=prompt), output_len=LengthSpec(mean=output)))


def _limits(**overrides) -> SchedulerLimits:
    values = {
        "max_num_seqs": 8,
        "max_num_batched_tokens": 64,
        "max_model_len": 64,
        "block_size": 4,
        "num_blocks": 64,
        "enable_prefix_caching": False,
    }
    return SchedulerLimits(**{**values, **overrides})


def test_one_request_prefills_in_one_step_then_decodes_one_token_per_step():
    replay = replay_step(_plan(1), 0, _limits(), COST, _workload(prompt=10, output=3))
    (request,) = replay.requests
    assert request.token_times == [3.5, 5.0, 6.5]  # 1 + 10 x 0.25; then 1 + 0.5 per decode step
    record = replay.records(0, 0.0)[0]
    assert record.ttft_s == 3.5 and record.gaps_s == [1.5, 1.5] and record.e2e_s == 6.5
    assert [s.shape.prefill_tokens for s in replay.steps] == [10, 0, 0]


def test_a_batch_at_max_num_seqs_leaves_the_third_request_waiting_until_a_slot_frees():
    replay = replay_step(_plan(3), 0, _limits(max_num_seqs=2), COST, _workload(prompt=4, output=2))
    first, second, third = replay.requests
    # step 1: two prompts (8 tokens) -> 3 s; step 2: two decodes -> 2 s; both done at 5 s
    assert first.token_times == [3.0, 5.0] and second.token_times == [3.0, 5.0]
    # then the third: prefill 4 tokens -> 2 s (t = 7), one decode -> 1.5 s (t = 8.5)
    assert third.first_scheduled == 5.0 and third.token_times == [7.0, 8.5]


def test_a_prompt_longer_than_the_token_budget_is_prefilled_in_chunks_over_steps():
    replay = replay_step(_plan(1), 0, _limits(max_num_batched_tokens=4), COST, _workload(prompt=10, output=2))
    (request,) = replay.requests
    assert [s.shape.prefill_tokens for s in replay.steps[:3]] == [4, 4, 2]
    # chunks of 4, 4 and 2 tokens: 2 s + 2 s + 1.5 s; the last chunk samples the first token
    assert request.token_times == [5.5, 7.0]


def test_running_out_of_blocks_preempts_the_newest_request_which_recomputes_later():
    # 3 blocks of 4 tokens: both 4-token prompts fit (1 block each); the first decode of each needs a
    # second block, there is one left: the newer request is preempted and recomputed after the first ends.
    replay = replay_step(_plan(2), 0, _limits(num_blocks=3), COST, _workload(prompt=4, output=5))
    older, newer = replay.requests
    assert replay.preemptions == 1 and newer.preemptions == 1
    assert older.token_times == [3.0, 4.5, 6.0, 7.5, 9.0]
    # at 9 s: recompute 4 prompt + 1 output tokens (1 + 5 x 0.25 = 2.25 s), then three decodes
    assert newer.token_times == [3.0, 11.25, 12.75, 14.25, 15.75]


def test_context_reads_add_their_cost_per_token_of_kv_read():
    cost = COST.model_copy(update={"context_token_s": 0.01})
    replay = replay_step(_plan(1), 0, _limits(), cost, _workload(prompt=10, output=2))
    # prefill reads 10 tokens of context (0.1 s); the decode step reads 11 (0.11 s)
    assert replay.requests[0].token_times == pytest.approx([3.6, 3.6 + 1.61])


def test_a_prefix_cache_hit_skips_the_shared_blocks_of_the_second_request():
    spec = WorkloadSpec(
        kind="shared-prefix",
        prefix_len=8,
        groups=1,
        share=1.0,
        input_len=LengthSpec(mean=2),
        output_len=LengthSpec(mean=1),
    )
    plan = RampPlan(
        endpoint="http://x", model="m", mode="rate", levels=[1.0], step_s=2.0, request_timeout_s=100.0, cooldown_s=100.0
    )
    replay = replay_step(plan, 0, _limits(enable_prefix_caching=True), COST, ReplayWorkload(spec=spec))
    first, second = replay.requests
    # first: 10 prompt tokens at t=0 -> 3.5 s; second arrives at 1 s but the engine is busy until 3.5,
    # then computes only its 2 own tokens: the 8 shared ones are two cached blocks of 4
    assert first.token_times == [3.5]
    assert [s.shape.prefill_tokens for s in replay.steps] == [10, 2]
    assert second.token_times == [3.5 + 1.5]


def test_overhead_outside_the_engine_delays_arrival_and_counts_in_ttft():
    cost = COST.model_copy(update={"overhead_s": 0.2})
    replay = replay_step(_plan(1), 0, _limits(), cost, _workload(prompt=10, output=1))
    record = replay.records(0, 0.0)[0]
    assert replay.requests[0].arrival == 0.2 and record.ttft_s == pytest.approx(3.7)


def test_each_prompt_chunk_in_a_step_adds_the_per_chunk_cost():
    cost = COST.model_copy(update={"prefill_seq_s": 2.0})
    # chunks of 4, 4 and 2 tokens: (1 + 2 + 1) + (1 + 2 + 1) + (1 + 2 + 0.5) = 11.5 s; one decode 1.5 s
    replay = replay_step(_plan(1), 0, _limits(max_num_batched_tokens=4), cost, _workload(prompt=10, output=2))
    assert [s.shape.prefill_seqs for s in replay.steps] == [1, 1, 1, 0]
    assert replay.requests[0].token_times == [11.5, 13.0]


def test_two_prompts_in_one_step_pay_the_per_chunk_cost_twice():
    cost = COST.model_copy(update={"prefill_seq_s": 2.0})
    replay = replay_step(_plan(2), 0, _limits(), cost, _workload(prompt=4, output=2))
    first, second = replay.requests
    # one step with both 4-token prompts: 1 + 8 x 0.25 + 2 x 2 = 7 s; then two decodes: 1 + 2 x 0.5 = 2 s
    assert [s.shape.prefill_seqs for s in replay.steps] == [2, 0]
    assert first.token_times == [7.0, 9.0] and second.token_times == [7.0, 9.0]


def test_a_step_opens_on_the_previous_steps_streams_mid_flight():
    """Steps of 4 s at 1 then 2 streams; step 1 is replayed after a 4 s lead-in at 1 stream. Stream 0's
    lead-in requests: A sent at -4 (prefill to -2, decode to -0.5), B sent at -0.5 (prefill to 1.5).
    Stream 1 is the new one: C sent at 0 waits for B's prefill, then shares a step with B's decode
    (1 + 4 x 0.25 + 0.5 = 2.5 s, to 4.0) and decodes alone to 5.5. Only C is step 1's; stream 0 sends
    nothing more inside the step, and from an empty server both streams would have sent at 0."""
    plan = RampPlan(
        endpoint="http://x",
        model="m",
        mode="concurrency",
        levels=[1.0, 2.0],
        step_s=4.0,
        request_timeout_s=1000.0,
        cooldown_s=1000.0,
    )
    replay = replay_step(plan, 1, _limits(), COST, _workload(prompt=4, output=2))
    (own,) = replay.requests
    assert own.send == 0.0 and own.first_scheduled == 1.5 and own.token_times == [4.0, 5.5]
    assert [(s.start, s.end) for s in replay.steps] == [(-4.0, -2.0), (-2.0, -0.5), (-0.5, 1.5), (1.5, 4.0), (4.0, 5.5)]
    assert replay.steps[3].shape.decode_seqs == 1 and replay.steps[3].shape.prefill_tokens == 4


def test_a_pool_larger_than_the_streams_can_fill_replays_as_the_unknown_size_does_and_allocates_no_more():
    # 10^10 tokens (units.MAX_KV_TOKENS, the largest figure a user or log may give) in blocks of 4:
    # allocated, they would be 2.5 billion objects; the replay holds what its streams can fill.
    limits, workload = _limits(max_num_seqs=2), _workload(prompt=4, output=2)
    unknown = replay_step(_plan(3), 0, limits.model_copy(update={"num_blocks": None}), COST, workload)
    huge = replay_step(_plan(3), 0, limits.model_copy(update={"num_blocks": 10**10 // 4}), COST, workload)
    assert [r.token_times for r in huge.requests] == [r.token_times for r in unknown.requests]
    assert huge.preemptions == unknown.preemptions == 0
