"""OP-5: a live server that is slow — where the time goes and which knob moves it.

The split follows the reference's §11 pairs: TTFT high with an empty queue is prefill-bound
(OP-5.1); a queue means saturation, by batch cap or by KV capacity (OP-5.2); preemptions mean
the KV cache is over-committed (OP-5.3); ITL high under load is prefill interference
(OP-5.4), ITL high with one user is bandwidth or interconnect (OP-5.5); fewer requests in the
server than the clients have in flight is a bottleneck upstream (OP-5.6). OP-5.7 ties long
prompts to the per-step token budget, OP-5.8 watches aborts/errors, OP-5.9 reads a ramp: past
the knee more load buys latency, not throughput. OP-5.10 correlates TTFT's tail with prompt
length's tail; OP-5.11 compares replicas (one queues while another idles); OP-5.12 counts
requests rejected as longer than --max-model-len.
"""

from __future__ import annotations

import math

from rules import floors, signals
from rules.catalog import _common as c
from rules.catalog import op3_parallelism, op5_pages
from rules.events import LogEventKind as K
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, Severity
from rules.signals import fmt

DEFAULT_TTFT_SLO_S = 2.0
KV_HIGH = 0.90
MAX_BATCHED_TOKENS_CAP = 16384
ABORT_SHARE = 0.05
TAIL_RATIO = 5.0  # TTFT p99 / p50
PROMPT_TAIL_RATIO = 4.0  # prompt tokens p99 / p50
IMBALANCE_SHARE = 0.5
TOO_LONG_MANY = 5
TTFT = "vllm:time_to_first_token_seconds"
ITL = "vllm:inter_token_latency_seconds"
STEP_TOKENS = "vllm:iteration_tokens_total"  # histogram: tokens each engine step carried
PROMPT_TOKENS = "vllm:request_prompt_tokens"
MAX_TOKENS = "vllm:request_params_max_tokens"
# The budget binds when the median step carries at least this share of it (with vLLM's power-of-two
# buckets: half the steps sit in the bucket ending at the budget), or when prompts exceed it.
BUDGET_BOUND_SHARE = 0.5
SHARED_STEP_ACTION = ("Fewer requests per replica (cap --max-num-seqs) or more replicas: every running request "
                      "shares each step's compute.")


def ttft_slo(facts: Facts) -> float:
    return facts.workload.ttft_slo_s if facts.workload and facts.workload.ttft_slo_s else DEFAULT_TTFT_SLO_S


def _over(signal: signals.Signal | None, threshold: float, unit: str = "s") -> Evidence | None:
    if signal is None:
        return None
    return signal.evidence.model_copy(update={"threshold": threshold, "comparison": ">" if signal.value > threshold
                                              else "<=", "unit": unit})


def _batched_tokens(facts: Facts) -> int:
    if facts.config and facts.config.max_num_batched_tokens:
        return facts.config.max_num_batched_tokens
    return c.DEFAULT_MAX_NUM_BATCHED_TOKENS


def _batched_tokens_up(facts: Facts, reason: str) -> ConfigChange:
    current = _batched_tokens(facts)
    prompt = c.prompt_p95(facts)
    target = max(current * 2, c.next_power_of_two(prompt.value) if prompt else 0)
    return ConfigChange(flag="--max-num-batched-tokens", current=str(current),
                        proposed=str(min(MAX_BATCHED_TOKENS_CAP, target)), reason=reason,
                        cost="longer steps: ITL of running requests rises while long prompts prefill")


def _budget_binds(facts: Facts) -> tuple[bool | None, list[Evidence]]:
    """Whether --max-num-batched-tokens is what holds prefill back, from vLLM's own histograms.

    It binds when p99 prompts are longer than the budget (each is chunked over several steps) or
    when the median step is filled to at least half of it. Steps far below the budget mean every
    waiting prefill already fits one step: a bigger budget would change nothing but step length.
    None when the window has neither histogram (older exports, a Prometheus without them).
    """
    budget = _batched_tokens(facts)
    prompt = signals.quantile(facts, PROMPT_TOKENS, "p99")
    step = signals.quantile(facts, STEP_TOKENS, "p50")
    evidence = []
    if prompt is not None:
        evidence.append(prompt.evidence.model_copy(update={
            "threshold": budget, "comparison": ">" if prompt.value > budget else "<=", "unit": "tokens"}))
    if step is not None:
        near = int(BUDGET_BOUND_SHARE * budget)
        evidence.append(step.evidence.model_copy(update={
            "threshold": near, "comparison": ">=" if step.value >= near else "<", "unit": "tokens"}))
    if prompt is None and step is None:
        return None, evidence
    binds = (prompt is not None and prompt.value > budget) or (step is not None and step.value >= near)
    return binds, evidence


