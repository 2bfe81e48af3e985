"""OP-7.76: a TPU ran out of its high-bandwidth memory (HBM) for a compiled program or a buffer.

Why a rule of its own: on a TPU, vLLM sizes its KV cache from --gpu-memory-utilization of the chip's HBM, as on a
GPU, but the programs XLA compiles for each batch shape are loaded into HBM too, with their scratch buffers, and
they are loaded after the KV cache has taken its share (at warm-up, while vLLM compiles every shape, or at the first
batch of a new one). When the rest does not hold a program, XLA says `RESOURCE_EXHAUSTED: Error loading program
'<name>': Attempting to reserve <size> at the bottom of memory. That was not possible. There are <size> free`, or
`Error allocating device buffer: Attempting to allocate <size>. …` for a buffer, with nothing of vLLM's in the line.
AI-Hypercomputer/tpu-recipes#151 (vLLM's GPT-OSS recipe on TPU7x, failing at start-up in about two of three tries):
lowering --gpu-memory-utilization from 0.93 to 0.83 let the server start every time; vllm#16521 met it during
warm-up (`compile_or_warm_up_model`) with Gemma-3 on a TPU. A program larger than the whole chip is refused
earlier, by the compiler (`XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 21.95G of
15.48G hbm.`, LargeWorldModel/LWM#60): no share frees that, only smaller batch shapes or more chips. The scalar
memory (SMEM) refusal of the attention kernel is OP-7.64's.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The step down the tpu-recipes#151 reporter took (0.93 to 0.83), and the share below which a lower one is no longer
# proposed: the KV cache would be too small to serve from.
UTIL_STEP = 0.10
LOWEST_UTIL = 0.5


def _check_tpu_hbm(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TPU_HBM_EXHAUSTED)
    if not events:
        return []
    event = events[0]
    if "memory space vmem" in (event.message or ""):
        return [_kernel_larger_than_vmem(event)]
    if event.total_gib is not None or "memory space hbm" in (event.message or ""):
        return [_program_larger_than_the_chip(facts, event)]
    return [_program_beside_the_kv_cache(facts, event)]


def _kernel_larger_than_vmem(event: LogEvent) -> Finding:
    """A Pallas kernel's blocks do not fit the core's vector memory (VMEM): a limit the kernel's code sets, which no
    HBM share or batch flag moves (vllm-project/tpu-inference PR #508 raised its ragged paged attention kernel's)."""
    return RULE_TPU_HBM.finding(
        Severity.CRITICAL,
        "a TPU kernel's blocks do not fit the core's vector memory (VMEM): the kernel's limit, not the HBM the KV "
        "cache shares",
        summary="Each TensorCore has a small vector memory (VMEM) that a Pallas kernel stages its blocks in, up to a "
        "limit the kernel's code sets; a model whose heads and pages make the blocks larger than that stops with "
        "XLA's RESOURCE_EXHAUSTED in memory space vmem. --gpu-memory-utilization and the batch flags size HBM, not "
        "this.",
        evidence=[c.log_evidence(event, name="tpu_vmem", value=event.message)],
        actions=[
            "Upgrade the TPU backend (vllm-project/tpu-inference, or vLLM's own TPU support): its kernels' VMEM limits "
            "and block sizes are tuned per model over releases (PR #508 raised the ragged paged attention kernel's "
            "limit for Mistral-Small-24B and Mixtral-8x7B).",
            "Report the model, TPU generation and the kernel named in the traceback to the TPU backend's tracker if "
            "the newest release still fails.",
        ],
        confidence=0.6,
    )


def _figures(event: LogEvent) -> str:
    asked = f"{event.requested_gib:.2f} GiB" if event.requested_gib is not None else "a program"
    free = f", {event.free_gib:.2f} GiB free" if event.free_gib is not None else ""
    program = f" ({event.component})" if event.component else ""
    return f"XLA could not place {asked}{program} in the TPU's HBM{free}"


def _program_beside_the_kv_cache(facts: Facts, event: LogEvent) -> Finding:
    """Loading or allocating after the KV cache took its share: a smaller share first."""
    evidence = c.log_evidence(event, name="tpu_hbm", value=event.message)
    evidence.description = _figures(event)
    util = c.gpu_memory_utilization(facts)
    changes: list[ConfigChange] = []
    if util - UTIL_STEP >= LOWEST_UTIL:
        changes.append(
            c.util_change(
                facts,
                round(util - UTIL_STEP, 2),
                reason="leave HBM beside the KV cache for XLA's compiled programs and their buffers (tpu-recipes#151: "
                "0.83 started where 0.93 failed)",
                cost="a smaller KV cache: fewer tokens held at once",
            )
        )
    seqs = c.max_num_seqs(facts)
    if seqs and seqs > 1:
        changes.append(c.halved_max_num_seqs(seqs, "smaller padded batch shapes, so smaller programs and buffers"))
    return RULE_TPU_HBM.finding(
        Severity.CRITICAL,
        "the TPU ran out of HBM loading a compiled program: the KV cache's share left too little beside it",
        summary="vLLM gives the KV cache --gpu-memory-utilization of the chip's HBM, as on a GPU; XLA's compiled "
        "programs for each batch shape, and their buffers, are loaded into what is left, at warm-up or at the first "
        "batch of a new shape. One did not fit, so the engine stopped.",
        evidence=[evidence],
        changes=changes[:1],
        alternatives=changes[1:],
        actions=[
            "Lower --gpu-memory-utilization until warm-up completes (tpu-recipes#151: 0.93 to 0.83); XLA's figures "
            "say how much the program lacked.",
            "If it fails while the server runs, at a new batch shape, fewer --max-num-seqs or a smaller "
            "--max-num-batched-tokens make the padded shapes, and so the programs, smaller.",
        ],
        confidence=0.8,
    )


def _program_larger_than_the_chip(facts: Facts, event: LogEvent) -> Finding:
    """The compiler's refusal: the program alone is larger than the chip, whatever the share."""
    evidence = c.log_evidence(event, name="tpu_hbm", value=event.message)
    if event.requested_gib is not None and event.total_gib is not None:
        evidence.description = (
            f"XLA's program needs {event.requested_gib:.2f} GiB of a chip with {event.total_gib:.2f} GiB of HBM"
        )
    tp = c.tensor_parallel_size(facts)
    return RULE_TPU_HBM.finding(
        Severity.CRITICAL,
        "the TPU compiler refused a program larger than the chip's HBM: smaller batch shapes or more chips",
        summary="XLA compiles each program for its shapes and counts the HBM it needs (weights it reads, buffers, "
        "scratch); this one needs more than the chip has, so no --gpu-memory-utilization can make it fit.",
        evidence=[evidence],
        actions=[
            "Make the padded batch shapes smaller: fewer --max-num-seqs, a smaller --max-num-batched-tokens, a "
            "shorter --max-model-len.",
            f"Spread the model over more chips (--tensor-parallel-size above {tp}), or serve a smaller or quantized "
            "model, when its weights alone take most of one chip.",
        ],
        confidence=0.75,
    )


RULE_TPU_HBM = Rule(
    code="OP-7.76",
    title="a TPU ran out of HBM for a compiled program or buffer",
    category=Category.STARTUP,
    check=_check_tpu_hbm,
    needs=("events",),
    page=RulePage(
        checks="XLA's `RESOURCE_EXHAUSTED: Error loading program …: Attempting to reserve … at the bottom of memory. "
        "That was not possible.`, `Error allocating device buffer: Attempting to allocate …`, and `Ran out of "
        "memory in memory space hbm`.",
        why="The KV cache takes --gpu-memory-utilization of the TPU's HBM; XLA's compiled programs and buffers load "
        "into the rest, and a program larger than the chip is refused when compiled.",
        example="`RESOURCE_EXHAUSTED: Error loading program 'jit__multi_slice': Attempting to reserve 6.14G at the "
        "bottom of memory. That was not possible.` (AI-Hypercomputer/tpu-recipes#151: 0.83 started where 0.93 "
        "failed).",
        fix="A lower --gpu-memory-utilization (0.1 less), then fewer --max-num-seqs; for the compiler's refusal, "
        "smaller batch shapes or more chips.",
        limits="The chip's HBM is not in the load-time line, so the step is the thread's 0.1, not a computed share; "
        "the proposal stops at 0.5. OP-7.64 reads the compiler's scalar-memory (SMEM) refusal.",
        references=[
            "https://github.com/AI-Hypercomputer/tpu-recipes/issues/151",
            "https://github.com/vllm-project/vllm/issues/16521",
            "https://github.com/LargeWorldModel/LWM/issues/60",
        ],
    ),
)

RULES: list[Rule] = [RULE_TPU_HBM]
