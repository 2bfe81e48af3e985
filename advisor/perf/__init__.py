"""The performance model: what a vLLM-style server's latency and throughput become under a
changed configuration, predicted before anyone restarts it.

Two parts (the form BLIS/inference-sim fits, see docs/predict.md):
- `cost`: the time of one engine step as a linear function of what the step holds
  (a fixed part, prompt tokens computed, decode sequences, context tokens read), plus a
  per-request overhead outside the engine (HTTP, tokenisation, streaming);
- `replay`: vLLM V1's scheduling replayed in virtual time over the measured workload, using
  the bundled engine's own scheduler and KV cache manager (which follow vLLM V1), so
  --max-num-seqs, --max-num-batched-tokens, chunked prefill, prefix-cache hits, KV blocks
  and preemption by recompute act exactly as the scheduler makes them act.

`calibrate` fits the cost from a ramp (and the server's /metrics during it); `prior` gives a
roofline cost from the model and GPU catalogs when nothing was measured; `forecast` turns a
ramp plus flag changes into a predicted ramp; `pool` and `parallel` move the KV pool and the step
cost to another pool size, device share or tensor-parallel size. Everything here is pure: numbers in, numbers
out, no I/O and no clock.
"""