def _check_ttft_prefill(facts: Facts) -> list[Finding]:
    ttft, queue = signals.quantile(facts, TTFT, "p99"), signals.waiting(facts)
    slo = ttft_slo(facts)
    if ttft is None or ttft.value <= slo or queue is None or queue.value >= 1:
        return []
    current = _batched_tokens(facts)
    binds, budget_evidence = _budget_binds(facts)
    evidence = [_over(ttft, slo), queue.evidence, *budget_evidence]
    title = f"TTFT p99 {fmt(ttft.value)} s > {fmt(slo)} s with {fmt(queue.value)} requests waiting"
    prompt = signals.quantile(facts, PROMPT_TOKENS, "p99") or c.prompt_p95(facts)
    floor_s = floors.ttft_floor_s(facts, prompt.value if prompt else None)
    if floor_s is not None and ttft.value <= floors.AT_FLOOR * floor_s:
        return [RULE_TTFT.finding(
            Severity.MEDIUM, f"{title}{floors.describe_multiple(ttft.value, floor_s, 'prefill compute')}: the prompt "
            "length, not the server", evidence=[*evidence, *([prompt.evidence] if prompt else [])], confidence=0.6,
            summary=f"The slowest first tokens take about what their prompts' arithmetic needs ({floor_s:.2f} s for "
                    f"{fmt(prompt.value if prompt else 0)} tokens at the GPUs' peak): no flag makes that faster.",
            actions=["More GPUs per replica (tensor parallel) or a faster GPU shortens prefill; shorter prompts or "
                     "prefix caching of their shared part avoid it; raise the TTFT target for these requests."])]
    if binds is False:
        return [RULE_TTFT.finding(
            Severity.HIGH, f"{title}; steps stay below --max-num-batched-tokens {current}", evidence=evidence,
            confidence=0.5, summary="Requests are not queueing, yet the token budget is not what binds: prompts fit "
            "one step and steps carry far fewer tokens than it allows. A bigger budget would only lengthen steps; "
            "the steps themselves are slow (see OP-5.4 when ITL is high too).",
            actions=[SHARED_STEP_ACTION])]
    reason = "more prompt tokens per step finishes prefill in fewer steps"
    if binds is None:
        reason += " (step sizes not measured: check vllm:iteration_tokens_total before raising it)"
    changes = [] if current >= MAX_BATCHED_TOKENS_CAP else [_batched_tokens_up(facts, reason)]
    return [RULE_TTFT.finding(
        Severity.HIGH, title, summary="Requests are not queueing, so the time goes into prefill itself.",
        evidence=evidence, changes=changes, confidence=0.7 if binds else 0.6,
        actions=["For very long prompts: more GPUs per replica or prefill/decode disaggregation."])]


