"""OP-6.5: a hybrid Mamba model's state outgrows the page vLLM planned for it, and speculative decoding is why.

Why a rule of its own: the failure is a bare assertion whose source line is all a paste shows (`assert
self.page_size_padded >= page_size`, MambaSpec.page_size_bytes in vllm/v1/kv_cache_interface.py, read in the 0.32
wheel). vLLM plans one page size for a hybrid model's attention and Mamba layers while it configures the model,
from the model's Mamba state shape, and pads the Mamba page to it; at KV-cache set-up each Mamba layer's real state
must fit that page. vLLM PR #47635 (July 2026) found the two disagree under speculative decoding for FalconH1,
GraniteMoeHybrid and Zamba2: their planning shape leaves out the speculative tokens' extra state, so the planned
page is too small and the engine stops before it serves, with any method (ngram included).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_mamba_page(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.MAMBA_PAGE_TOO_SMALL)
    if not seen:
        return []
    event = seen[0]
    flags = facts.config.flags if facts.config else {}
    speculating = any(flag in flags for flag in ("--speculative-config", "--speculative-model"))
    return [
        RULE.finding(
            Severity.CRITICAL,
            "a hybrid (Mamba) layer's state is larger than the KV-cache page vLLM planned for it"
            + (
                " while --speculative-config is set: the page was sized without the speculative tokens' state"
                if speculating
                else ": the known cause is speculative decoding on a model whose planned page leaves out the "
                "speculative tokens' state"
            ),
            summary="vLLM sizes a hybrid model's Mamba page once, from the model's state shape, and pads it to the "
            "attention page; speculative decoding enlarges the state, and some models' planning shape leaves that "
            "out (FalconH1, GraniteMoeHybrid, Zamba2: vLLM PR #47635).",
            evidence=[c.log_evidence(event, name="vLLM's Mamba page check", value=event.message)],
            actions=[
                "Serve the model without speculative decoding (drop --speculative-config, ngram included) until "
                "your vLLM has the fix of PR #47635, which passes the speculative tokens to the models' state shape.",
                "Attention-only models and hybrid models whose state shape counts the speculative tokens speculate "
                "normally; for another hybrid model, compare its get_mamba_state_shape_from_config with the PR.",
            ],
            confidence=0.7,
        )
    ]


RULE = Rule(
    code="OP-6.5",
    title="a hybrid Mamba model's page too small under speculative decoding",
    category=Category.SPEC_DECODE,
    check=_check_mamba_page,
    needs=("events",),
    page=RulePage(
        checks="The bare assertion `assert self.page_size_padded >= page_size` (MambaSpec.page_size_bytes, "
        "vllm/v1/kv_cache_interface.py).",
        why="The page vLLM planned for the Mamba state is smaller than the state a layer holds; the engine stops "
        "while it sets up the KV cache.",
        example="FalconH1, GraniteMoeHybrid and Zamba2 with any speculative decoding, ngram included (vLLM PR #47635).",
        fix="No speculative decoding for the model until a vLLM with the fix; the PR passes the speculative tokens "
        "to the state shape.",
        limits="The assertion prints no sizes; without the command line the finding cannot see whether speculation "
        "was on.",
        references=["https://github.com/vllm-project/vllm/pull/47635"],
    ),
)

RULES: list[Rule] = [RULE]
