"""Block pool and prefix cache: the traps nano-vllm readers found, as specifications."""

from __future__ import annotations

from engine.core.kv_cache_manager import KVCacheManager
from engine.core.request import Request
from engine.core.sampling_params import SamplingParams

BLOCK = 4


def make_request(request_id: str, tokens: list[int]) -> Request:
    return Request(request_id, list(tokens), SamplingParams(max_tokens=8), arrival_time=0.0, max_tokens=8)


def admit(kv: KVCacheManager, request: Request) -> int:
    """Schedule the whole prompt like the scheduler does; returns the number of cache-hit tokens."""
    hits, num_hit = kv.get_computed_blocks(request)
    assert kv.allocate_slots(request, request.num_tokens - num_hit, hits)
    request.num_computed_tokens = request.num_tokens
    return num_hit


def test_second_request_reuses_cached_prefix_blocks():
    kv = KVCacheManager(num_blocks=16, block_size=BLOCK)
    first = make_request("a", list(range(10)))
    admit(kv, first)
    first_blocks = kv.block_ids("a")
    kv.free(first)
    second = make_request("b", list(range(10)) + [99])
    assert admit(kv, second) == 8
    assert kv.block_ids("b")[:2] == first_blocks[:2]
    assert (kv.prefix_cache_queries, kv.prefix_cache_hits) == (21, 8)


def test_full_prefix_hit_still_recomputes_last_token():
    kv = KVCacheManager(num_blocks=16, block_size=BLOCK)
    first = make_request("a", list(range(8)))  # exactly two full blocks
    admit(kv, first)
    kv.free(first)
    again = make_request("b", list(range(8)))
    hits, num_hit = kv.get_computed_blocks(again)
    assert num_hit == 4  # not 8: the last token must be computed to get logits
    assert len(hits) == 1


def test_freed_cached_blocks_count_as_free_and_stay_reusable():
    kv = KVCacheManager(num_blocks=8, block_size=BLOCK)
    first = make_request("a", list(range(12)))
    admit(kv, first)
    assert kv.pool.num_free_blocks() == 5
    kv.free(first)
    assert kv.pool.num_free_blocks() == 8
    assert kv.usage() == 0.0
    assert admit(kv, make_request("b", list(range(12)) + [1])) == 12


def test_no_stale_hash_entry_after_eviction():
    kv = KVCacheManager(num_blocks=3, block_size=BLOCK)
    first = make_request("a", list(range(12)))
    admit(kv, first)
    kv.free(first)
    assert len(kv.pool.cached_blocks) == 3
    other = make_request("b", [50 + i for i in range(12)])  # needs all three blocks: evicts everything
    assert admit(kv, other) == 0
    for block_hash, block in kv.pool.cached_blocks.items():
        assert block.block_hash == block_hash
        assert block.block_key[1][0] >= 50  # only the new content is indexed
    kv.free(other)
    again = make_request("c", list(range(12)))
    assert admit(kv, again) == 0  # the old prefix is gone, and nothing claims otherwise


def test_eviction_is_lru_and_prefers_blocks_without_cached_content():
    kv = KVCacheManager(num_blocks=4, block_size=BLOCK)
    old = make_request("old", list(range(8)))
    admit(kv, old)
    kv.free(old)
    newer = make_request("new", [100 + i for i in range(4)])
    admit(kv, newer)  # takes one of the two never-used blocks, not a cached one
    kv.free(newer)
    assert admit(kv, make_request("again", list(range(8)) + [5])) == 8


def test_identical_prompts_in_flight_do_not_create_duplicate_cached_blocks():
    kv = KVCacheManager(num_blocks=16, block_size=BLOCK)
    a, b = make_request("a", list(range(9))), make_request("b", list(range(9)))
    # b is allocated without consulting the cache (as when it was admitted in the same step
    # before a's blocks were registered): its blocks hold the same content as a's
    assert kv.allocate_slots(a, 9)
    assert kv.allocate_slots(b, 9)
    hashes = [blk.block_hash for blk in kv.pool.blocks if blk.block_hash is not None]
    assert len(hashes) == len(set(hashes)) == 2
    kv.free(a)
    kv.free(b)
    assert kv.pool.num_free_blocks() == 16


def test_hash_collision_is_caught_by_the_token_check():
    kv = KVCacheManager(num_blocks=16, block_size=BLOCK, hash_fn=lambda key: 42)  # every block collides
    first = make_request("a", list(range(9)))
    admit(kv, first)
    kv.free(first)
    different = make_request("b", [7, 7, 7, 7, 8, 8, 8, 8, 9])
    assert admit(kv, different) == 0  # same hash, different tokens: a miss, not wrong KV
    kv.free(different)
    same = make_request("c", list(range(9)))
    assert admit(kv, same) == 4  # the block cached under hash 42 really holds range(4)


def test_allocation_failure_changes_nothing():
    kv = KVCacheManager(num_blocks=2, block_size=BLOCK)
    request = make_request("a", list(range(12)))
    assert not kv.allocate_slots(request, 12)
    assert kv.pool.num_free_blocks() == 2
    assert kv.block_ids("a") == []


def test_shared_block_is_freed_only_when_last_reference_drops():
    kv = KVCacheManager(num_blocks=8, block_size=BLOCK)
    a = make_request("a", list(range(9)))
    admit(kv, a)
    b = make_request("b", list(range(9)))
    assert admit(kv, b) == 8
    shared = kv.req_to_blocks["a"][0]
    assert shared is kv.req_to_blocks["b"][0] and shared.ref_cnt == 2
    kv.free(a)
    assert shared.ref_cnt == 1 and shared.block_id not in kv.pool.free_queue
    kv.free(b)
    assert kv.pool.num_free_blocks() == 8


def test_prefix_caching_disabled_never_hits():
    kv = KVCacheManager(num_blocks=8, block_size=BLOCK, enable_caching=False)
    first = make_request("a", list(range(9)))
    admit(kv, first)
    kv.free(first)
    assert admit(kv, make_request("b", list(range(9)))) == 0
    assert not kv.pool.cached_blocks
