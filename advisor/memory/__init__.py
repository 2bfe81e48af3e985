"""Device memory of a vLLM deployment: what the weights, activations and KV cache take.

Answers "does it fit, and how many KV tokens does it leave?": `terms` holds the per-token and
per-layer byte arithmetic, `budget` the whole-device breakdown vLLM's profiler makes, `cpu_backend`
the same for vLLM's CPU backend (whose KV space is given, not a share), and `kv_change` the KV-memory
effect of one flag change on a known deployment.
"""
