"""The engine core: requests, the block pool and KV cache manager, the V1 scheduler, the step
API (`LLMEngine`), its thread for the server (`AsyncEngine`), the offline `LLM`, and the
config, sampling parameters, outputs, statistics and errors they share. Pure scheduling
(`scheduler`, `kv_cache_manager`, `block_pool`, `request`) loads no model and no torch."""
