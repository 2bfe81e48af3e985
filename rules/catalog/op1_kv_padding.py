"""OP-1.13: vLLM padded a hybrid model's KV-cache layer groups, and says how much KV memory the padding may waste.

Why a rule of its own: since 0.9 vLLM's KV-cache manager gives every group of layers the same number of layers, so
that one block table serves them all; a model whose layers are of two kinds (sliding-window and full attention, or
linear-attention or Mamba layers and full attention) is cut into groups the size of its smaller kind, and a kind
whose count does not divide evenly gets placeholder layers that hold real KV memory (v1/core/kv_cache_utils.py
0.9-0.32, kv_cache_planning.py 0.33 on: `Add 3 padding layers, may waste at most 10.00% KV cache memory`). The share
is of that kind's layers. A few percent is the model's own layout and needs nothing; a large share usually comes from
a speculative drafter's layers added to one kind (vLLM's own comment cites gpt-oss-20b with EAGLE: 12 sliding-window
and 13 full layers), and vllm#46462's reporter, serving Qwen3.6-35B-A3B with a DFlash drafter, saw 60 % and asked why
the KV cache held so few tokens. It is a warning, not an error: the server serves, with less KV room.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Above this share the padding is more than a layout's rounding: the KV room lost is worth a look.
NOTABLE_WASTE = 0.25


def _check_kv_padding(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.KV_PADDING_LAYERS) if e.waste_share is not None]
    if not events:
        return []
    event = max(events, key=lambda e: e.waste_share or 0.0)
    share = event.waste_share or 0.0
    drafter = bool(facts.config and facts.config.speculative_config)
    notable = share > NOTABLE_WASTE
    actions = [
        "Nothing is wrong with the server: the padding is how vLLM fits this model's mix of layer kinds into one "
        "block table. `GPU KV cache size` in the same log is the room it has after the padding."
    ]
    if notable:
        actions.insert(
            0,
            "Start it once without the speculative config and compare `GPU KV cache size`: a drafter's layers added to "
            "one kind are the usual source of a large share; a drafter with fewer layers of that kind, or none, "
            "takes the room back."
            if drafter
            else "A large share comes most often from a speculative drafter's layers added to one kind of layer; if "
            "the launch has --speculative-config, start it once without and compare `GPU KV cache size`.",
        )
    return [
        RULE_KV_PADDING.finding(
            Severity.MEDIUM if notable else Severity.LOW,
            f"vLLM padded the KV cache's layer groups with {event.padding_layers} placeholder layer(s): up to "
            f"{share:.0%} of that kind of layer's KV memory holds no tokens",
            summary="vLLM gives each group of layers in the KV cache the same number of layers; this model's kinds of "
            "layers (sliding-window and full attention, or linear-attention or Mamba and full attention, a drafter's "
            "layers included) do not divide evenly, so it added placeholder layers that take KV memory and serve "
            "nothing. Less KV room means fewer requests at once and earlier preemption.",
            evidence=[c.log_evidence(event, name="KV padding", value=share, unit="share")],
            actions=actions,
            confidence=0.7,
        )
    ]


RULE_KV_PADDING = Rule(
    code="OP-1.13",
    title="vLLM padded a hybrid model's KV-cache layer groups",
    category=Category.KV_CACHE,
    check=_check_kv_padding,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Add N padding layers, may waste at most X% KV cache memory` (0.9 on).",
        why="The KV-cache manager gives every layer group as many layers; a model with two kinds of layer whose "
        "counts do not divide gets placeholder layers that take KV memory.",
        example="`Add 6 padding layers, may waste at most 60.00% KV cache memory` serving Qwen3.6-35B-A3B with a "
        "DFlash drafter (vllm#46462).",
        fix="Nothing for a few percent; above a quarter, compare `GPU KV cache size` without the speculative config "
        "(a drafter's layers are the usual source).",
        limits="The share is of one kind's layers, not of the whole KV cache; which drafter or layer kind caused it is "
        "not in the line.",
        references=["https://github.com/vllm-project/vllm/issues/46462"],
    ),
)

RULES: list[Rule] = [RULE_KV_PADDING]
