"""Scheduler: token budget, chunked prefill, max_num_seqs and preemption order (no model needed)."""

from __future__ import annotations

from engine.core.kv_cache_manager import KVCacheManager
from engine.core.request import Request, RequestStatus
from engine.core.sampling_params import SamplingParams
from engine.core.scheduler import Scheduler


def make_scheduler(num_blocks=64, block_size=4, max_num_seqs=8, budget=32, chunked=True, caching=True):
    kv = KVCacheManager(num_blocks, block_size, enable_caching=caching)
    return Scheduler(kv, max_num_seqs, budget, max_model_len=256, enable_chunked_prefill=chunked)


def make_request(request_id: str, num_tokens: int, first_token: int = 0) -> Request:
    tokens = [first_token + i for i in range(num_tokens)]
    return Request(request_id, tokens, SamplingParams(max_tokens=64), arrival_time=0.0, max_tokens=64)


def fake_decode(scheduler: Scheduler, out) -> None:
    """What the engine does after a forward: append one token to each request that sampled."""
    for s in out.scheduled:
        if s.samples:
            s.request.append_output_token(7)


def test_step_never_exceeds_the_token_budget_and_chunks_long_prompts():
    sched = make_scheduler(budget=32)
    sched.add_request(make_request("long", 80))
    out = sched.schedule()
    assert out.total_num_scheduled_tokens == 32
    assert not out.scheduled[0].samples  # a partial chunk samples nothing
    fake_decode(sched, out)
    out = sched.schedule()
    assert out.scheduled[0].num_computed_tokens == 32 and out.total_num_scheduled_tokens == 32


def test_decodes_are_scheduled_before_new_prompts_and_share_the_step():
    sched = make_scheduler(budget=32)
    sched.add_request(make_request("a", 10))
    fake_decode(sched, sched.schedule())
    sched.add_request(make_request("b", 50, first_token=100))
    out = sched.schedule()
    assert [s.request.request_id for s in out.scheduled] == ["a", "b"]
    assert out.num_decodes == 1
    assert [s.num_new_tokens for s in out.scheduled] == [1, 31]


def test_without_chunked_prefill_a_prompt_waits_for_a_step_with_room():
    sched = make_scheduler(budget=32, chunked=False)
    sched.add_request(make_request("a", 20))
    sched.add_request(make_request("b", 20, first_token=100))
    out = sched.schedule()
    assert [s.request.request_id for s in out.scheduled] == ["a"]
    assert out.scheduled[0].num_new_tokens == 20


def test_max_num_seqs_caps_running_requests():
    sched = make_scheduler(max_num_seqs=2, budget=100)
    for i in range(4):
        sched.add_request(make_request(f"r{i}", 5, first_token=10 * i))
    sched.schedule()
    assert len(sched.running) == 2 and len(sched.waiting) == 2


def test_preemption_takes_the_newest_running_request_and_requeues_it_first():
    sched = make_scheduler(num_blocks=6, block_size=4, budget=100, caching=False)
    for i in range(3):
        sched.add_request(make_request(f"r{i}", 8, first_token=20 * i))  # 2 blocks each: pool full
    out = sched.schedule()
    assert len(out.scheduled) == 3 and sched.kv.pool.num_free_blocks() == 0
    fake_decode(sched, out)  # each now has 9 tokens: needs a third block for the next step
    out = sched.schedule()
    assert out.num_preemptions == 1
    assert [r.request_id for r in sched.running] == ["r0", "r1"]
    assert sched.waiting[0].request_id == "r2"
    victim = sched.waiting[0]
    assert victim.status == RequestStatus.PREEMPTED and victim.num_computed_tokens == 0
    assert victim.num_preemptions == 1 and victim.num_output_tokens == 1  # keeps its output, recomputes it


def test_no_new_request_is_admitted_in_a_step_that_preempted():
    sched = make_scheduler(num_blocks=4, block_size=4, budget=100, caching=False)
    sched.add_request(make_request("a", 8))
    sched.add_request(make_request("b", 8, first_token=50))
    fake_decode(sched, sched.schedule())
    sched.add_request(make_request("c", 2, first_token=90))
    out = sched.schedule()
    assert out.num_preemptions == 1
    assert "c" not in [s.request.request_id for s in out.scheduled]


def test_finishing_frees_blocks_for_waiting_requests():
    sched = make_scheduler(num_blocks=4, block_size=4, budget=100, caching=False)
    first, second = make_request("a", 16), make_request("b", 16, first_token=50)
    sched.add_request(first)
    sched.add_request(second)
    sched.schedule()
    assert [r.request_id for r in sched.running] == ["a"]
    sched.finish_request(first, RequestStatus.FINISHED_LENGTH)
    out = sched.schedule()
    assert [s.request.request_id for s in out.scheduled] == ["b"]