def _check_saturation(facts: Facts) -> list[Finding]:
    queue, run, kv = signals.waiting(facts), signals.running(facts), signals.kv_usage(facts)
    if queue is None or run is None or queue.value < 1:
        return []
    ttft = signals.quantile(facts, TTFT, "p99")
    seqs = c.max_num_seqs(facts)
    evidence = [queue.evidence.model_copy(update={"threshold": 0, "comparison": ">"}), run.evidence]
    changes, alternatives, actions = [], [], []
    if kv is not None and kv.value >= KV_HIGH:
        evidence.append(_over(kv, KV_HIGH, ""))
        cause = f"KV usage {fmt(kv.value)} >= {KV_HIGH}"
        if not facts.config or facts.config.kv_cache_dtype in (None, "auto"):
            alternatives.append(ConfigChange(flag="--kv-cache-dtype", current="auto", proposed="fp8",
                                             reason="doubles the KV tokens each replica holds",
                                             cost="small accuracy risk", safety="unsafe"))
        actions.append("Add replicas or larger GPUs: the KV cache is full.")
    elif seqs and run.value >= 0.95 * seqs:
        evidence.append(Evidence(source="config", name="--max-num-seqs", value=seqs))
        cause = f"running {fmt(run.value)} at --max-num-seqs {seqs}"
        proposed = seqs * 2
        if facts.memory and facts.memory.kv_cache_tokens and c.workload_tokens_p95(facts):
            proposed = min(proposed, max(seqs, int(facts.memory.kv_cache_tokens / c.workload_tokens_p95(facts))))
        if proposed > seqs:
            changes.append(ConfigChange(flag="--max-num-seqs", current=str(seqs), proposed=str(proposed),
                                        reason="the batch cap, not memory, holds requests back",
                                        cost="higher ITL per request as batches grow"))
    elif (preempting := signals.preemption_rate(facts)) is not None and preempting.value > 0:
        # KV usage dips between preemptions, so the instant gauge may read below KV_HIGH: the
        # preemptions say the cache is what runs out, and OP-5.3 carries the remedy.
        evidence.append(preempting.evidence.model_copy(update={"threshold": 0, "comparison": ">"}))
        cause = "the KV cache runs out: requests are preempted"
        actions.append("See OP-5.3: fix the preemptions first; the queue follows from them.")
    elif kv is None and seqs is None:
        cause = "limit unknown: no KV usage or --max-num-seqs"
        actions.append("Collect KV usage (/metrics) and the launch flags to tell capacity from the batch cap.")
    else:
        cause = "compute-bound"
        actions.append("Add replicas: the engine is busy with its current batch.")
    slow = ttft is not None and ttft.value > ttft_slo(facts)
    if ttft is not None:
        evidence.append(_over(ttft, ttft_slo(facts)))
    deferred = cause.startswith("the KV cache runs out")
    return [RULE_SATURATION.finding(
        Severity.HIGH if slow and not deferred else Severity.MEDIUM,
        f"{fmt(queue.value)} requests waiting > 0 ({cause})", evidence=evidence, changes=changes,
        alternatives=alternatives, actions=actions, confidence=0.8 if facts.window else 0.6,
        summary="Requests queue before they start: TTFT grows with the queue.")]


def _check_preemptions(facts: Facts) -> list[Finding]:
    rate = signals.preemption_rate(facts)
    if rate is None or rate.value <= 0:
        return []
    kv, run = signals.kv_usage(facts), signals.running(facts)
    evidence = [rate.evidence.model_copy(update={"threshold": 0, "comparison": ">"})]
    if kv is not None:
        evidence.append(_over(kv, KV_HIGH, ""))
    seqs = c.max_num_seqs(facts)
    changes, alternatives = [], []
    fits = None
    request_tokens = c.workload_tokens_p95(facts)
    if request_tokens is None and (measured := _measured_request_tokens(facts)) is not None:
        request_tokens = measured
        evidence.append(Evidence(source=signals._window_source(facts), name="p95 prompt + p95 max_tokens per request",
                                 value=round(measured), unit="tokens", location=f"{facts.window.interval_s:.0f} s window"))
    if facts.memory and facts.memory.kv_cache_tokens and request_tokens:
        fits = int(facts.memory.kv_cache_tokens / request_tokens)
    elif run is not None and run.value >= 2:
        fits = int(run.value * 0.75)
    current = seqs or (c.default_max_num_seqs(facts) if fits else None)
    if fits and current and fits < current:
        changes.append(ConfigChange(flag="--max-num-seqs", current=str(current), proposed=str(max(1, fits)),
                                    reason="admit only as many requests as the KV cache holds, so none is "
                                    "evicted and recomputed", cost="lower peak concurrency; requests wait instead"))
    util = c.gpu_memory_utilization(facts)
    if util < 0.92:
        alternatives.append(ConfigChange(flag="--gpu-memory-utilization", current=c.util_text(util), proposed="0.92",
                                         reason="more memory for KV blocks", cost="less headroom on the GPU"))
    if not facts.config or facts.config.kv_cache_dtype in (None, "auto"):
        alternatives.append(ConfigChange(flag="--kv-cache-dtype", current="auto", proposed="fp8",
                                         reason="doubles KV tokens", cost="small accuracy risk", safety="unsafe"))
    per_s = rate.evidence.unit == "/s"
    amount = f"{fmt(rate.value)} preemptions/s" if per_s else f"{fmt(rate.value)} preemptions"
    kv_text = f"KV usage {fmt(kv.value)} > {KV_HIGH} with " if kv is not None and kv.value > KV_HIGH else ""
    queue = signals.waiting(facts)
    queued = queue is not None and queue.value >= 1
    if queued:
        evidence.append(queue.evidence.model_copy(update={"threshold": 0, "comparison": ">"}))
    return [RULE_PREEMPTION.finding(
        Severity.HIGH if (per_s and rate.value >= 1) or (kv is not None and kv.value > KV_HIGH) or queued
        else Severity.MEDIUM,
        f"{kv_text}{amount} > 0", evidence=evidence, changes=changes, alternatives=alternatives,
        confidence=0.85 if rate.strong else 0.5,
        actions=["Or add replicas / limit --max-model-len for rare very long requests."],
        summary="The KV cache ran out mid-generation: requests were evicted and will be recomputed.")]


