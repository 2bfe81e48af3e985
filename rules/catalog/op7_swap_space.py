"""OP-7.73: --swap-space reserves over 40 % of the host's RAM: vLLM's warning, and the value that fits.

Why a rule of its own: V0 engines (vLLM 0.4-0.17 take the flag) keep preempted sequences' KV blocks in host memory,
--swap-space GiB per GPU (4 by default), pinned where it can be. CacheConfig compares that, times the tensor-parallel
size (all ranks assumed on one node), with the host's total RAM: `Too large swap space. X GiB out of the Y GiB total
CPU memory is allocated for the swap space.` is a ValueError at start above 70 %, `Possibly too large swap space.`
the same words as a warning above 40 % (vllm/config.py to 0.10.0, vllm/config/cache.py to 0.17). vLLM's message
names neither the flag's value nor what would fit; the figures it prints give both. On the CPU backend the space is
never allocated (its cache engine raises on swap: the KV cache there is VLLM_CPU_KVCACHE_SPACE), so the warning
alone is not why such a server failed (vllm#19936: the CPU image on a 7.74 GiB Mac). The ValueError is VC-1's (vLLM
refused); VC-1 proposes the value `swap_space_change` computes here, so one reading serves both.
"""

from __future__ import annotations

import math

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import CatalogRef, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

REFUSED = "Too large swap space."  # vLLM's ValueError: VC-1 reads it, with swap_space_change's value
_WARNED = "Possibly too large swap space."


def swap_space_change(ref: CatalogRef, facts: Facts) -> ConfigChange | None:
    """The --swap-space that fits the host vLLM's swap-space message describes; None when the message is another or
    its figures do not read."""
    figures = _figures(ref)
    return _fitting(*figures, c.tensor_parallel_size(facts)) if figures is not None else None


def _fitting(reserved: float, total: float, tp: int) -> ConfigChange:
    """The largest whole GiB per GPU under the warning's share of the host's RAM."""
    fits = max(0, math.floor(vllm_defaults.SWAP_SPACE_WARNED_ABOVE * total / tp + 1e-9))  # at the share: no warning
    return ConfigChange(
        flag="--swap-space",
        current=f"{reserved / tp:g}",
        proposed=str(fits),
        reason=f"keeps the host memory V0 reserves for preempted sequences ({vllm_defaults.SWAP_SPACE_GIB} GiB per GPU "
        f"by default) under {vllm_defaults.SWAP_SPACE_WARNED_ABOVE:.0%} of the host's {total:g} GiB RAM (vLLM refuses "
        f"above {vllm_defaults.SWAP_SPACE_REFUSED_ABOVE:.0%})",
        cost="fewer preempted sequences kept in host memory: the rest are recomputed when resumed; 0 keeps none",
    )


def _figures(ref: CatalogRef) -> tuple[float, float] | None:
    """(GiB reserved, GiB of RAM) as vLLM's swap-space message prints them."""
    if not ref.template.startswith((REFUSED, _WARNED)) or len(ref.captured) != 2:
        return None
    reserved, total = (_gib(value) for value in ref.captured.values())
    if reserved is None or total is None or reserved <= 0 or total <= 0:
        return None
    return reserved, total


def _gib(text: str) -> float | None:
    """A figure as vLLM prints it (`4.00`); None for anything else."""
    try:
        return float(text)
    except ValueError:
        return None


def _check_swap_space(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.VLLM_MESSAGE):
        ref = event.catalog
        figures = _figures(ref) if ref is not None and ref.template.startswith(_WARNED) else None
        if figures is not None:
            change = _fitting(*figures, c.tensor_parallel_size(facts))
            return [_warned(event, change, *figures)]
    return []


def _warned(event: LogEvent, change: ConfigChange, reserved: float, total: float) -> Finding:
    share = reserved / total
    return RULE_SWAP_SPACE.finding(
        Severity.LOW,
        f"--swap-space reserves {reserved:g} GiB of the host's {total:g} GiB RAM ({share:.0%}): vLLM warned and "
        "started",
        summary=f"V0 engines keep preempted sequences' KV blocks in --swap-space GiB of host memory per GPU "
        f"({vllm_defaults.SWAP_SPACE_GIB} by default). vLLM refuses more than "
        f"{vllm_defaults.SWAP_SPACE_REFUSED_ABOVE:.0%} of the host's RAM and warns above "
        f"{vllm_defaults.SWAP_SPACE_WARNED_ABOVE:.0%}; here it is {share:.0%}, so less is left for everything else "
        f"the host runs. {change.proposed} GiB per GPU stays under the warning.",
        evidence=[c.log_evidence(event, name="swap space", value=f"{reserved:g} of {total:g} GiB")],
        changes=[change],
        actions=[
            "On a GPU server this is pinned host memory for V0's preempted sequences: lower --swap-space (0 keeps "
            "no swap; preempted sequences are then recomputed), or give the host (the container's memory limit) "
            "more RAM.",
            "On vLLM's CPU backend the swap space is never allocated (the KV cache there is VLLM_CPU_KVCACHE_SPACE): "
            "this warning is not why such a server failed; read the error after it.",
        ],
        confidence=0.6,
    )


RULE_SWAP_SPACE = Rule(
    code="OP-7.73",
    title="--swap-space above 40 % of the host's RAM: vLLM's warning",
    category=Category.STARTUP,
    check=_check_swap_space,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Possibly too large swap space. X GiB out of the Y GiB total CPU memory is allocated for the "
        "swap space.` warning, with the figures it prints (its `Too large swap space. …` ValueError is VC-1's, which "
        "proposes the same value).",
        why="V0 engines pin --swap-space GiB of host memory per GPU for preempted sequences; vLLM refuses more than "
        "70 % of the host's RAM (tensor-parallel ranks counted on one node) and warns above 40 %.",
        example="`WARNING 06-21 08:32:55 config.py:1148] Possibly too large swap space. 4.00 GiB out of the 7.74 GiB "
        "total CPU memory is allocated for the swap space.` from vLLM's CPU image on a small Mac (vllm#19936), where "
        "the space is never allocated.",
        fix="--swap-space at most 40 % of RAM over the tensor-parallel size (whole GiB), 0 to keep none; more RAM "
        "(the container's limit).",
        limits="The tensor-parallel size is read from the launch when it is given, else 1; a server whose ranks span "
        "nodes is still counted on one, as vLLM does. vLLM 0.18 and later have no --swap-space.",
        references=["https://github.com/vllm-project/vllm/issues/19936"],
    ),
)

RULES: list[Rule] = [RULE_SWAP_SPACE]
