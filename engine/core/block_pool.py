"""BlockPool: fixed-size KV blocks, ref counts, an LRU free queue and the prefix-cache index.

A block with `ref_cnt == 0` sits in the free queue. If it holds a cached prefix (it has a
`block_hash`) it stays findable in `cached_blocks` until it is handed out again: that is
how a finished request's prefix is reused. Eviction is LRU: blocks are taken from the front
of the queue, freed cached blocks go to the back, and freed blocks that hold nothing worth
keeping go to the front so they are reused first.

Invariants (tested): one block per content hash (no duplicates); a hash entry always points
at a block that still holds that content (no stale entries after eviction); a cached block
carries the key (parent hash, token ids, extra keys) it was cached under, so a hash
collision is caught by comparing keys.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Hashable

BlockKey = tuple[int | None, tuple[int, ...], Hashable]


@dataclasses.dataclass(slots=True, eq=False)
class KVCacheBlock:
    block_id: int
    ref_cnt: int = 0
    block_hash: int | None = None
    block_key: BlockKey | None = None  # what the hash was computed from (collision guard)


class BlockPool:
    def __init__(self, num_blocks: int, enable_caching: bool = True) -> None:
        self.num_blocks = num_blocks
        self.enable_caching = enable_caching
        self.blocks = [KVCacheBlock(i) for i in range(num_blocks)]
        # block_id -> block, in eviction order (front = evicted first)
        self.free_queue: OrderedDict[int, KVCacheBlock] = OrderedDict((b.block_id, b) for b in self.blocks)
        self.cached_blocks: dict[int, KVCacheBlock] = {}

    # ---- queries ----------------------------------------------------------------
    def num_free_blocks(self) -> int:
        """Blocks that can be handed out, cached-but-unreferenced ones included (as vLLM counts)."""
        return len(self.free_queue)

    def usage(self) -> float:
        """KV-cache usage 0–1, as `vllm:kv_cache_usage_perc`: cached free blocks count as free."""
        return 1.0 - len(self.free_queue) / self.num_blocks if self.num_blocks else 0.0

    def lookup(self, block_hash: int, block_key: BlockKey) -> KVCacheBlock | None:
        """The cached block for this content, or None; a hash collision (other key) is a miss."""
        block = self.cached_blocks.get(block_hash)
        if block is None or block.block_key != block_key:
            return None
        return block

    # ---- allocation ---------------------------------------------------------------
    def get_new_blocks(self, count: int) -> list[KVCacheBlock]:
        """Take `count` blocks from the front of the free queue, evicting cached content."""
        if count > len(self.free_queue):
            raise RuntimeError(f"cannot get {count} free blocks from the pool ({len(self.free_queue)} free)")
        new_blocks = []
        for _ in range(count):
            _, block = self.free_queue.popitem(last=False)
            self._evict(block)
            block.ref_cnt = 1
            new_blocks.append(block)
        return new_blocks

    def touch(self, blocks: list[KVCacheBlock]) -> None:
        """Take a reference on cache hits; an unreferenced hit leaves the free queue."""
        for block in blocks:
            if block.ref_cnt == 0:
                del self.free_queue[block.block_id]
            block.ref_cnt += 1

    def free_blocks(self, blocks: list[KVCacheBlock]) -> None:
        """Drop one reference each; pass blocks tail-first so the tail of a prefix is evicted first."""
        for block in blocks:
            block.ref_cnt -= 1
            if block.ref_cnt < 0:
                raise RuntimeError(f"block {block.block_id} freed more often than it was taken")
            if block.ref_cnt == 0:
                self.free_queue[block.block_id] = block
                if block.block_hash is None:
                    self.free_queue.move_to_end(block.block_id, last=False)

    # ---- prefix cache ---------------------------------------------------------------
    def cache_block(self, block: KVCacheBlock, block_hash: int, block_key: BlockKey) -> KVCacheBlock:
        """Register a full block's content. If that content is already cached in another block,
        keep the existing one (no duplicates) and leave this block uncached."""
        if not self.enable_caching or block.block_hash is not None:
            return block
        existing = self.cached_blocks.get(block_hash)
        if existing is not None:
            return existing
        block.block_hash = block_hash
        block.block_key = block_key
        self.cached_blocks[block_hash] = block
        return block

    def reset_prefix_cache(self) -> bool:
        """Forget all cached content (only when no block is in use, like vLLM)."""
        if len(self.free_queue) != self.num_blocks:
            return False
        for block in self.blocks:
            self._evict(block)
        return True

    def _evict(self, block: KVCacheBlock) -> None:
        if block.block_hash is not None:
            if self.cached_blocks.get(block.block_hash) is block:
                del self.cached_blocks[block.block_hash]
            block.block_hash = None
            block.block_key = None