def _measured_request_tokens(facts: Facts) -> float | None:
    """p95 prompt + p95 max_tokens of the requests vLLM finished in the window (its own histograms),
    capped at max-model-len: the KV one request may need, when the workload gives no lengths."""
    prompt = signals.quantile(facts, PROMPT_TOKENS, "p95")
    output = signals.quantile(facts, MAX_TOKENS, "p95")
    if prompt is None or output is None:
        return None
    limit = facts.config.max_model_len if facts.config else None
    return min(prompt.value + output.value, limit or math.inf)


def _check_itl_under_load(facts: Facts) -> list[Finding]:
    itl, run = signals.quantile(facts, ITL, "p99"), signals.running(facts)
    slo = op3_parallelism.itl_slo(facts)
    if itl is None or run is None or run.value < 2 or itl.value <= slo:
        return []
    current = _batched_tokens(facts)
    changes = []
    if current > c.DEFAULT_MAX_NUM_BATCHED_TOKENS:
        changes.append(ConfigChange(flag="--max-num-batched-tokens", current=str(current), proposed="2048",
                                    reason="smaller prefill chunks interrupt running decodes less",
                                    cost="longer TTFT for long prompts"))
    evidence = [_over(itl, slo), run.evidence]
    steps = signals.observation_rate(facts, STEP_TOKENS)
    if steps is not None:
        evidence.append(steps.evidence.model_copy(update={"name": "engine steps/s (vllm:iteration_tokens_total)"}))
    floor = floors.decode_floor(facts)
    median = signals.quantile(facts, ITL, "p50")
    physics = floors.describe_multiple(median.value, floor.step_s, "decode") if floor and median else ""
    return [RULE_ITL_LOAD.finding(
        Severity.HIGH, f"ITL p99 {fmt(itl.value, 3)} s > {fmt(slo, 3)} s with {fmt(run.value)} requests running"
        + (f" (p50 {fmt(median.value, 3)} s{physics})" if physics else ""),
        evidence=evidence, changes=changes, confidence=0.7,
        actions=["Cap --max-num-seqs or add replicas if ITL matters more than throughput."],
        summary="Every running request waits for the whole step: the batch is large or prefill chunks share "
        "the step, so each decode step is slow.")]


def _check_itl_single_user(facts: Facts) -> list[Finding]:
    itl, run = signals.quantile(facts, ITL, "p50"), signals.running(facts)
    slo = op3_parallelism.itl_slo(facts)
    if itl is None or run is None or run.value > 1 or itl.value <= slo:
        return []
    link = facts.hardware.interconnect if facts.hardware else None
    changes: list[ConfigChange] = []
    if c.tensor_parallel_size(facts) > 1 and link == "pcie":
        changes, _ = op3_parallelism.pcie_tp_changes(facts, "TP all-reduces over PCIe dominate a single decode")
    floor = floors.decode_floor(facts)
    physics = floors.describe_multiple(itl.value, floor.step_s, "bandwidth") if floor else ""
    return [RULE_ITL_SINGLE.finding(
        Severity.MEDIUM, f"ITL p50 {fmt(itl.value, 3)} s{physics} > {fmt(slo, 3)} s with {fmt(run.value)} request "
        "running",
        evidence=[_over(itl, slo), run.evidence], changes=changes, confidence=0.6,
        actions=["Single-stream decode is memory-bandwidth bound: a faster GPU, FP8 weights, or speculative "
                 "decoding (OP-6) lower it."],
        summary="Even alone, a request decodes slowly: bandwidth or interconnect, not load.")]


