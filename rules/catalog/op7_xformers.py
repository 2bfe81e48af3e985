"""OP-7.77: xFormers found no attention kernel for the inputs vLLM gave it.

Why a rule of its own: vLLM used xFormers' memory-efficient attention for its V0 engine on GPUs its FlashAttention
build does not cover (compute capability below 8.0), for encoder-only and embedding models, and for vision
encoders; xFormers' dispatcher raises `NotImplementedError: No operator found for `memory_efficient_attention_
forward` with inputs:` and then lists, kernel by kernel, why each refused (xformers/ops/fmha/dispatch.py and
common.py). The reasons are the diagnosis, and three recur in vLLM threads: `xFormers wasn't build with CUDA
support` (the xFormers installed has no compiled kernels this PyTorch can load: a wheel built for another PyTorch
or CUDA, or a build without CUDA; vllm#11653 and facebookresearch/xformers#1191 show it under vLLM 0.6.4 and 0.6.6),
`dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})` (vllm#11653 ran an embedding model with
`dtype="float32"`), and `requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)`
(the flash kernels need Ampere; bfloat16 needs it too). A line alone names none of them, so the finding says where
they are and what each one means.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The reasons xFormers prints under the error, read from the whole text: a traceback's message lines may come joined
# to the error's own event, so the rule reads them from there as well as from lines of their own.
_REASONS = {
    "no_cuda_build": re.compile(r"xFormers wasn't build with CUDA support"),
    "dtype": re.compile(r"dtype=torch\.(?P<value>\w+) \(supported: \{torch\."),
    "capability": re.compile(r"but your GPU has capability \((?P<value>\d+, \d+)\)"),
}


def _check_xformers(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.XFORMERS_NO_KERNEL)
    head = next((e for e in events if e.message == "no_operator"), None)
    if head is None:
        return []
    text = " ".join(e.raw for e in events)
    reasons: dict[str, str] = {}
    evidence = [c.log_evidence(head, name="xformers", value="No operator found for memory_efficient_attention")]
    for name, pattern in _REASONS.items():
        found = pattern.search(text)
        if found is not None:
            reasons[name] = (found.groupdict().get("value") or "").replace(", ", ".")
            evidence.append(c.log_evidence(head, name="xformers' reason", value=found.group(0)))
    changes, actions = _remedies(reasons)
    return [
        RULE_XFORMERS.finding(
            Severity.HIGH,
            _title(reasons),
            summary="vLLM called xFormers' memory-efficient attention (its V0 engine below compute capability 8.0, "
            "encoder and embedding models, vision encoders) and xFormers had no kernel for the inputs. It lists why "
            "each kernel refused under the error: its build's CUDA kernels missing, a dtype the kernels do not take, "
            "or a GPU too old for them.",
            evidence=evidence,
            changes=changes[:1],
            alternatives=changes[1:],
            actions=actions,
            confidence=0.75 if reasons else 0.55,
        )
    ]


def _title(reasons: dict[str, str]) -> str:
    if "no_cuda_build" in reasons:
        return "xFormers has no CUDA kernels in this install: it was built for another PyTorch or CUDA, or without CUDA"
    if "dtype" in reasons:
        return f"xFormers' attention kernels do not take {reasons['dtype']}: a half-precision --dtype does"
    if "capability" in reasons:
        return f"xFormers' kernels refuse this GPU (compute capability {reasons['capability']})"
    return "xFormers found no attention kernel for these inputs: the reasons it printed under the error say why"


def _remedies(reasons: dict[str, str]) -> tuple[list[ConfigChange], list[str]]:
    """A half-precision dtype when the inputs were another; the install's kernels; the reasons when none was read."""
    changes: list[ConfigChange] = []
    actions: list[str] = []
    dtype = reasons.get("dtype")
    if dtype in ("float32", "bfloat16"):
        proposed = "float16" if dtype == "bfloat16" or "capability" in reasons else "bfloat16"
        changes.append(
            ConfigChange(
                flag="--dtype",
                current=dtype,
                proposed=proposed,
                reason=f"xFormers' kernels listed {proposed} among the dtypes they take",
                cost="float16 can overflow where the model was trained in bfloat16"
                if proposed == "float16"
                else "outputs differ slightly from float32's (half the memory for weights and activations)",
            )
        )
    if "no_cuda_build" in reasons or not reasons:
        actions.append(
            "`python -m xformers.info` lists which kernels this install can run; `unavailable` for all of them means "
            "its compiled part did not load: install the xFormers built for the installed PyTorch (vLLM's release "
            "pins both; installing vLLM into a fresh environment brings the pair), not a newer or older one."
        )
    if "capability" in reasons or not reasons:
        actions.append(
            "On a GPU below compute capability 8.0 the flash kernels are out and only float16 works: --dtype float16; "
            "a GPU of 8.0 or later can use another attention backend (VLLM_ATTENTION_BACKEND=FLASH_ATTN)."
        )
    if not reasons:
        actions.insert(
            0,
            "Read the lines under the error: xFormers names, kernel by kernel, what refused (`wasn't build with CUDA "
            "support`, `dtype=…`, `requires device with capability …`, a head size).",
        )
    return changes, actions


RULE_XFORMERS = Rule(
    code="OP-7.77",
    title="xFormers found no attention kernel for vLLM's inputs",
    category=Category.STARTUP,
    check=_check_xformers,
    needs=("events",),
    page=RulePage(
        checks="xFormers' `No operator found for `memory_efficient_attention_forward` with inputs:` and the reasons "
        "it lists under it (`xFormers wasn't build with CUDA support`, `dtype=torch.float32 (supported: …)`, "
        "`requires device with capability > (8, 0) but your GPU has capability (7, 5)`).",
        why="vLLM's xFormers paths (V0 below capability 8.0, encoder and embedding models, vision encoders) fail when "
        "the install has no CUDA kernels for this PyTorch, the dtype is one the kernels do not take, or the GPU is "
        "too old for them.",
        example='vllm#11653: Qwen2-1.5B as an embedding model with `dtype="float32"` on 0.6.4: `dtype=torch.float32 '
        "(supported: {torch.float16, torch.bfloat16})` and `xFormers wasn't build with CUDA support`.",
        fix="A half-precision --dtype the kernels listed; the xFormers built for the installed PyTorch (`python -m "
        "xformers.info`); float16 or another backend by the GPU's capability.",
        limits="The error line alone says none of the reasons; the finding then lists them for the reader to match.",
        references=[
            "https://github.com/vllm-project/vllm/issues/11653",
            "https://github.com/facebookresearch/xformers/issues/1191",
            "https://github.com/facebookresearch/xformers/issues/1263",
        ],
    ),
)

RULES: list[Rule] = [RULE_XFORMERS]
