"""OP-5.17: decoding slower than the slowest GPU could read the model's weights: the GPU itself.

Why a rule of its own: OP-5.13 compares decode with the floor of the GPU the server runs on, from latency
histograms; a pasted complaint often has neither, only stats lines ("Avg generation throughput: 0.8
tokens/s, Running: 1 reqs") and a model name. Each decode step reads every weight once, so one sequence
cannot decode slower than the weights' bytes over the memory bandwidth unless the GPU is not doing the work
at its speed. Below even the slowest GPU vLLM serves on, no launch flag explains it: eager mode costs
milliseconds of kernel launches per step, not seconds. What does is the GPU: an Xid error that left it
needing a reset (vllm#8847: "Reset Required: Yes" in `nvidia-smi -q`, 0.8 tokens/s for an 8B model, 20
after), clocks throttled by power or heat, another process on it, or weights offloaded to the CPU.
"""

from __future__ import annotations

import re
from statistics import median

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Evidence, Finding, Rule, RulePage, Severity

# Below every GPU vLLM serves on (the slowest in advisor/catalog/gpus.py, an L4, reads 300 GB/s; a T4 320):
# a floor computed with it is one no working GPU misses.
SLOWEST_GPU_GBPS = 150.0
FAR_BELOW = 10.0  # decode at least this many times slower than that floor
# Without the model's size: no GPU servops knows takes longer to read its whole memory (an L4: 22 GiB at 300
# GB/s, 0.08 s; a test holds every catalog GPU under it), and no model's weights are more than that memory.
WHOLE_MEMORY_READ_S = 0.1
_GGUF = re.compile(r"gguf", re.IGNORECASE)
MIN_DECODE_LINES = 2  # stats lines of pure decode (no prompt tokens), so it is not one odd interval
WEIGHT_BYTES = {4: 0.5, 8: 1.0, 16: 2.0}
# Parameters in a model's name (`Meta-Llama-3-8B-Instruct`, `Qwen2.5-0.5B`); a mixture of experts decodes
# its active parameters (`Qwen3-30B-A3B`), and a name like `8x7B` does not say them.
_ACTIVE = re.compile(r"(?<![A-Za-z0-9])A(\d+(?:\.\d+)?)B(?![A-Za-z])")
_PARAMS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[Bb](?![A-Za-z])")
_EXPERTS = re.compile(r"\d+x\d+(?:\.\d+)?[Bb]", re.IGNORECASE)
_BITS = (
    (re.compile(r"awq|gptq|int4|4bit|4-bit|q4|nf4|w4a", re.IGNORECASE), 4),
    (re.compile(r"int8|8bit|fp8|w8a", re.IGNORECASE), 8),
)


def _check_slow_gpu(facts: Facts) -> list[Finding]:
    if c.on_cpu_backend(facts):
        return []
    every = c.stats_lines(facts)
    # beside a long chunked prefill, decode is slow for another reason (OP-5.23)
    lines = [e for i, e in enumerate(every) if _pure_decode(e) and c.long_prefill_beside(facts, every, i) is None]
    if len(lines) < MIN_DECODE_LINES:
        return []
    weights = _weight_bytes(facts)
    per_sequence = median((e.generation_throughput_tps or 0.0) / (e.running or 1) for e in lines)
    step_s = 1.0 / per_sequence
    floor_s = weights / (SLOWEST_GPU_GBPS * 1e9) if weights is not None else WHOLE_MEMORY_READ_S
    if step_s < FAR_BELOW * floor_s:
        return []
    times = step_s / floor_s
    model = facts.config.model if facts.config else None
    if weights is not None:
        title = (
            f"{per_sequence:.2g} tokens/s per sequence: {times:.0f}x slower than even a {SLOWEST_GPU_GBPS:.0f} GB/s "
            "GPU reads the weights; check the GPU itself"
        )
        read = (
            f"Each decode step reads the model's {weights / 1e9:.1f} GB of weights (per GPU): {floor_s * 1e3:.0f} ms "
            "on a GPU slower than any vLLM serves on."
        )
    else:
        title = (
            f"{per_sequence:.2g} tokens/s per sequence: {times:.0f}x slower than any GPU reads its whole memory; the "
            "GPU, offloaded weights or a slow quantization kernel"
        )
        read = (
            "Each decode step reads the model's weights once, and no GPU servops knows takes over "
            f"{floor_s:g} s to read its whole memory."
        )
    return [
        RULE_SLOW_GPU.finding(
            Severity.HIGH,
            title,
            summary=f"{read} The stats lines show {step_s:.2f} s per token per sequence, so the work is not running "
            "at the GPU's speed; no launch flag costs this much (eager mode adds milliseconds of kernel launches per "
            "step, not seconds).",
            evidence=[_evidence(lines[-1], per_sequence), _floor_evidence(model, weights, floor_s)],
            actions=_actions(facts, weights is None),
            confidence=0.6 if weights is not None else 0.5,
        )
    ]