def _check_upstream(facts: Facts) -> list[Finding]:
    clients = facts.workload.client_concurrency if facts.workload else None
    run, queue = signals.running(facts), signals.waiting(facts)
    if not clients or run is None:
        return []
    inside = run.value + (queue.value if queue else 0.0)
    if inside >= 0.8 * clients:
        return []
    return [RULE_UPSTREAM.finding(
        Severity.MEDIUM, f"running + waiting {fmt(inside)} < 80 % of {clients} client requests in flight",
        evidence=[run.evidence, Evidence(source="workload", name="client concurrency", value=clients,
                                         threshold=round(0.8 * clients, 1), comparison=">")],
        confidence=0.6, summary="Requests are held before they reach vLLM.",
        actions=["Check the load balancer, gateway, auth/vector-DB hops and client connection pools."])]


def _check_long_prompts(facts: Facts) -> list[Finding]:
    prompt = c.prompt_p95(facts)
    current = _batched_tokens(facts)
    if prompt is None or prompt.value <= current or current >= MAX_BATCHED_TOKENS_CAP:
        return []
    steps = math.ceil(prompt.value / current)
    return [RULE_LONG_PROMPTS.finding(
        Severity.LOW, f"p95 prompt {fmt(prompt.value)} tokens > --max-num-batched-tokens {current} "
        f"({steps} prefill steps)", evidence=[prompt.evidence.model_copy(update={"threshold": current, "comparison": ">"})],
        changes=[_batched_tokens_up(facts, f"a p95 prompt needs {steps} steps to prefill")], confidence=0.5,
        summary="Long prompts are prefilled in chunks over several steps, adding to their TTFT.")]


def _check_aborts(facts: Facts) -> list[Finding]:
    if facts.window is None:
        return []
    by_reason = facts.window.total.by_label("vllm:request_success_total")
    total = sum(by_reason.values())
    failed = by_reason.get("abort", 0.0) + by_reason.get("error", 0.0)
    if total <= 0 or failed / total <= ABORT_SHARE:
        return []
    share = failed / total
    return [RULE_ABORTS.finding(
        Severity.MEDIUM, f"{share:.0%} of finished requests aborted or failed > {ABORT_SHARE:.0%}",
        evidence=[Evidence(source=signals._window_source(facts), name="vllm:request_success_total{abort,error} share",
                           value=round(share, 3), threshold=ABORT_SHARE, comparison=">")],
        confidence=0.7, summary="Clients gave up (timeouts, disconnects) or requests errored.",
        actions=["Compare client timeouts with TTFT/e2e p99; check the server log for request errors."])]


def _check_past_knee(facts: Facts) -> list[Finding]:
    test = facts.loadtest
    knee = test.knee_offered() if test else None
    steps = test.valid_steps if test else []
    at_knee = next((s for s in steps if s.offered == knee), None)
    later = [s for s in steps if knee is not None and s.offered > knee]
    if at_knee is None or not later or not at_knee.output_tokens_per_s or not at_knee.itl_s.p99:
        return []
    best = max((s.output_tokens_per_s or 0.0) for s in later)
    last = later[-1]
    gain = best / at_knee.output_tokens_per_s
    slowdown = (last.itl_s.p99 or at_knee.itl_s.p99) / at_knee.itl_s.p99
    if gain >= 1.1 or slowdown < 1.5:
        return []
    evidence = [Evidence(source="ramp", name="throughput gain past the knee", value=round(gain, 2), threshold=1.1,
                         comparison="<"),
                Evidence(source="ramp", name="ITL p99 growth past the knee", value=round(slowdown, 2), threshold=1.5,
                         comparison=">=")]
    changes = []
    running_at_knee = at_knee.server_value("running_mean", "num_requests_running", "running", "running_max")
    if running_at_knee is not None and running_at_knee >= 1:
        seqs = c.max_num_seqs(facts)
        changes.append(ConfigChange(flag="--max-num-seqs", current=str(seqs) if seqs else None,
                                    proposed=str(int(math.ceil(running_at_knee))),
                                    reason="the batch size at the knee gave the throughput; more only adds latency",
                                    cost="excess load queues (visible as waiting) instead of slowing everyone"))
    return [RULE_KNEE.finding(
        Severity.MEDIUM, f"past the knee ({fmt(knee)} req/s) throughput +{gain - 1:.0%} < 10 % while ITL p99 "
        f"x{slowdown:.1f}", evidence=evidence, changes=changes, confidence=0.7,
        actions=[f"Keep offered load at or below the safe operating point {test.safe_operating_point}."
                 if test.safe_operating_point else "Keep offered load at or below the knee."],
        summary="The server is at its throughput ceiling: extra load only adds latency.")]


