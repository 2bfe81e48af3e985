"""OP-5.13 and OP-5.14: a server far slower than its physics allows, SLO or not.

The fixed-threshold rules (OP-5.1, OP-5.4, OP-5.5) ask whether a latency is too high for the
user; these ask whether it is too high for the hardware (floors.py). A decode step at 8x its
bandwidth floor under a generous SLO still wastes seven eighths of the GPU, and the cause is
usually nameable: tensor parallel over PCIe, CUDA graphs off, a batch whose per-sequence work
outgrows its memory traffic. The page sits beside its check; thresholds are named constants
formatted into titles and pages.
"""

from __future__ import annotations

import math

from rules import signals
from rules.catalog import common as c
from rules.catalog import floors
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

# From this batch on, per-sequence work (attention, sampling) can outgrow the weight reads.
LARGE_BATCH = 8
# A ramp step with one sequence running whose ITL p50 is at least this share of the batch's: the step costs
# about the same alone as batched, so the batch is not where the time goes.
FLAT_SHARE = 0.75
# Below this the prefill floor is swamped by fixed per-request costs (tokenising, scheduling).
MIN_PREFILL_FLOOR_S = 0.02
FLOORS_DOC = "docs/triage.md#physical-floors"


def _over_floor(signal: signals.Signal, floor_s: float) -> Evidence:
    return signal.evidence.model_copy(
        update={"threshold": round(floors.FAR_ABOVE * floor_s, 6), "comparison": ">", "unit": "s"}
    )


def _itl_alone(facts: Facts) -> float | None:
    """ITL p50 of the ramp's step that ran one sequence at a time (server running mean at most 1.5, or one
    closed-loop stream when the ramp sampled no /metrics); None without such a step."""
    if facts.loadtest is None:
        return None
    for step in facts.loadtest.valid_steps:
        running = step.server_value("running_mean")
        alone = running <= 1.5 if running else (step.offered_unit == "concurrency" and step.offered <= 1)
        if alone and step.itl_s.p50:
            return step.itl_s.p50
    return None


def _decode_cause(facts: Facts, floor: floors.DecodeFloor, itl_s: float) -> tuple[str, list[ConfigChange], list[str]]:
    """The likeliest reason a decode step runs far above its floor, most specific first."""
    if floor.tensor_parallel > 1 and floor.interconnect == "pcie":
        changes, _ = c.pcie_tp_changes(facts, "all-reduces over PCIe dominate every decode step")
        return (
            f"tensor parallel {floor.tensor_parallel} over PCIe: {floor.allreduces} all-reduces per step, "
            f"{floor.allreduce_s * 1e3:.2f} ms at NCCL's best, far more through host memory without P2P",
            changes,
            ["Keep tensor parallelism inside NVLink; across PCIe prefer replicas or pipeline parallelism."],
        )
    if facts.config is not None and facts.config.enforce_eager:
        return (
            "--enforce-eager: every step runs the model uncompiled, op by op from Python, where vLLM's CPU backend "
            "would compile it with torch.compile (inductor)"
            if c.on_cpu_backend(facts)
            else "--enforce-eager: every step launches its kernels one by one instead of replaying a CUDA graph",
            [],
            [
                "Remove --enforce-eager unless a model or debugging need requires it (capture costs start-up time "
                "and some memory; OP-1 reports how much)."
            ],
        )
    return _batch_cause(facts, floor, itl_s) or (
        "the time goes outside the memory traffic: scheduling, sampling, detokenising or kernel launches between steps",
        [],
        [
            "Profile one step (vLLM's --profiler-config / py-spy): look for a CPU-bound API server "
            "(--api-server-count) or an async scheduler turned off."
        ],
    )


