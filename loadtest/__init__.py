"""Load tests for OpenAI-compatible streaming endpoints, built on Locust.

loadtest owns workloads (synthetic, shared-prefix and file-based prompts), the streaming
Locust user that timestamps every SSE event at full precision, ramp shapes over request
rate or concurrency, headless and master/worker runs, per-step statistics, knee detection
and sampling of the server's /metrics during a ramp. It knows nothing of the engine or
the agent: it measures any endpoint, vLLM or ours, the same way.
"""