def _check_long_tail(facts: Facts) -> list[Finding]:
    """TTFT's tail, not its body, is slow, and prompt lengths have a long tail too: long requests cause it."""
    ttft_50, ttft_99 = signals.quantile(facts, TTFT, "p50"), signals.quantile(facts, TTFT, "p99")
    prompt_50 = signals.quantile(facts, "vllm:request_prompt_tokens", "p50")
    prompt_99 = signals.quantile(facts, "vllm:request_prompt_tokens", "p99")
    if None in (ttft_50, ttft_99, prompt_50, prompt_99) or ttft_50.value <= 0 or prompt_50.value <= 0:
        return []
    ttft_ratio, prompt_ratio = ttft_99.value / ttft_50.value, prompt_99.value / prompt_50.value
    if ttft_99.value <= ttft_slo(facts) or ttft_ratio < TAIL_RATIO or prompt_ratio < PROMPT_TAIL_RATIO:
        return []
    evidence = [_over(ttft_99, ttft_slo(facts)),
                Evidence(source=ttft_50.evidence.source, name="TTFT p99 / p50", value=round(ttft_ratio, 1),
                         threshold=TAIL_RATIO, comparison=">="),
                Evidence(source=prompt_50.evidence.source, name="prompt tokens p99 / p50", value=round(prompt_ratio, 1),
                         threshold=PROMPT_TAIL_RATIO, comparison=">=")]
    changes = []
    version = c.vllm_version(facts)
    if version is not None and version >= (0, 32):
        threshold = c.next_power_of_two(prompt_50.value * 2)
        changes.append(ConfigChange(flag="--long-prefill-token-threshold", current="0", proposed=str(threshold),
                                    reason="prompts above this count as long and are limited in how many prefill "
                                    "at once, so they stop delaying everyone else", cost="longer TTFT for long prompts"))
    return [RULE_LONG_TAIL.finding(
        Severity.MEDIUM, f"TTFT p99 {fmt(ttft_99.value)} s is {ttft_ratio:.0f}x p50 while prompts p99 are "
        f"{prompt_ratio:.0f}x p50 ({fmt(prompt_99.value)} tokens)", evidence=evidence, changes=changes,
        confidence=0.6, summary="The slowest first tokens go with the longest prompts, not with load.",
        actions=["Serve very long prompts from a separate pool, or cap prompt length for interactive traffic."])]


def _check_imbalance(facts: Facts) -> list[Finding]:
    """One replica queues while another has room: the balancer, not capacity, is the problem."""
    parts = facts.window.per_instance if facts.window else []
    if len(parts) < 2:
        return []
    loads = {p.instance: (p.gauge("vllm:num_requests_running") or 0.0, p.gauge("vllm:num_requests_waiting") or 0.0)
             for p in parts}
    busiest = max(loads, key=lambda k: loads[k][0] + loads[k][1])
    idlest = min(loads, key=lambda k: loads[k][0] + loads[k][1])
    busy_run, busy_wait = loads[busiest]
    idle_total = sum(loads[idlest])
    if busy_wait < 1 or idle_total >= IMBALANCE_SHARE * busy_run:
        return []
    evidence = [Evidence(source=signals._window_source(facts), name="running + waiting", value=busy_run + busy_wait,
                         location=busiest),
                Evidence(source=signals._window_source(facts), name="running + waiting", value=idle_total,
                         threshold=round(IMBALANCE_SHARE * busy_run, 1), comparison="<", location=idlest)]
    return [RULE_IMBALANCE.finding(
        Severity.MEDIUM, f"{busiest} has {fmt(busy_wait)} waiting while {idlest} has {fmt(idle_total)} requests "
        f"(< {IMBALANCE_SHARE:.0%} of the busiest's running)", evidence=evidence, confidence=0.7,
        summary="Replicas are unevenly loaded: requests queue on one while another has room.",
        actions=["Balance by outstanding requests (least-requests / KV-aware routing), not round-robin per connection."])]


