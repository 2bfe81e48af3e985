"""The bundled paged-attention engine: the reference deployment servops is tested against.

engine owns the block pool with automatic prefix caching, the iteration-level scheduler
(continuous batching, chunked prefill, preemption by recompute), the model runner for
Llama-family Hugging Face checkpoints, sampling, the offline `LLM` API, and the aiohttp
OpenAI-compatible server with vLLM's metric names and log lines. It speaks vLLM's
vocabulary and flags so that anything learnt on it transfers to vLLM, and it never
imports the agent (advisor, rules, loadtest, reports).
"""
