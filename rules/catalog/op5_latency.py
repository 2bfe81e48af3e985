"""OP-5 latency: where a live server's time goes when first tokens or later tokens are slow.

The split follows docs/reference.md §5's pairs: TTFT high with an empty queue is prefill-bound
(OP-5.1); ITL high under load is prefill interference (OP-5.4), ITL high with one user is
bandwidth or interconnect (OP-5.5). OP-5.7 ties long prompts to the per-step token budget;
OP-5.10 correlates TTFT's tail with prompt length's tail. Queueing is in op5_queueing.py, KV
over-commitment in op5_kv.py, rejected and failed requests in op5_reliability.py, the physical
floors in op5_floors.py.
"""

from __future__ import annotations

import math

from rules import signals
from rules.alerts import Alert, latency_over_slo
from rules.catalog import common as c
from rules.catalog import floors
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

MAX_BATCHED_TOKENS_CAP = 16384
TAIL_RATIO = 5.0  # TTFT p99 / p50
PROMPT_TAIL_RATIO = 4.0  # prompt tokens p99 / p50
LOADED_RUNNING = 2  # ITL "under load" from this many running requests
STEP_TOKENS = signals.ENGINE_STEPS  # histogram: tokens each engine step carried
# The budget binds when the median step carries at least this share of it (with vLLM's power-of-two
# buckets: half the steps sit in the bucket ending at the budget), or when prompts exceed it.
BUDGET_BOUND_SHARE = 0.5
SHARED_STEP_ACTION = (
    "Fewer requests per replica (cap --max-num-seqs) or more replicas: every running request "
    "shares each step's compute."
)


# --- --max-num-batched-tokens: when it binds, and raising it -----------------------------------


def _batched_tokens_up(facts: Facts, reason: str) -> ConfigChange:
    current = c.batched_tokens(facts)
    prompt = c.prompt_p95(facts)
    target = max(current * 2, c.next_power_of_two(prompt.value) if prompt else 0)
    return ConfigChange(
        flag="--max-num-batched-tokens",
        current=str(current),
        proposed=str(min(MAX_BATCHED_TOKENS_CAP, target)),
        reason=reason,
        cost="longer steps: ITL of running requests rises while long prompts prefill",
    )


def _budget_binds(facts: Facts) -> tuple[bool | None, list[Evidence]]:
    """Whether --max-num-batched-tokens is what holds prefill back, from vLLM's own histograms.

    It binds when p99 prompts are longer than the budget (each is chunked over several steps) or
    when the median step is filled to at least half of it. Steps far below the budget mean every
    waiting prefill already fits one step: a bigger budget would change nothing but step length.
    None when the window has neither histogram (older exports, a Prometheus without them).
    """
    budget = c.batched_tokens(facts)
    prompt = signals.quantile(facts, c.PROMPT_TOKENS, "p99")
    step = signals.quantile(facts, STEP_TOKENS, "p50")
    evidence = []
    if prompt is not None:
        evidence.append(c.over(prompt, budget, unit="tokens"))
    if step is not None:
        near = int(BUDGET_BOUND_SHARE * budget)
        evidence.append(
            step.evidence.model_copy(
                update={"threshold": near, "comparison": ">=" if step.value >= near else "<", "unit": "tokens"}
            )
        )
    if prompt is None and step is None:
        return None, evidence
    binds = (prompt is not None and prompt.value > budget) or (step is not None and step.value >= near)
    return binds, evidence


# --- OP-5.1 TTFT high while nothing queues -----------------------------------------------------