def _check_too_long(facts: Facts) -> list[Finding]:
    events = facts.events_of(K.REQUEST_TOO_LONG)
    if not events:
        return []
    limit = max((e.max_model_len or 0) for e in events) or (facts.config.max_model_len if facts.config else None)
    longest = max((e.requested_tokens or e.prompt_tokens or 0) for e in events)
    changes = []
    fits = facts.memory.max_model_len_that_fits if facts.memory else None
    proposed = int(math.ceil(longest / 1024) * 1024) if longest else None
    if limit and proposed and fits and limit < proposed <= fits:
        changes.append(ConfigChange(flag="--max-model-len", current=str(limit), proposed=str(proposed),
                                    reason=f"the longest rejected request needs {longest:,} tokens; up to {fits:,} fit "
                                    "the KV cache", cost="fewer long requests run at once"))
    return [RULE_TOO_LONG.finding(
        Severity.MEDIUM if len(events) >= TOO_LONG_MANY else Severity.LOW,
        f"{len(events)} request(s) rejected as longer than max-model-len {fmt(limit)} (longest {fmt(longest)} tokens)",
        evidence=[c.log_evidence(events[-1], "rejected request tokens", longest or None, limit, ">", "tokens")],
        changes=changes, confidence=0.7,
        summary="Clients send prompts (plus max_tokens) longer than the server accepts: they get HTTP 400.",
        actions=["Truncate or summarise long inputs client-side, or raise --max-model-len where memory allows "
                 "(servops advise)."])]


def _rule(code: str, check, category: Category, needs: tuple[str, ...]) -> Rule:
    title, page = op5_pages.PAGES[code]
    return Rule(code=code, title=title, category=category, page=page, check=check, needs=needs)


LIVE = ("window", "snapshot", "events")
RULE_TTFT = _rule("OP-5.1", _check_ttft_prefill, Category.LATENCY, ("window",))
RULE_SATURATION = _rule("OP-5.2", _check_saturation, Category.SATURATION, LIVE)
RULE_PREEMPTION = _rule("OP-5.3", _check_preemptions, Category.KV_CACHE, LIVE)
RULE_ITL_LOAD = _rule("OP-5.4", _check_itl_under_load, Category.LATENCY, ("window",))
RULE_ITL_SINGLE = _rule("OP-5.5", _check_itl_single_user, Category.LATENCY, ("window",))
RULE_UPSTREAM = _rule("OP-5.6", _check_upstream, Category.SATURATION, ("workload",))
RULE_LONG_PROMPTS = _rule("OP-5.7", _check_long_prompts, Category.LATENCY, ("window", "workload"))
RULE_ABORTS = _rule("OP-5.8", _check_aborts, Category.RELIABILITY, ("window",))
RULE_KNEE = _rule("OP-5.9", _check_past_knee, Category.SATURATION, ("loadtest",))

RULE_LONG_TAIL = _rule("OP-5.10", _check_long_tail, Category.LATENCY, ("window",))
RULE_IMBALANCE = _rule("OP-5.11", _check_imbalance, Category.SATURATION, ("window",))
RULE_TOO_LONG = _rule("OP-5.12", _check_too_long, Category.RELIABILITY, ("events",))

RULES: list[Rule] = [RULE_TTFT, RULE_SATURATION, RULE_PREEMPTION, RULE_ITL_LOAD, RULE_ITL_SINGLE,
                     RULE_UPSTREAM, RULE_LONG_PROMPTS, RULE_ABORTS, RULE_KNEE, RULE_LONG_TAIL, RULE_IMBALANCE,
                     RULE_TOO_LONG]
