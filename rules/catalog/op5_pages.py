"""Rule pages for OP-5 (kept apart so op5_live.py stays about logic)."""

from __future__ import annotations

from rules.model import RulePage

OPT = "https://docs.vllm.ai/en/latest/configuration/optimization.html"
METRICS = "https://docs.vllm.ai/en/latest/design/metrics.html"

PAGES: dict[str, tuple[str, RulePage]] = {
    "OP-5.1": ("TTFT high while nothing queues (prefill-bound)", RulePage(
        checks="Windowed TTFT p99 above the TTFT target (workload SLO, default 2 s) while num_requests_waiting < 1; "
               "then whether --max-num-batched-tokens binds: vllm:request_prompt_tokens p99 above it, or the median "
               "step (vllm:iteration_tokens_total p50) at half of it or more.",
        why="With an empty queue, first-token time is prefill time: the prompt is processed in steps of at most "
            "--max-num-batched-tokens tokens, shared with running decodes. Only when prompts or steps reach that "
            "budget does a bigger one finish prefill in fewer steps.",
        example="TTFT p99 4.8 s > 2 s, 0 waiting, --max-num-batched-tokens 2048, p95 prompt 6,000 tokens -> 8192. "
                "Counter-example (vLLM 0.32 CPU, 32 streams): prompts p99 199 tokens, median step 26 tokens -> no "
                "change; the shared step is slow (OP-5.4).",
        fix="When the budget binds: raise --max-num-batched-tokens (x2, or to the p95 prompt rounded up to a power "
            "of two, at most 16384). When it does not: fewer requests per replica or more replicas. For very long "
            "prompts: more GPUs or prefill/decode disaggregation.",
        limits="Raising it lengthens steps, so ITL rises (OP-5.4 pulls the other way; the higher-ranked wins). "
               "Without the step and prompt histograms the change is still proposed, at lower confidence.",
        references=[OPT])),
    "OP-5.2": ("requests queue (saturation)", RulePage(
        checks="num_requests_waiting >= 1, and which limit holds them: KV usage >= 0.90 (capacity), running at "
               "--max-num-seqs (batch cap) or neither (compute).",
        why="Waiting requests add their queue time to TTFT; the remedy depends on the limit.",
        example="12 waiting, running 256 = --max-num-seqs 256, KV usage 0.55 -> --max-num-seqs 512.",
        fix="Batch cap with free KV: raise --max-num-seqs (bounded by what the KV cache holds at p95 length). "
            "KV full: --kv-cache-dtype fp8 or more replicas. Compute: more replicas.",
        limits="A single scrape shows one instant; a window's end value is better but still not an average. "
               "From 0.20 waiting includes deferred requests.",
        references=[OPT, METRICS])),
    "OP-5.3": ("KV cache over-committed: preemptions", RulePage(
        checks="Preemptions: rate of vllm:num_preemptions_total, the stats line's `Preemptions: N` (0.12+), the "
               "V0 preemption warning, or (weak) a non-zero since-start counter; with KV usage beside it.",
        why="A preempted request loses its KV blocks and is recomputed from scratch: wasted GPU time and a TTFT/ITL "
            "spike for that request. V1 logs no per-preemption line.",
        example="KV usage 0.99 > 0.90 with 1.2 preemptions/s > 0 -> --max-num-seqs 96 (what the KV cache holds "
                "at p95 length).",
        fix="Lower --max-num-seqs to what fits; or raise --gpu-memory-utilization, --kv-cache-dtype fp8, TP/PP, "
            "replicas; limit --max-model-len for rare huge requests.",
        limits="Without memory facts the new cap is 75 % of the running count, a first step.",
        references=[OPT])),
    "OP-5.4": ("ITL high under load", RulePage(
        checks="Windowed ITL p99 above the ITL target (default 0.1 s) with 2+ requests running.",
        why="Each decode step also carries prefill chunks of up to --max-num-batched-tokens tokens; large chunks "
            "and large batches make every step slower.",
        example="ITL p99 0.31 s > 0.1 s, 180 running, --max-num-batched-tokens 8192 -> 2048.",
        fix="--max-num-batched-tokens 2048; cap --max-num-seqs; more replicas.",
        limits="Uses p99 across all requests; one long prefill per window is enough to move it.",
        references=[OPT])),
    "OP-5.5": ("ITL high with a single request", RulePage(
        checks="Windowed ITL p50 above the ITL target with at most one request running.",
        why="One sequence's decode reads all weights per token: it is bound by memory bandwidth, or by TP "
            "all-reduces over PCIe.",
        example="ITL p50 0.12 s with 1 running on TP=2 over PCIe -> --tensor-parallel-size 1 --data-parallel-size 2.",
        fix="Avoid TP over PCIe; faster GPU; FP8 weights; speculative decoding.",
        limits="Needs a quiet window; a window that mixes load levels blurs it.",
        references=[OPT])),
    "OP-5.6": ("fewer requests in the server than clients sent (upstream bottleneck)", RulePage(
        checks="running + waiting below 80 % of the clients' in-flight requests (workload facts).",
        why="Requests stuck before vLLM (load balancer, gateway, connection pools) never show in its metrics.",
        example="64 client requests in flight, running 20 + waiting 0.",
        fix="Look upstream: LB limits, gateway, auth, vector DB, client pools.",
        limits="Needs the client concurrency from the load test or the user.", references=[])),
    "OP-5.7": ("long prompts need several prefill steps", RulePage(
        checks="p95 prompt tokens (vllm:request_prompt_tokens window, else workload) above --max-num-batched-tokens.",
        why="Chunked prefill splits a prompt into steps of the batched-token budget; each adds a step to TTFT.",
        example="p95 prompt 6,000 > 2048 -> 3 steps; --max-num-batched-tokens 8192.",
        fix="Raise --max-num-batched-tokens towards the p95 prompt if ITL allows.",
        limits="Low severity on its own; OP-5.1 raises it when TTFT is actually high.", references=[OPT])),
    "OP-5.8": ("many requests aborted or failed", RulePage(
        checks="Share of vllm:request_success_total with finished_reason abort or error (0.13+) over the window.",
        why="request_success_total counts aborts (client disconnects) too; a high share means clients time out.",
        example="12 % of finished requests aborted > 5 %.",
        fix="Compare client timeouts with latency; fix the latency cause or raise timeouts.",
        limits="Aborts can be normal for interactive UIs (users pressing stop).", references=[METRICS])),
    "OP-5.9": ("past the knee: load adds latency, not throughput", RulePage(
        checks="In a ramp result: throughput after the knee grows < 10 % while ITL p99 grows >= 1.5x.",
        why="At the throughput ceiling, a bigger batch only slows every request.",
        example="knee 8 req/s; at 12 req/s throughput +4 %, ITL p99 x2.3 -> --max-num-seqs = running at the knee.",
        fix="Cap --max-num-seqs at the running count at the knee and keep load at the safe operating point.",
        limits="Needs the ramp's per-step server samples for a concrete cap.", references=[])),
    "OP-5.10": ("TTFT tail driven by long prompts (sequence-length correlation)", RulePage(
        checks="Over the window: TTFT p99 above target and >= 5x its p50, while vllm:request_prompt_tokens p99 is "
               ">= 4x its p50.",
        why="When the TTFT body is fast but its tail is slow and prompt lengths have a matching tail, the slow "
            "first tokens belong to long prompts (and the short prompts queued behind their prefill).",
        example="TTFT p50 0.3 s, p99 6.1 s; prompt p50 900, p99 14,000 tokens -> --long-prefill-token-threshold 2048.",
        fix="vLLM 0.32+: --long-prefill-token-threshold (limits concurrent long prefills); otherwise a separate "
            "pool for long prompts, or cap prompt length for interactive traffic.",
        limits="A correlation of two distributions over one window, not per request; needs the prompt-tokens "
               "histogram (all V1 versions have it).", references=[OPT])),
    "OP-5.11": ("replicas unevenly loaded", RulePage(
        checks="Per replica over the window: one has requests waiting while another's running + waiting is below "
               "50 % of the busiest's running.",
        why="Capacity exists but the balancer does not use it: queueing on one replica inflates TTFT for its users.",
        example="10.0.0.1 has 60 running and 12 waiting; 10.0.0.2 has 9 running.",
        fix="Balance on outstanding requests or KV usage (least-requests, llm-d/production-stack routers).",
        limits="Needs per-instance series (Prometheus); a snapshot is one instant.", references=[METRICS])),
    "OP-5.12": ("requests rejected as too long", RulePage(
        checks="Log lines of the request-too-long 400 errors (every version's wording, §3.8): how many, and the "
               "longest prompt (+ max_tokens) against --max-model-len.",
        why="These requests fail outright; either clients need to shorten them or the limit is set below what the "
            "memory would allow.",
        example="5 requests rejected: maximum context length 8,192, longest 11,300 tokens; 26,048 fit -> 12288.",
        fix="Raise --max-model-len to the longest request rounded up to 1,024 when the memory figures say it fits; "
            "else truncate client-side.",
        limits="Only sees rejections that reached the server log; from 0.32 an over-long max_tokens is clamped "
               "silently, not rejected.", references=[])),
}