def _check_ttft_prefill(facts: Facts) -> list[Finding]:
    ttft, queue = signals.quantile(facts, c.TTFT, "p99"), signals.waiting(facts)
    slo = c.ttft_slo(facts)
    if ttft is None or ttft.value <= slo or queue is None or queue.value >= 1:
        return []
    current = c.batched_tokens(facts)
    binds, budget_evidence = _budget_binds(facts)
    evidence = [c.over(ttft, slo), queue.evidence, *budget_evidence]
    title = f"TTFT p99 {fmt(ttft.value)} s > {fmt(slo)} s with {fmt(queue.value)} requests waiting"
    prompt = signals.quantile(facts, c.PROMPT_TOKENS, "p99") or c.prompt_p95(facts)
    floor_s = floors.ttft_floor_s(facts, prompt.value if prompt else None)
    if floor_s is not None and ttft.value <= floors.AT_FLOOR * floor_s:
        return [_ttft_at_prefill_floor(title, evidence, ttft.value, floor_s, prompt)]
    if binds is False:
        return [
            RULE_TTFT.finding(
                Severity.HIGH,
                f"{title}; steps stay below --max-num-batched-tokens {current}",
                evidence=evidence,
                confidence=0.5,
                summary="Requests are not queueing, yet the token budget is not what binds: prompts fit "
                "one step and steps carry far fewer tokens than it allows. A bigger budget would only lengthen steps; "
                "the steps themselves are slow (see OP-5.4 when ITL is high too).",
                actions=[SHARED_STEP_ACTION],
            )
        ]
    reason = "more prompt tokens per step finishes prefill in fewer steps"
    if binds is None:
        reason += " (step sizes not measured: check vllm:iteration_tokens_total before raising it)"
    changes = [] if current >= MAX_BATCHED_TOKENS_CAP else [_batched_tokens_up(facts, reason)]
    return [
        RULE_TTFT.finding(
            Severity.HIGH,
            title,
            summary="Requests are not queueing, so the time goes into prefill itself.",
            evidence=evidence,
            changes=changes,
            confidence=0.7 if binds else 0.6,
            actions=["For very long prompts: more GPUs per replica or prefill/decode disaggregation."],
        )
    ]


# TTFT p99 over the latency target (`servops alerts export --slo`, else the rules' default) where the
# window saw traffic enough to read a p99.
ALERT_TTFT = Alert(
    name="VllmTimeToFirstTokenHigh",
    expr=latency_over_slo(0.99, c.TTFT, "5m"),
    for_="5m",
    severity=Severity.HIGH,
    description="{{ $labels.instance }} ({{ $labels.model_name }}): TTFT p99 {{ $value | humanizeDuration }} "
    "over the target {slo_s} s.",
    slo="ttft",
)


def _ttft_at_prefill_floor(
    title: str, evidence: list[Evidence], ttft_s: float, floor_s: float, prompt: signals.Signal | None
) -> Finding:
    """The slow first tokens take about what their prompts' arithmetic needs at the GPUs' peak: the prompt
    length is the cause, and no flag is proposed, since none makes that arithmetic faster."""
    return RULE_TTFT.finding(
        Severity.MEDIUM,
        f"{title}{floors.describe_multiple(ttft_s, floor_s, 'prefill compute')}: the prompt length, not the server",
        evidence=[*evidence, *([prompt.evidence] if prompt else [])],
        confidence=0.6,
        summary="The slowest first tokens take about what their prompts' arithmetic needs "
        f"({floor_s:.2f} s for {fmt(prompt.value if prompt else 0)} tokens at the GPUs' peak): "
        "no flag makes that faster.",
        actions=[
            "More GPUs per replica (tensor parallel) or a faster GPU shortens prefill; shorter prompts or "
            "prefix caching of their shared part avoid it; raise the TTFT target for these requests."
        ],
    )