def _actions(facts: Facts, model_unknown: bool) -> list[str]:
    actions = [
        "Check the GPU itself with `nvidia-smi -q`: 'Reset Required: Yes' (an Xid error left it needing a reset: "
        "reset the GPU or reboot the node), clocks held down ('Clocks Event Reasons' / throttle: power, thermal), "
        "ECC errors, and other processes using it."
    ]
    if facts.config is not None and _offloads(facts.config.flags.get("--cpu-offload-gb")):
        actions.append("--cpu-offload-gb moves weights across PCIe every step: lower it, or serve on more GPUs.")
    quantization = (
        "If the weights are GGUF (vLLM's documentation calls its GGUF support highly experimental and "
        "under-optimized) or another quantization without fast kernels on this GPU, serve the model's FP16 weights "
        "to compare."
    )
    if _gguf(facts):
        actions.insert(0, quantization)
    elif model_unknown:
        actions.append(quantization)
    return actions


def _gguf(facts: Facts) -> bool:
    config = facts.config
    return config is not None and bool(_GGUF.search(f"{config.quantization or ''} {config.model or ''}"))


def _offloads(value: str | None) -> bool:
    try:
        return float(value or 0) > 0
    except ValueError:
        return False


def _pure_decode(event: LogEvent) -> bool:
    """A stats line of decoding only: sequences running, tokens generated, no prompt tokens in the interval."""
    return (event.running or 0) >= 1 and (event.generation_throughput_tps or 0) > 0 and event.prompt_throughput_tps == 0


def _weight_bytes(facts: Facts) -> float | None:
    """Bytes of weights one GPU reads per decode step: what vLLM measured loading them (c.weights_gib), else the
    catalog model's (active) parameters, else the parameters its name states, at the bytes its quantization (or
    its name) says; split over tensor parallel."""
    measured = c.weights_gib(facts)
    if measured:
        return measured * 2**30
    model, config = facts.model, facts.config
    params = (model.active_params_billion or model.params_billion) if model else _params_from_name(config)
    if not params:
        return None
    bits = _bits(facts)
    return params * 1e9 * WEIGHT_BYTES[bits] / c.tensor_parallel_size(facts)


def _params_from_name(config) -> float | None:
    name = (config.model or "") if config else ""
    active = _ACTIVE.search(name)
    if active:
        return float(active.group(1))
    if _EXPERTS.search(name):
        return None
    stated = _PARAMS.findall(name)
    return float(stated[-1]) if stated else None


def _bits(facts: Facts) -> int:
    config, model = facts.config, facts.model
    said = " ".join(
        filter(
            None,
            [
                config.quantization if config else None,
                model.prequantized if model else None,
                config.model if config else None,
            ],
        )
    )
    return next((bits for pattern, bits in _BITS if pattern.search(said)), 16)


def _evidence(line: LogEvent, per_sequence: float) -> Evidence:
    return c.log_evidence(line, name="generation throughput per running sequence", value=round(per_sequence, 3))


def _floor_evidence(model: str | None, weights: float | None, floor_s: float) -> Evidence:
    described = (
        f"{weights / 1e9:.1f} GB of weights{f' ({model})' if model else ''} / {SLOWEST_GPU_GBPS:.0f} GB/s"
        if weights is not None
        else "the longest any GPU servops knows takes to read its whole memory (the model's size is unknown)"
    )
    return Evidence(
        source="advisor",
        name="decode floor on the slowest GPU",
        value=round(floor_s, 4),
        unit="s",
        description=described,
    )


RULE_SLOW_GPU = Rule(
    code="OP-5.17",
    title=f"decode {FAR_BELOW:.0f}x slower than the slowest GPU reads the weights",
    category=Category.LATENCY,
    check=_check_slow_gpu,
    needs=("events",),
    page=RulePage(
        checks=f"At least {MIN_DECODE_LINES} stats lines of pure decode (requests running, no prompt tokens): "
        "generation throughput per running sequence, against the time to read the model's weights (per GPU, at "
        f"the bytes of its quantization) at {SLOWEST_GPU_GBPS:.0f} GB/s, below every GPU vLLM serves on. "
        f"{FAR_BELOW:.0f}x slower or more is a finding. The model's size comes from the catalog, else from its "
        f"name (`8B`, `A3B` for a mixture of experts' active parameters); without it, the floor is the longest any "
        f"GPU servops knows takes to read its whole memory ({WHOLE_MEMORY_READ_S:g} s).",
        why="A decode step reads every weight once; slower than the slowest GPU could read them, the GPU is not "
        "working at its speed, and no vLLM flag costs that much.",
        example="Meta-Llama-3-8B-Instruct at 0.8 tokens/s with one request running; `nvidia-smi -q` showed "
        "'Reset Required: Yes', and after the reset it decoded 20 tokens/s (vllm#8847).",
        fix="Check the GPU: reset it if nvidia-smi asks, look for throttling, ECC errors and other processes; "
        "weights offloaded to the CPU cross PCIe every step; GGUF's kernels (experimental in vLLM) or another "
        "quantization without fast kernels: compare with the FP16 weights.",
        limits="The floor is deliberately low (any GPU, at its bandwidth, batch 1), so only a GPU that is broken, "
        "throttled, shared or bypassed trips it; slowness within 10x of it is OP-5.13's, on the server's own GPU. "
        "A model whose size is neither in the catalog nor in its name is held to the whole-memory floor, which only "
        "a decode ten times slower than reading a whole GPU trips.",
        references=["https://github.com/vllm-project/vllm/issues/8847", "docs/triage.md#physical-floors"],
    ),
)

RULES: list[Rule] = [RULE_SLOW_GPU]
