"""OP-5.59: vLLM capped Gemma 2's context at its sliding window, so longer prompts are refused.

Why a rule of its own: Gemma 2 alternates global attention with a 4096-token sliding window layer by layer. The vLLM
that first served it (vllm PR #5908, June 2024) could not run windows on some layers only, so it ran every layer
globally and, to keep the model's behaviour, capped the maximum length at the window: `Gemma 2 uses sliding window
attention for every odd layer, which is currently not supported by vLLM. Disabling sliding window and capping the
max length to the sliding window size (4096).` A person who wants Gemma 2's 8192 tokens then sees requests above 4096
refused, or the server refuse a larger --max-model-len (vllm#6220: a commenter read the warning as the cause and
advised --max-model-len 4096 with VLLM_ATTENTION_BACKEND=FLASHINFER, whose kernels did Gemma 2's logit soft-capping;
the reporter agreed the window support was what was missing). vllm#7442 tracked the missing support.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _window_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    window = event.max_model_len
    cap = f"{window:,} tokens" if window else "the sliding window"
    return RULE.finding(
        Severity.MEDIUM,
        f"vLLM capped Gemma 2's context at its sliding window ({cap}): longer prompts are refused",
        summary="Gemma 2 attends globally on half its layers and through a sliding window on the others; this vLLM "
        "runs every layer globally instead and, to keep the model's behaviour, limits the context to the window. "
        "Requests longer than that fail, and a --max-model-len above it is not served.",
        evidence=[c.log_evidence(event, name="the cap vLLM set", value=cap)],
        changes=[
            ConfigChange(
                flag="--max-model-len",
                proposed=str(window) if window else "<the window size the warning names>",
                reason="what this vLLM serves Gemma 2 at; clients must keep prompt plus output within it",
            )
        ],
        actions=[
            "Serve the full context with a vLLM release that implements Gemma 2's interleaved sliding window "
            "(vllm#7442 tracked it); on this one, keep prompts within the window.",
            "On the vLLM of mid-2024 that printed this, VLLM_ATTENTION_BACKEND=FLASHINFER ran Gemma 2's logit "
            "soft-capping, which the other backends then skipped (vllm#6220).",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-5.59",
    title="Gemma 2's context capped at its sliding window",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.SLIDING_WINDOW_CAPPED, _window_finding),
    needs=("events",),
    page=RulePage(
        checks="vLLM's warning `Gemma 2 uses sliding window attention for every odd layer, which is currently not "
        "supported by vLLM. Disabling sliding window and capping the max length to the sliding window size (N).`",
        why="That vLLM ran every layer globally and kept the model's behaviour by limiting the context to the window.",
        example="vllm#6220: --max-model-len 8192 for Gemma 2 failed; 4096 served.",
        fix="--max-model-len at the window, or a vLLM release that implements interleaved sliding windows.",
        limits="Only the vLLM releases of mid-2024 print it; the words say the window, not which release.",
        references=[
            "https://github.com/vllm-project/vllm/pull/5908",
            "https://github.com/vllm-project/vllm/issues/6220",
        ],
    ),
)

RULES: list[Rule] = [RULE]
