"""OP-7.81: Triton cannot compile vLLM's prefix-prefill attention kernel for a GPU older than Ampere.

Why a rule of its own: vLLM's V0 engine computes attention over a cached prefix, or over a prompt split into chunks,
with a Triton kernel of its own (`context_attention_fwd`, model_executor/layers/triton_kernel/prefix_prefill.py,
later ops/prefix_prefill.py). Its layout needs a conversion between two tensor-core (mma) layouts that Triton's
compiler supports only from Ampere (compute capability 8.0): on a V100 or a T4 the compiler aborts the process with
`Assertion `!(srcMmaLayout && dstMmaLayout) && "Unexpected mma -> mma layout conversion"' failed` (Triton 2.1) or
`… "mma -> mma layout conversion is only supported on Ampere"' failed` (2.2 and 3.0), at the first request that
uses the kernel. The threads agree on the trigger and the way out: prefix caching on a V100 (vllm#2729, #13738,
#4059), chunked prefill on a V100 (vllm#5533: "chunked_prefill=False is ok"; vllm#8024: "The current workaround is
set to `--enable-chunked-prefill=False`", on 0.5.5, where V0 turns it on by default for long contexts), and frameworks
that turned either on (LiveCodeBench#14, ray-project/ray#52377).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_pre_ampere(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRITON_MMA_LAYOUT)
    if not events:
        return []
    config = facts.config
    chunked = ConfigChange(
        flag="--enable-chunked-prefill",
        current="true" if config and config.enable_chunked_prefill else "(default)",
        proposed="false",
        reason="a prompt computed whole needs no prefix-prefill kernel (vllm#8024's workaround)",
        cost="a long prompt is computed in one step, delaying the decodes beside it",
    )
    prefix = ConfigChange(
        flag="--enable-prefix-caching",
        current="true" if config and config.enable_prefix_caching else "(default)",
        proposed="false",
        reason="no cached prefix to attend over, so no prefix-prefill kernel",
        cost="repeated prefixes are computed again",
    )
    # the one the launch turned on first; chunked prefill when the text does not say (the default that changed)
    prefix_first = bool(config and config.enable_prefix_caching and not config.enable_chunked_prefill)
    changes = [prefix, chunked] if prefix_first else [chunked, prefix]
    return [
        RULE_PRE_AMPERE.finding(
            Severity.CRITICAL,
            "Triton cannot compile vLLM's prefix-prefill attention for a GPU older than Ampere (V100, T4): turn off "
            "chunked prefill or prefix caching, whichever is on",
            summary="vLLM computes attention over a cached prefix or a chunked prompt with a Triton kernel whose "
            "layout conversion Triton's compiler supports only from compute capability 8.0; on an older GPU the "
            "compiler's assertion aborts the process at the first request that uses it.",
            evidence=[c.log_evidence(events[0], name="Triton's assertion", value=events[0].message)],
            changes=changes[:1],
            alternatives=changes[1:],
            actions=[
                "Turn off the feature that runs the kernel: --enable-chunked-prefill false (V0 turns it on by default "
                "for long contexts), and --enable-prefix-caching false if it is on; a framework that starts "
                "vLLM (an eval harness, Ray Serve) passes them as its engine arguments.",
                "Or serve on an Ampere or newer GPU (compute capability 8.0 or later), where the kernel compiles.",
            ],
            confidence=0.85,
        )
    ]


RULE_PRE_AMPERE = Rule(
    code="OP-7.81",
    title="Triton cannot compile vLLM's prefix-prefill attention before Ampere",
    category=Category.CONFIGURATION,
    check=_check_pre_ampere,
    needs=("events",),
    page=RulePage(
        checks="Triton's `Allocation.cpp` assertion: `Unexpected mma -> mma layout conversion` (Triton 2.1) or `mma -> "
        "mma layout conversion is only supported on Ampere` (2.2 on).",
        why="vLLM's Triton prefix-prefill kernel (prefix caching, chunked prefill) needs a layout conversion Triton "
        "supports only from compute capability 8.0.",
        example='chunked prefill on a V100: `… "mma -> mma layout conversion is only supported on Ampere"\' failed.` '
        "(vllm#5533; vllm#8024's workaround: `--enable-chunked-prefill=False`).",
        fix="--enable-chunked-prefill false, or --enable-prefix-caching false, whichever is on; or an Ampere GPU.",
        limits="Read from Triton's words alone: a V1 engine on these GPUs, or another Triton kernel with the same "
        "conversion, would read the same.",
        references=[
            "https://github.com/vllm-project/vllm/issues/8024",
            "https://github.com/vllm-project/vllm/issues/2729",
            "https://github.com/vllm-project/vllm/issues/5533",
            "https://github.com/vllm-project/vllm/issues/13738",
        ],
    ),
)

RULES: list[Rule] = [RULE_PRE_AMPERE]