def _batch_cause(
    facts: Facts, floor: floors.DecodeFloor, itl_s: float
) -> tuple[str, list[ConfigChange], list[str]] | None:
    """A large batch's reason: a fixed per-step cost when the ramp's one-stream step was as slow, else the batch."""
    if floor.batch < LARGE_BATCH:
        return None
    alone = _itl_alone(facts)
    if alone is not None and alone >= FLAT_SHARE * itl_s:
        return (
            f"the ramp's one-stream step decoded at ITL p50 {fmt(alone, 3)} s, so a step costs about the same for "
            f"one sequence as for {fmt(floor.batch)}: a fixed per-step overhead (scheduling, sampling, kernel "
            "launches), not the batch",
            [],
            [
                "Capping --max-num-seqs would not help: the step barely grows with the batch. Profile one step "
                "(vLLM's --profiler-config / py-spy) for a CPU-bound server or launches a CUDA graph would replay."
            ],
        )
    return (
        f"{fmt(floor.batch)} sequences per step: the per-sequence work (attention, sampling) outgrows the "
        "shared weight reads, so the batch no longer decodes for free",
        [],
        [
            "Cap --max-num-seqs where ITL matters more than throughput (servops predict shows the trade); "
            "FP8 KV (--kv-cache-dtype fp8) halves the attention's memory traffic."
        ],
    )


def _check_decode_floor(facts: Facts) -> list[Finding]:
    floor = floors.decode_floor(facts)
    itl = signals.quantile(facts, c.ITL, "p50")
    if floor is None or itl is None or itl.value <= floors.FAR_ABOVE * floor.step_s:
        return []
    times = floors.multiple(itl.value, floor.step_s)
    cause, changes, actions = _decode_cause(facts, floor, itl.value)
    p99 = signals.quantile(facts, c.ITL, "p99")
    over_slo = p99 is not None and p99.value > c.itl_slo(facts)
    # MEDIUM even over the ITL target: OP-5.4/OP-5.5 carry the violation, this finding its cause.
    return [
        RULE_DECODE_FLOOR.finding(
            Severity.MEDIUM,
            f"ITL p50 {fmt(itl.value, 3)} s = {times:.1f}x the decode floor {floor.step_s * 1e3:.2f} ms ({cause})",
            evidence=[
                _over_floor(itl, floor.step_s),
                floors.evidence("decode step floor", floor.step_s, floor.describe()),
            ],
            changes=changes,
            actions=actions,
            confidence=0.6 if facts.memory and facts.memory.weights_gib else 0.5,
            summary=f"Each decode step takes {times:.1f}x what reading the weights and KV cache needs"
            + ("" if over_slo else ", though ITL is within its target")
            + ".",
        )
    ]


