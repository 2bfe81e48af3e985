"""OP-5.58: a token id the tokenizer cannot hold: negative, or beyond its integer type.

Why a rule of its own: Hugging Face's fast tokenizers are Rust, and a token id passes into them as an unsigned 32-bit
integer; PyO3, which converts Python's int, refuses a negative one (or one of 2^32 or more) with `OverflowError: out
of range integral type conversion attempted`, before any vocabulary check. vLLM decodes the ids a request carries
(`/detokenize`'s tokens, a prompt given as token ids) through them, so the request fails in the tokenizer's words:
vllm PR #17664 (merged May 2025) pasted the 400 body `[' out of range integral type conversion attempted']` for
/detokenize with `tokens: [-1]`, found by schema fuzzing, and added input validation to the endpoints.
Clients that send ids are usually training or evaluation code, where -1 and -100 are padding and ignore labels.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

INTEGRAL_OVERFLOW = re.compile(r"out of range integral type conversion attempted")


def _overflow_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        "a request carried a token id the tokenizer cannot hold: negative (a padding -1 or -100), or 2^32 and above",
        summary="The tokenizer's Rust core takes token ids as unsigned 32-bit integers; converting a negative id "
        "(or a larger one) failed before any vocabulary check. The request is at fault, not the server: its token "
        "ids (/detokenize's tokens, a prompt sent as ids) hold a value no vocabulary has.",
        evidence=[c.log_evidence(event, name="the tokenizer's conversion", value=found.group(0))],
        actions=[
            "Find the request's ids in the client: drop padding (-1, -100 for ignored labels in training code) "
            "before sending, and keep ids below the model's vocabulary size (its config.json's vocab_size).",
            "vLLM releases after vllm PR #17664 (May 2025) validate such input at the endpoint instead.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-5.58",
    title="a token id the tokenizer cannot hold",
    category=Category.RELIABILITY,
    check=c.on_phrase(INTEGRAL_OVERFLOW, _overflow_finding),
    needs=("events",),
    page=RulePage(
        checks="PyO3's `out of range integral type conversion attempted`, from the tokenizer, in an error or a "
        "request's error body.",
        why="Token ids enter the Rust tokenizer as unsigned 32-bit integers; a negative id cannot.",
        example="vllm PR #17664: POST /detokenize with `tokens: [-1]` answered "
        '`{"object":"error","message":" [\'out of range integral type conversion attempted\']", …}`.',
        fix="The client sends only ids of the vocabulary (no padding).",
        limits="The words do not say which field carried the id.",
        references=["https://github.com/vllm-project/vllm/pull/17664"],
    ),
)

RULES: list[Rule] = [RULE]
