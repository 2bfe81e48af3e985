"""The bundled paged-attention engine: the reference deployment servops is tested against.

engine owns the block pool with automatic prefix caching, the iteration-level scheduler
(continuous batching, chunked prefill, preemption by recompute), the model runner for
Llama-family Hugging Face checkpoints, sampling, the offline `LLM` API, and the aiohttp
OpenAI-compatible server with vLLM's metric names and log lines. It speaks vLLM's
vocabulary and flags so that anything learnt on it transfers to vLLM, and it never
imports the agent (advisor, rules, loadtest, reports).

Layout, one subpackage per job (map: docs/engine.md): `engine.core` (requests, block pool,
KV cache manager, scheduler, the step API, the offline `LLM`), `engine.model` (the model,
its runner, sampler, detokenizer, KV sizing, the default model), `engine.api` (the HTTP
server and its flags) and `engine.observability` (logs, metrics, the stats line).
"""