RULE_DECODE_FLOOR = Rule(
    code="OP-5.13",
    title="decode far above its bandwidth floor",
    category=Category.LATENCY,
    check=_check_decode_floor,
    needs=("window",),
    page=RulePage(
        checks=f"Windowed ITL p50 above {floors.FAR_ABOVE:g}x the decode step's physical floor, whatever the ITL "
        "target (MEDIUM: over the target OP-5.4/OP-5.5 report the violation, this rule its cause). The floor "
        "is (weight bytes + running x mean context x KV bytes per token) per GPU over its memory bandwidth, "
        f"plus tensor parallelism's all-reduces ({floors.ALLREDUCES_PER_LAYER} per layer) over the "
        "interconnect.",
        why="A decode step cannot beat its memory traffic; far above it the GPU waits on something else. The cause "
        f"is named in order: tensor parallel over PCIe ({floors.ALLREDUCES_PER_LAYER} all-reduces per layer, "
        "each far slower than NCCL's best case when they go through host memory), --enforce-eager, a batch of "
        f"{LARGE_BATCH}+ whose per-sequence work outgrows the weight reads (unless a ramp (--ramp) shows one "
        f"sequence decoding at {FLAT_SHARE:.0%}+ of that ITL: then the step is fixed overhead), else per-step "
        "overhead outside the GPU.",
        example="Llama-3.1-8B on one H100, 1 running: floor 4.8 ms, ITL p50 0.040 s = 8.3x -> look for eager mode "
        f"or a CPU-bound server, although 40 ms is under a {c.DEFAULT_ITL_SLO_S * 1e3:g} ms ITL target.",
        fix="Per cause: TP inside NVLink or replicas instead; drop --enforce-eager; cap the batch or FP8 KV; profile.",
        limits="Needs the model and the GPU (catalog, --model/--gpu), or for a CPU server the host measured by "
        "`servops probe` (--host-profile); peak bandwidth is a bound, not a promise: "
        f"real kernels reach 60-80 % of it, hence the {floors.FAR_ABOVE:g}x margin. Formulas: {FLOORS_DOC}.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


def _check_prefill_floor(facts: Facts) -> list[Finding]:
    prefill = floors.prefill_floor(facts)
    decode = floors.decode_floor(facts)
    ttft, queue = signals.quantile(facts, c.TTFT, "p50"), signals.waiting(facts)
    if prefill is None or ttft is None or (queue is not None and queue.value >= 1):
        return []
    if prefill.step_s < MIN_PREFILL_FLOOR_S:
        return []
    floor_s = prefill.step_s + (decode.step_s if decode else 0.0)
    if ttft.value <= floors.FAR_ABOVE * floor_s:
        return []
    budget = c.batched_tokens(facts)
    chunks = math.ceil(prefill.prompt_tokens / budget)
    if chunks > 1 and decode is not None and ttft.value <= floors.FAR_ABOVE * (prefill.step_s + chunks * decode.step_s):
        cause = (
            f"the median prompt is prefilled in {chunks} steps of --max-num-batched-tokens {budget}, "
            "each paying a full weight read"
        )
    else:
        cause = "prefill runs far below the device's compute: small chunks shared with many decodes, or eager kernels"
    return [
        RULE_PREFILL_FLOOR.finding(
            Severity.MEDIUM,
            f"TTFT p50 {fmt(ttft.value, 3)} s = {floors.multiple(ttft.value, floor_s):.1f}x the prefill floor "
            f"{floor_s * 1e3:.1f} ms with nothing queued ({cause})",
            evidence=[_over_floor(ttft, floor_s), floors.evidence("prefill floor", prefill.step_s, prefill.describe())],
            confidence=0.5,
            summary="First tokens take far longer than the prompt's arithmetic needs, and no queue explains it.",
            actions=[
                "Compare with OP-5.1 and OP-5.7: a budget that binds chunks long prompts; a large running batch "
                "shares every step."
            ],
        )
    ]


RULE_PREFILL_FLOOR = Rule(
    code="OP-5.14",
    title="prefill far above its compute floor",
    category=Category.LATENCY,
    check=_check_prefill_floor,
    needs=("window",),
    page=RulePage(
        checks=f"Windowed TTFT p50 with nothing waiting above {floors.FAR_ABOVE:g}x the prefill floor (2 x active "
        "parameters x mean prompt tokens over the tensor-parallel GPUs' dense bf16 FLOPs, plus one decode "
        f"step); only when that floor is at least {MIN_PREFILL_FLOOR_S * 1e3:g} ms.",
        why="Without a queue, first-token time is prefill; far above its arithmetic the prompt is chunked into many "
        "weight-reading steps or shares them with a large batch.",
        example="8B model, 6,000-token prompts, H100: floor 98 ms; TTFT p50 0.9 s with 0 waiting and "
        "--max-num-batched-tokens 512 -> 12 chunks each paying a weight read.",
        fix="Per cause: a larger --max-num-batched-tokens when it binds (OP-5.1), fewer sequences per replica, "
        "prefix caching for shared prompt parts.",
        limits=f"Peak FLOPs are never reached; short prompts are dominated by fixed costs. Formulas: {FLOORS_DOC}.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


RULES: list[Rule] = [RULE_DECODE_FLOOR, RULE_PREFILL_FLOOR]
