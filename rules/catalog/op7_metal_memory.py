"""OP-7.182: vllm-metal found no room for the KV cache in the Metal memory it may use (Apple silicon).

Why a rule of its own: vllm-metal, vLLM's plugin for Apple silicon, runs paged attention in the GPU's share of
unified memory, capped by VLLM_METAL_MEMORY_FRACTION of the Metal limit; what the weights and its overhead leave is
the KV cache's budget, and below zero it refuses to start: `ValueError: Paged attention: not enough Metal memory for KV
cache. metal_limit=…, fraction=…, usable_metal=…, model_memory=…, overhead=…, kv_budget=-…GB. Mitigations: increase
VLLM_METAL_MEMORY_FRACTION, use a smaller or more quantized model.` A personal notes page on running MLX models with
vllm-metal met it after lowering the fraction to 0.75 and names raising it, or lowering --max-model-len, as the fix;
vllm-project/vllm-metal#398 met it at 0.98 with a 27B model on a 32 GB Mac, where only a smaller model is left;
vllm-project/vllm-metal#585 met it from a regression, its overhead inflated by a default that PR #578 added.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

FRACTION_ENV = "VLLM_METAL_MEMORY_FRACTION"
NO_KV_ROOM = re.compile(
    r"Paged attention: not enough Metal memory for KV cache\.(?:.*?fraction=(?P<fraction>[\d.]+))?"
    r"(?:.*?model_memory=(?P<model>[\d.]+)GB)?(?:.*?overhead=(?P<overhead>[\d.]+)GB)?"
    r"(?:.*?kv_budget=(?P<budget>-?[\d.]+)GB)?"
)
# The fraction proposed when the one in use is lower: most of the Metal limit, some left to the system
PROPOSED_FRACTION = 0.9


def _metal_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    fraction = float(match["fraction"]) if match["fraction"] else None
    raise_it = fraction is None or fraction < PROPOSED_FRACTION
    figures = (
        f" (the weights take {match['model']} GB; the KV budget came to {match['budget']} GB)"
        if match["model"] and match["budget"]
        else ""
    )
    return RULE_METAL_MEMORY.finding(
        Severity.CRITICAL,
        f"vllm-metal found no room for the KV cache in the Metal memory it may use{figures}",
        summary=f"On Apple silicon vllm-metal keeps the weights and the KV cache in the GPU's share of unified "
        f"memory, capped by {FRACTION_ENV} of the Metal limit; after the weights and its overhead nothing was left "
        "for the KV cache, so it refused to start.",
        evidence=[c.log_evidence(event, name="vllm-metal's budget", value=match.group(0))],
        changes=[
            ConfigChange(
                flag=FRACTION_ENV,
                current=match["fraction"],
                proposed=f"{PROPOSED_FRACTION:g}",
                reason="a larger share of the Metal limit for vllm-metal, as its own message suggests",
                cost="less unified memory left to the system and other apps",
                kind="env",
            )
        ]
        if raise_it
        else [],
        actions=[
            "Lower --max-model-len, so the KV cache vllm-metal must hold for one sequence is smaller.",
            *_regression_action(match["overhead"]),
            "If the weights alone come near the Metal limit (a 27B model in 4 bits on a 32 GB Mac, "
            "vllm-project/vllm-metal#398, failed even at 0.98), serve a smaller or more quantized model.",
        ],
        confidence=0.8,
    )


# An overhead this large is not the model's: vllm-metal#585 measured 37.86 GB where 2.02 GB was usual
_OVERHEAD_SUSPECT_GB = 5.0


def _regression_action(overhead: str | None) -> list[str]:
    """vllm-metal's own regression, when the overhead it printed is large or not printed at all."""
    if overhead is not None and float(overhead) < _OVERHEAD_SUSPECT_GB:
        return []
    return [
        "If the overhead is many GB where an earlier release needed about 2, it is vllm-metal's: "
        "vllm-project/vllm-metal#585 traced a 19-fold overhead (37.86 GB against 2.02 GB) to the "
        "MLX_MAX_MB_PER_BUFFER=2000 default its PR #578 added; run the release before it, or override that variable."
    ]


RULE_METAL_MEMORY = Rule(
    code="OP-7.182",
    title="vllm-metal found no room for the KV cache in Metal memory",
    category=Category.MEMORY,
    check=c.on_phrase(NO_KV_ROOM, _metal_finding),
    needs=("events",),
    page=RulePage(
        checks="vllm-metal's `ValueError: Paged attention: not enough Metal memory for KV cache. … kv_budget=…GB`.",
        why="On a Mac the server does not start, in vllm-metal's words rather than vLLM's KV-cache messages.",
        example="`… metal_limit=51.54GB, fraction=0.75, usable_metal=38.65GB, model_memory=21.64GB, overhead=1.08GB, "
        "kv_budget=-0.54GB.` after the fraction was lowered to 0.75 (a notes page on vllm-metal: raise it, or lower "
        "--max-model-len).",
        fix=f"{FRACTION_ENV} raised toward {PROPOSED_FRACTION:g}, a smaller --max-model-len, or a smaller model.",
        limits="vllm-metal's budget formula is its own; the rule reads its figures, it does not recompute them.",
        references=[
            "https://l2dy.github.io/notes/AI/Running-MLX-models-with-vLLM-on-Apple-Silicon-macOS",
            "https://github.com/vllm-project/vllm-metal/issues/398",
            "https://github.com/vllm-project/vllm-metal/issues/585",
        ],
    ),
)

RULES: list[Rule] = [RULE_METAL_MEMORY]
