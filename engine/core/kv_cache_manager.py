"""KVCacheManager: per-request block tables on top of the BlockPool, and prefix hashing.

A full block's hash chains its parent's hash, its token ids and extra keys (e.g. a cache
salt), so equal hashes mean equal whole prefixes. A prompt that is entirely cached still
recomputes its last token, because the model must produce logits for it
(`get_computed_blocks` never returns more than `num_tokens - 1` tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from engine.core.block_pool import BlockKey, BlockPool, KVCacheBlock
from engine.core.request import Request

HashFn = Callable[[BlockKey], int]


def hash_block_key(key: BlockKey) -> int:
    """Python's tuple hash (64-bit, deterministic for ints); collisions are caught by the key check."""
    return hash(key)


class KVCacheManager:
    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        enable_caching: bool = True,
        hash_fn: HashFn = hash_block_key,
        extra_keys: Hashable = None,
    ) -> None:
        self.block_size = block_size
        self.enable_caching = enable_caching
        self.pool = BlockPool(num_blocks, enable_caching)
        self.hash_fn = hash_fn
        self.extra_keys = extra_keys
        self.req_to_blocks: dict[str, list[KVCacheBlock]] = {}
        self._num_cached_blocks: dict[str, int] = {}
        self.prefix_cache_queries = 0  # tokens, like vllm:prefix_cache_queries
        self.prefix_cache_hits = 0

    @property
    def num_blocks(self) -> int:
        return self.pool.num_blocks

    def usage(self) -> float:
        return self.pool.usage()

    def block_ids(self, request_id: str) -> list[int]:
        return [b.block_id for b in self.req_to_blocks.get(request_id, ())]

    def blocks_needed(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    # ---- prefix cache ---------------------------------------------------------------
    def get_computed_blocks(self, request: Request) -> tuple[list[KVCacheBlock], int]:
        """Longest cached prefix of full blocks, leaving at least the last token to compute; the query
        counts in the prefix-cache counters."""
        hits, num_hit_tokens = self.peek_computed_blocks(request)
        if self.enable_caching:
            self.count_prefix_queries(request, num_hit_tokens)
        return hits, num_hit_tokens

    def peek_computed_blocks(self, request: Request) -> tuple[list[KVCacheBlock], int]:
        """`get_computed_blocks` without counting the query (the block pool is only read)."""
        if not self.enable_caching:
            return [], 0
        self._update_block_hashes(request)
        max_hit_blocks = (request.num_tokens - 1) // self.block_size
        hits: list[KVCacheBlock] = []
        for i in range(min(max_hit_blocks, len(request.block_hashes))):
            block = self.pool.lookup(request.block_hashes[i], self._block_key(request, i))
            if block is None:
                break
            hits.append(block)
        return hits, len(hits) * self.block_size

    def count_prefix_queries(self, request: Request, num_hit_tokens: int, times: int = 1) -> None:
        """`times` prefix-cache queries of `request`'s tokens, each hitting `num_hit_tokens`."""
        self.prefix_cache_queries += request.num_tokens * times
        self.prefix_cache_hits += num_hit_tokens * times

    # ---- allocation -----------------------------------------------------------------
    def allocate_slots(
        self, request: Request, num_new_tokens: int, new_computed_blocks: list[KVCacheBlock] | None = None
    ) -> bool:
        """Reserve blocks for `num_new_tokens` more tokens (after any cache hits); False if the pool
        is too full, in which case nothing changes."""
        held = None if new_computed_blocks else self._held_covering(request, num_new_tokens)
        if held is not None:  # a running request: most steps need no new block at all
            if self.enable_caching:
                needed = request.num_computed_tokens + num_new_tokens
                self._cache_full_blocks(request, held, min(needed, request.num_tokens))
            return True
        new_computed_blocks = new_computed_blocks or []
        num_new_blocks = self._num_new_blocks(request, num_new_tokens, new_computed_blocks)
        if not self._fits(num_new_blocks, new_computed_blocks):
            return False
        blocks = self.req_to_blocks.setdefault(request.request_id, [])
        self.pool.touch(new_computed_blocks)
        blocks.extend(new_computed_blocks)
        if num_new_blocks > 0:
            blocks.extend(self.pool.get_new_blocks(num_new_blocks))
        if self.enable_caching:
            num_computed = request.num_computed_tokens + len(new_computed_blocks) * self.block_size
            self._cache_full_blocks(request, blocks, min(num_computed + num_new_tokens, request.num_tokens))
        return True

    def can_allocate(
        self, request: Request, num_new_tokens: int, new_computed_blocks: list[KVCacheBlock] | None = None
    ) -> bool:
        """Whether `allocate_slots` would succeed, without allocating."""
        if not new_computed_blocks and self._held_covering(request, num_new_tokens) is not None:
            return True
        new_computed_blocks = new_computed_blocks or []
        return self._fits(self._num_new_blocks(request, num_new_tokens, new_computed_blocks), new_computed_blocks)

    def _held_covering(self, request: Request, num_new_tokens: int) -> list[KVCacheBlock] | None:
        """The request's blocks when they already hold `num_new_tokens` more tokens, else None."""
        held = self.req_to_blocks.get(request.request_id)
        if held and request.num_computed_tokens + num_new_tokens <= len(held) * self.block_size:
            return held
        return None

    def _num_new_blocks(self, request: Request, num_new_tokens: int, new_computed_blocks: list[KVCacheBlock]) -> int:
        """Blocks the pool must hand out for `num_new_tokens` more tokens after the cache hits."""
        held = len(self.req_to_blocks.get(request.request_id, ()))
        num_computed = request.num_computed_tokens + len(new_computed_blocks) * self.block_size
        return self.blocks_needed(num_computed + num_new_tokens) - held - len(new_computed_blocks)

    def _fits(self, num_new_blocks: int, new_computed_blocks: list[KVCacheBlock]) -> bool:
        """Unreferenced cache hits leave the free queue when taken, so they count against it."""
        evictable_hits = sum(1 for b in new_computed_blocks if b.ref_cnt == 0)
        return num_new_blocks <= self.pool.num_free_blocks() - evictable_hits

    def decode_steps_in_place(self, request: Request) -> int:
        """How many one-token steps `request` can take from its current position before one of them
        allocates a block or fills one (which prefix caching then hashes): 0 when the next one does.

        Why: in those steps `allocate_slots` changes nothing, so a caller that replays decode steps in
        virtual time (the performance model, advisor/perf/replay.py) may take them without it."""
        held = self.req_to_blocks.get(request.request_id)
        if not held:
            return 0
        computed = request.num_computed_tokens
        room = len(held) * self.block_size - computed  # step t needs computed + t slots
        if self.enable_caching:  # step t knows computed + t tokens; a block fills at a multiple of the size
            cached = self._num_cached_blocks.get(request.request_id, 0)
            room = min(room, (cached + 1) * self.block_size - 1 - computed)
        return max(room, 0)

    def free(self, request: Request) -> None:
        """Release a request's blocks, tail first; cached content stays reusable until evicted."""
        blocks = self.req_to_blocks.pop(request.request_id, [])
        self._num_cached_blocks.pop(request.request_id, None)
        self.pool.free_blocks(list(reversed(blocks)))

    def reset_prefix_cache(self) -> bool:
        return self.pool.reset_prefix_cache()

    # ---- helpers ----------------------------------------------------------------------
    def _cache_full_blocks(self, request: Request, blocks: list[KVCacheBlock], num_known_tokens: int) -> None:
        num_full = num_known_tokens // self.block_size
        start = self._num_cached_blocks.get(request.request_id, 0)
        if num_full <= start:
            return
        self._update_block_hashes(request)
        for i in range(start, num_full):
            self.pool.cache_block(blocks[i], request.block_hashes[i], self._block_key(request, i))
        self._num_cached_blocks[request.request_id] = num_full

    def _update_block_hashes(self, request: Request) -> None:
        """Extend the request's hash chain to all of its full blocks."""
        hashes = request.block_hashes
        for i in range(len(hashes), request.num_tokens // self.block_size):
            hashes.append(self.hash_fn(self._block_key(request, i)))

    def _block_key(self, request: Request, index: int) -> BlockKey:
        parent = request.block_hashes[index - 1] if index > 0 else None
        start = index * self.block_size
        return (parent, tuple(request.all_token_ids[start : start + self.block_size]), self.extra_keys)