RULE_TTFT = Rule(
    code="OP-5.1",
    title="TTFT high while nothing queues (prefill-bound)",
    category=Category.LATENCY,
    check=_check_ttft_prefill,
    alerts=(ALERT_TTFT,),
    needs=("window",),
    page=RulePage(
        checks=f"Windowed TTFT p99 above the TTFT target (workload SLO, default {c.DEFAULT_TTFT_SLO_S:g} s) while "
        "num_requests_waiting < 1; then whether --max-num-batched-tokens binds: vllm:request_prompt_tokens p99 "
        f"above it, or the median step (vllm:iteration_tokens_total p50) at {c.percent(BUDGET_BOUND_SHARE)} of "
        "it or more.",
        why="With an empty queue, first-token time is prefill time: the prompt is processed in steps of at most "
        "--max-num-batched-tokens tokens, shared with running decodes. Only when prompts or steps reach that "
        "budget does a bigger one finish prefill in fewer steps.",
        example=f"TTFT p99 4.8 s > {c.DEFAULT_TTFT_SLO_S:g} s, 0 waiting, --max-num-batched-tokens 2048, p95 prompt "
        "6,000 tokens -> 8192. "
        "Counter-example (vLLM 0.32 CPU, 32 streams): prompts p99 199 tokens, median step 26 tokens -> no "
        "change; the shared step is slow (OP-5.4).",
        fix="When the budget binds: raise --max-num-batched-tokens (x2, or to the p95 prompt rounded up to a power "
        f"of two, at most {MAX_BATCHED_TOKENS_CAP}). When it does not: fewer requests per replica or more "
        "replicas. For very long "
        "prompts: more GPUs or prefill/decode disaggregation.",
        limits="Raising it lengthens steps, so ITL rises (OP-5.4 pulls the other way; the higher-ranked wins). "
        "Without the step and prompt histograms the change is still proposed, at lower confidence.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


# --- OP-5.4 ITL high under load ----------------------------------------------------------------


def _check_itl_under_load(facts: Facts) -> list[Finding]:
    itl, run = signals.quantile(facts, c.ITL, "p99"), signals.running(facts)
    slo = c.itl_slo(facts)
    # Per engine: vLLM's gauges sum the --data-parallel-size engines, each of which steps its own batch.
    if itl is None or run is None or run.value < LOADED_RUNNING * c.data_parallel_size(facts) or itl.value <= slo:
        return []
    floor = floors.decode_floor(facts)
    if floor is not None and itl.value <= floors.AT_FLOOR * floor.step_s:
        return [_itl_at_its_floor(facts, itl, run, slo, floor)]
    current = c.batched_tokens(facts)
    changes = []
    chunks, chunk_evidence = _smaller_budget_chunks(facts, c.DEFAULT_MAX_NUM_BATCHED_TOKENS)
    if current > c.DEFAULT_MAX_NUM_BATCHED_TOKENS and chunks is not False:
        changes.append(
            ConfigChange(
                flag="--max-num-batched-tokens",
                current=str(current),
                proposed=str(c.DEFAULT_MAX_NUM_BATCHED_TOKENS),
                reason="smaller prefill chunks interrupt running decodes less",
                cost="longer TTFT for long prompts",
            )
        )
    evidence = [c.over(itl, slo), run.evidence]
    if current > c.DEFAULT_MAX_NUM_BATCHED_TOKENS:
        evidence += chunk_evidence
    steps = signals.observation_rate(facts, STEP_TOKENS)
    if steps is not None:
        evidence.append(steps.evidence.model_copy(update={"name": "engine steps/s (vllm:iteration_tokens_total)"}))
    median = signals.quantile(facts, c.ITL, "p50")
    physics = floors.describe_multiple(median.value, floor.step_s, "decode") if floor and median else ""
    return [
        RULE_ITL_LOAD.finding(
            Severity.HIGH,
            f"ITL p99 {fmt(itl.value, 3)} s > {fmt(slo, 3)} s with {fmt(run.value)} requests running"
            + (f" (p50 {fmt(median.value, 3)} s{physics})" if physics else ""),
            evidence=evidence,
            changes=changes,
            confidence=0.7,
            actions=["Cap --max-num-seqs or add replicas if ITL matters more than throughput."],
            summary="Every running request waits for the whole step: the batch is large or prefill chunks share "
            "the step, so each decode step is slow.",
        )
    ]


def _smaller_budget_chunks(facts: Facts, budget: int) -> tuple[bool | None, list[Evidence]]:
    """Whether a step budget of `budget` tokens would split anything the window ran: a p99 prompt or a p99
    step above it. None without either histogram.

    Why: a smaller --max-num-batched-tokens shortens the steps that carry a long prefill, and only those.
    Real vLLM 0.32 on its CPU backend with two pipeline stages defaults to 4096 (2048 per rank); its
    16-stream window had p99 prompts of 199 tokens, so 2048 would have changed no step."""
    prompt = signals.quantile(facts, c.PROMPT_TOKENS, "p99")
    step = signals.quantile(facts, STEP_TOKENS, "p99")
    found = [s for s in (prompt, step) if s is not None]
    if not found:
        return None, []
    return any(s.value > budget for s in found), [c.over(s, budget, unit="tokens") for s in found]


def _itl_at_its_floor(
    facts: Facts, itl: signals.Signal, run: signals.Signal, slo: float, floor: floors.DecodeFloor
) -> Finding:
    """ITL over its target even in its tail, yet within AT_FLOOR of what the batch's memory traffic needs.

    Why no scheduling flag: every step already runs about as fast as reading the weights and the
    running sequences' KV cache allows (long outputs make that cache long), so a smaller prefill
    chunk or any other scheduling flag cannot shorten it. Only less work per step (fewer sequences,
    at a throughput price the model can show) or more bandwidth per replica lowers it: the same
    GPUs regrouped into wider replicas when the floor says that helps (wider_tp_changes)."""
    changes, evidence = wider_tp_changes(facts, floor)
    return RULE_ITL_LOAD.finding(
        Severity.MEDIUM,
        f"ITL p99 {fmt(itl.value, 3)} s > {fmt(slo, 3)} s with {fmt(run.value)} requests running"
        f"{floors.describe_multiple(itl.value, floor.step_s, 'decode')}: the batch's memory traffic, not the server",
        evidence=[
            c.over(itl, slo),
            run.evidence,
            floors.evidence("decode step floor", floor.step_s, floor.describe()),
            *evidence,
        ],
        changes=changes,
        confidence=0.6,
        summary="Even the slowest tokens take about what one decode step must read: the weights"
        + (
            f" and {fmt(floor.batch)} sequences' KV cache of about {fmt(floor.context_tokens)} tokens each"
            if floor.context_tokens
            else ""
        )
        + f", {floor.step_s * 1e3:.1f} ms at the memory bandwidth. No scheduling flag makes that step faster"
        + ("; wider replicas of the same GPUs read less per GPU." if changes else "."),
        actions=[
            "A smaller --max-num-seqs reads less KV per step and lowers ITL at a throughput price "
            "(servops predict --change shows both); more replicas, a faster GPU or FP8 KV cache "
            "(--kv-cache-dtype fp8) lower it without that price."
        ],
    )


def wider_tp_changes(facts: Facts, floor: floors.DecodeFloor) -> tuple[list[ConfigChange], list[Evidence]]:
    """The same GPUs as half as many replicas of twice the tensor-parallel size, when the decode floor
    says such a replica steps clearly faster with its doubled batch (floors.wider_replica); its floor
    as evidence. A lone (or odd) replica is widened only onto GPUs --gpus counts idle: more GPUs
    beyond those are a purchase, not a flag."""
    wider = floors.wider_replica(facts, floor)
    if wider is None:
        return [], []
    replicas, tp = c.data_parallel_size(facts), floor.tensor_parallel
    gpus = replicas * tp
    evidence = [
        floors.evidence(f"decode floor at TP {wider.tensor_parallel}", wider.floor.step_s, wider.floor.describe())
    ]
    links = f"{wider.floor.allreduces} all-reduces per step over {wider.floor.interconnect}"
    widen = ConfigChange(
        flag="--tensor-parallel-size",
        current=str(tp),
        proposed=str(wider.tensor_parallel),
        reason=f"the decode runs at its bandwidth floor: {wider.describe()}",
        cost=f"{wider.idle_gpus} more GPUs (idle, of the {c.gpu_count(facts)} --gpus counts); {links}"
        if wider.idle_gpus
        else links,
    )
    if wider.idle_gpus:  # the same replicas, onto idle GPUs
        return [widen], evidence
    regroup = ConfigChange(
        flag="--data-parallel-size",
        current=str(replicas),
        proposed=str(wider.replicas),
        reason=f"keeps all {gpus} GPUs busy as replicas of TP {wider.tensor_parallel}",
        cost="each replica carries twice the requests",
    )
    return [widen, regroup], evidence


ALERT_ITL = Alert(
    name="VllmInterTokenLatencyHigh",
    expr=latency_over_slo(0.99, c.ITL, "5m"),
    for_="5m",
    severity=Severity.HIGH,
    description="{{ $labels.instance }} ({{ $labels.model_name }}): ITL p99 {{ $value | humanizeDuration }} "
    "over the target {slo_s} s.",
    slo="itl",
)

RULE_ITL_LOAD = Rule(
    code="OP-5.4",
    title="ITL high under load",
    category=Category.LATENCY,
    check=_check_itl_under_load,
    alerts=(ALERT_ITL,),
    needs=("window",),
    page=RulePage(
        checks=f"Windowed ITL p99 above the ITL target (default {c.DEFAULT_ITL_SLO_S:g} s) with {LOADED_RUNNING}+ "
        "requests running per engine; then whether even that p99 is within "
        f"{floors.AT_FLOOR:g}x the decode step's bandwidth floor (weights plus the batch's KV read, "
        "docs/triage.md), when model and hardware are known.",
        why="Each decode step also carries prefill chunks of up to --max-num-batched-tokens tokens; large chunks "
        "and large batches make every step slower.",
        example=f"ITL p99 0.31 s > {c.DEFAULT_ITL_SLO_S:g} s, 180 running, --max-num-batched-tokens 8192 -> "
        f"{c.DEFAULT_MAX_NUM_BATCHED_TOKENS}.",
        fix=f"--max-num-batched-tokens {c.DEFAULT_MAX_NUM_BATCHED_TOKENS} when the window's p99 prompt or p99 step "
        "is above it (a smaller budget shortens only the steps that carry a long prefill; with neither histogram "
        "it is proposed anyway); cap --max-num-seqs; more replicas. At "
        "the floor, on --data-parallel-size replicas over NVLink: the same GPUs as half as many replicas of twice "
        "the --tensor-parallel-size, when that replica's floor (twice the batch, half the weights per GPU) is at "
        f"most {floors.WIDER_FLOOR_SHARE:.0%} of today's; a lone replica is widened so onto GPUs --gpus counts "
        "idle, carrying its own batch.",
        limits="Uses p99 across all requests; one long prefill per window is enough to move it. At the floor "
        "(long outputs, long contexts, a large batch) the finding proposes no scheduling flag: the step is the "
        "physics of the work; only a wider replica reads less per GPU (a weight-bound step nearly halves, a "
        "KV-bound one does not move, and the floor says which). With a ramp and --model/--gpu, triage prices "
        "every layout of the GPUs and keeps the one that carries most within the SLOs (docs/triage.md).",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


# --- OP-5.5 ITL high with a single request -----------------------------------------------------


def _check_itl_single_user(facts: Facts) -> list[Finding]:
    itl, run = signals.quantile(facts, c.ITL, "p50"), signals.running(facts)
    slo = c.itl_slo(facts)
    if itl is None or run is None or run.value > c.data_parallel_size(facts) or itl.value <= slo:
        return []
    link = facts.hardware.interconnect if facts.hardware else None
    floor = floors.decode_floor(facts)
    # At its floor (all-reduces included) a lone decode is the hardware's physics: splitting the
    # weights over fewer GPUs would read more bytes per GPU, so no parallelism change is proposed.
    at_floor = floor is not None and itl.value <= floors.AT_FLOOR * floor.step_s
    changes: list[ConfigChange] = []
    wider: list[Evidence] = []
    if c.tensor_parallel_size(facts) > 1 and link == "pcie" and not at_floor:
        changes, _ = c.pcie_tp_changes(facts, "TP all-reduces over PCIe dominate a single decode")
    elif at_floor:
        changes, wider = wider_tp_changes(facts, floor)
    physics = floors.describe_multiple(itl.value, floor.step_s, "bandwidth") if floor else ""
    return [
        RULE_ITL_SINGLE.finding(
            Severity.MEDIUM,
            f"ITL p50 {fmt(itl.value, 3)} s{physics} > {fmt(slo, 3)} s with {fmt(run.value)} request running"
            + (": what the memory bandwidth allows, not the server" if at_floor else ""),
            evidence=[c.over(itl, slo), run.evidence, *wider],
            changes=changes,
            confidence=0.6,
            actions=[
                "Single-stream decode is memory-bandwidth bound: a faster GPU, FP8 weights, or speculative "
                "decoding (OP-6) lower it."
            ],
            summary="Even alone, a request decodes slowly: bandwidth or interconnect, not load.",
        )
    ]


RULE_ITL_SINGLE = Rule(
    code="OP-5.5",
    title="ITL high with a single request",
    category=Category.LATENCY,
    check=_check_itl_single_user,
    needs=("window",),
    page=RulePage(
        checks="Windowed ITL p50 above the ITL target with at most one request running per engine (vLLM sums "
        "its --data-parallel-size engines' gauges).",
        why="One sequence's decode reads all weights per token: it is bound by memory bandwidth, or by TP "
        "all-reduces over PCIe.",
        example="ITL p50 0.12 s with 1 running on TP=2 over PCIe -> --tensor-parallel-size 1 --data-parallel-size 2.",
        fix="Avoid TP over PCIe; faster GPU; FP8 weights; speculative decoding; at the floor, with "
        "--data-parallel-size replicas over NVLink, replicas of twice the --tensor-parallel-size.",
        limits="Needs a quiet window; a window that mixes load levels blurs it. Within "
        f"{floors.AT_FLOOR:g}x the bandwidth floor it proposes no smaller TP (fewer GPUs would read more bytes "
        "each); it proposes a larger one only by regrouping replicas the server already has, when that "
        f"replica's floor is at most {floors.WIDER_FLOOR_SHARE:.0%} of today's.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


# --- OP-5.7 long prompts need several prefill steps --------------------------------------------


def _check_long_prompts(facts: Facts) -> list[Finding]:
    prompt = c.prompt_p95(facts)
    current = c.batched_tokens(facts)
    if prompt is None or prompt.value <= current or current >= MAX_BATCHED_TOKENS_CAP:
        return []
    steps = math.ceil(prompt.value / current)
    return [
        RULE_LONG_PROMPTS.finding(
            Severity.LOW,
            f"p95 prompt {fmt(prompt.value)} tokens > --max-num-batched-tokens {current} ({steps} prefill steps)",
            evidence=[prompt.evidence.model_copy(update={"threshold": current, "comparison": ">"})],
            changes=[_batched_tokens_up(facts, f"a p95 prompt needs {steps} steps to prefill")],
            confidence=0.5,
            summary="Long prompts are prefilled in chunks over several steps, adding to their TTFT.",
        )
    ]


RULE_LONG_PROMPTS = Rule(
    code="OP-5.7",
    title="long prompts need several prefill steps",
    category=Category.LATENCY,
    check=_check_long_prompts,
    needs=("window", "workload"),
    page=RulePage(
        checks="p95 prompt tokens (vllm:request_prompt_tokens window, else workload) above --max-num-batched-tokens.",
        why="Chunked prefill splits a prompt into steps of the batched-token budget; each adds a step to TTFT.",
        example=f"p95 prompt 6,000 > {c.DEFAULT_MAX_NUM_BATCHED_TOKENS} -> 3 steps; --max-num-batched-tokens 8192.",
        fix="Raise --max-num-batched-tokens towards the p95 prompt if ITL allows.",
        limits="Low severity on its own; OP-5.1 raises it when TTFT is actually high.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


# --- OP-5.10 TTFT tail driven by long prompts --------------------------------------------------


def _check_long_tail(facts: Facts) -> list[Finding]:
    """TTFT's tail, not its body, is slow, and prompt lengths have a long tail too: long requests cause it."""
    ttft_50, ttft_99 = signals.quantile(facts, c.TTFT, "p50"), signals.quantile(facts, c.TTFT, "p99")
    prompt_50 = signals.quantile(facts, c.PROMPT_TOKENS, "p50")
    prompt_99 = signals.quantile(facts, c.PROMPT_TOKENS, "p99")
    if None in (ttft_50, ttft_99, prompt_50, prompt_99) or ttft_50.value <= 0 or prompt_50.value <= 0:
        return []
    ttft_ratio, prompt_ratio = ttft_99.value / ttft_50.value, prompt_99.value / prompt_50.value
    if ttft_99.value <= c.ttft_slo(facts) or ttft_ratio < TAIL_RATIO or prompt_ratio < PROMPT_TAIL_RATIO:
        return []
    evidence = [
        c.over(ttft_99, c.ttft_slo(facts)),
        Evidence(
            source=ttft_50.evidence.source,
            name="TTFT p99 / p50",
            value=round(ttft_ratio, 1),
            threshold=TAIL_RATIO,
            comparison=">=",
        ),
        Evidence(
            source=prompt_50.evidence.source,
            name="prompt tokens p99 / p50",
            value=round(prompt_ratio, 1),
            threshold=PROMPT_TAIL_RATIO,
            comparison=">=",
        ),
    ]
    changes = _long_prefill_threshold(facts, prompt_50.value)
    return [
        RULE_LONG_TAIL.finding(
            Severity.MEDIUM,
            f"TTFT p99 {fmt(ttft_99.value)} s is {ttft_ratio:.0f}x p50 while prompts p99 are "
            f"{prompt_ratio:.0f}x p50 ({fmt(prompt_99.value)} tokens)",
            evidence=evidence,
            changes=changes,
            confidence=0.6,
            summary="The slowest first tokens go with the longest prompts, not with load.",
            actions=["Serve very long prompts from a separate pool, or cap prompt length for interactive traffic."],
        )
    ]


def _long_prefill_threshold(facts: Facts, prompt_p50: float) -> list[ConfigChange]:
    """--long-prefill-token-threshold at the next power of two above twice the median prompt, on the vLLM
    releases this servops proposes it for (0.32 and later): prompts above it are the tail, and vLLM limits
    how many of those prefill at once so they stop delaying the rest."""
    version = c.vllm_version(facts)
    if version is None or version < (0, 32):
        return []
    return [
        ConfigChange(
            flag="--long-prefill-token-threshold",
            current="0",
            proposed=str(c.next_power_of_two(prompt_p50 * 2)),
            reason="prompts above this count as long and are limited in how many prefill "
            "at once, so they stop delaying everyone else",
            cost="longer TTFT for long prompts",
        )
    ]


RULE_LONG_TAIL = Rule(
    code="OP-5.10",
    title="TTFT tail driven by long prompts (sequence-length correlation)",
    category=Category.LATENCY,
    check=_check_long_tail,
    needs=("window",),
    page=RulePage(
        checks=f"Over the window: TTFT p99 above target and >= {TAIL_RATIO:g}x its p50, while "
        f"vllm:request_prompt_tokens p99 is >= {PROMPT_TAIL_RATIO:g}x its p50.",
        why="When the TTFT body is fast but its tail is slow and prompt lengths have a matching tail, the slow "
        "first tokens belong to long prompts (and the short prompts queued behind their prefill).",
        example="TTFT p50 0.3 s, p99 6.1 s; prompt p50 900, p99 14,000 tokens -> --long-prefill-token-threshold 2048.",
        fix="vLLM 0.32+: --long-prefill-token-threshold (limits concurrent long prefills); otherwise a separate "
        "pool for long prompts, or cap prompt length for interactive traffic.",
        limits="A correlation of two distributions over one window, not per request; needs the prompt-tokens "
        "histogram (all V1 versions have it).",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


RULES: list[Rule] = [RULE_TTFT, RULE_ITL_LOAD, RULE_ITL_SINGLE, RULE_LONG_PROMPTS, RULE_LONG_TAIL]
