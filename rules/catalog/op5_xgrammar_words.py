"""OP-5.66: xgrammar, vLLM's default structured-output backend, refused a request's grammar or its own inputs.

Why a rule of its own: xgrammar raises from C++ with its own words (`RuntimeError: [11:16:07] …/grammar_parser.cc:78:
EBNF parse error at line 1, column 64: Expect element`), which name no vLLM file, flag or request field, so triage
met them as unknown errors. Each reading below is one of its refusals with the cause a thread confirmed:

- `EBNF parse error at line L, column C: …`: xgrammar could not parse the grammar it was given: the request's own
  EBNF grammar, or the one xgrammar wrote from a regex or a JSON schema. mlc-ai/xgrammar#175: vLLM's IPv4 test regex
  with an empty alternative `(a|)` broke xgrammar 0.1.11's regex converter (xgrammar PR #183 fixed it).
- `bitmask must have the hidden size equal to ceilDiv(vocabSize, 32)`: xgrammar's token-mask kernel was handed a mask
  sized for another vocabulary than the logits': an xgrammar release vLLM was not written for (vllm PR #13338:
  xgrammar 0.1.13 changed the op under V0's guided decoding, and vLLM pinned 0.1.11).
- `Input vocab_size less than minimum viable vocab size for tokenizer …`: the vocabulary size vLLM gave xgrammar's
  TokenizerInfo is below the tokenizer's own count; vllm PR #14826 fixed vLLM passing one less than it must (the
  largest token id plus one) in March 2025's V1 structured output.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The structured-output backend is the server's setting: --structured-outputs-config's backend in current releases
# (0.32), --guided-decoding-backend in the releases before it
_OTHER_BACKEND = (
    'Or serve this request with another backend: `--structured-outputs-config \'{"backend": "guidance"}\'` on '
    "current releases; --guided-decoding-backend guidance (0.8.2 on) or outlines (before) on older ones."
)


class Refusal(NamedTuple):
    """One of xgrammar's refusals: its words, and what a thread confirmed they mean."""

    words: str
    title: str
    why: str
    actions: tuple[str, ...]
    source: str
    confidence: float


REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        r"EBNF parse error at line \d+, column \d+",
        "xgrammar could not parse the request's grammar (its own EBNF, or the one it wrote from a regex or a schema)",
        "xgrammar compiles every structured-output request into an EBNF grammar and parses it first; the line and "
        "column are in that grammar. A request's own grammar with syntax xgrammar's EBNF does not take fails here, "
        "and so does a regex or JSON schema its converter turns into broken EBNF",
        (
            "If the request sends a grammar: correct it at the line and column given (xgrammar's EBNF is GBNF-like: "
            "`root ::= …`, quoted literals, no empty alternative).",
            "If it sends a regex or a schema: rewrite the construct the converter trips on (an empty alternative "
            "`(a|)` as `(a)?`), or upgrade vLLM with the xgrammar release it requires (xgrammar's regex converter "
            "grew over 2025).",
            _OTHER_BACKEND,
        ),
        "mlc-ai/xgrammar#175: an empty alternative in vLLM's IPv4 test regex broke xgrammar 0.1.11's converter; "
        "xgrammar PR #183 fixed it",
        0.8,
    ),
    Refusal(
        r"bitmask must have the hidden size equal to ceilDiv\(vocabSize, 32\)",
        "xgrammar's token mask and the logits disagree on the vocabulary's size: xgrammar and vLLM at releases not "
        "made for each other",
        "xgrammar applies the grammar as a bitmask over the logits (one bit per token, 32 to a word), and its kernel "
        "checks the two have the same vocabulary; a mask of another size comes from vLLM calling an xgrammar "
        "release whose op differs from the one it was written for",
        (
            "Install the xgrammar release the installed vLLM requires (`pip show vllm` lists it; `pip install "
            '"xgrammar==<that version>"`), or upgrade vLLM and xgrammar together.',
            _OTHER_BACKEND,
        ),
        "vllm PR #13338: xgrammar 0.1.13 changed apply_token_bitmask_inplace under V0's guided decoding; vLLM "
        "pinned xgrammar 0.1.11",
        0.8,
    ),
    Refusal(
        r"Input vocab_size less than minimum viable vocab size for tokenizer",
        "xgrammar was given a vocabulary size below the tokenizer's: structured output cannot start for this model",
        "xgrammar builds its token tables from the tokenizer and the vocabulary size vLLM passes, and refuses a size "
        "below what the tokenizer holds. vLLM's V1 structured output passed one less than it must (the largest "
        "token id plus one) in March 2025's builds; a tokenizer with more tokens than the model's vocab_size does "
        "the same",
        (
            "Upgrade vLLM past PR #14826 (March 2025), which passes the size xgrammar needs.",
            "If it persists: compare `len(tokenizer)` with config.json's vocab_size; a tokenizer that is not the "
            "model's own (or one with added tokens) needs the model's.",
            _OTHER_BACKEND,
        ),
        "vllm PR #14826: the vocabulary size handed to xgrammar was off by one",
        0.75,
    ),
)
XGRAMMAR_REFUSAL = re.compile("|".join(f"(?P<r{i}>{r.words})" for i, r in enumerate(REFUSALS)))


def _refusal_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    refusal = REFUSALS[int((found.lastgroup or "r0").removeprefix("r"))]
    return RULE.finding(
        Severity.HIGH,
        refusal.title,
        summary=f"{refusal.why} ({refusal.source}).",
        evidence=[c.log_evidence(event, name="xgrammar's refusal", value=found.group(0))],
        actions=list(refusal.actions),
        confidence=refusal.confidence,
    )


RULE = Rule(
    code="OP-5.66",
    title="xgrammar refused a request's grammar or the inputs vLLM gave it",
    category=Category.CONFIGURATION,
    check=c.on_phrase(XGRAMMAR_REFUSAL, _refusal_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="xgrammar's `EBNF parse error at line L, column C`, `bitmask must have the hidden size equal to "
        "ceilDiv(vocabSize, 32)` and `Input vocab_size less than minimum viable vocab size for tokenizer`.",
        why="xgrammar raises from C++ in its own words, naming no vLLM flag or field; each of these has a cause a "
        "thread confirmed.",
        example="`RuntimeError: … grammar_parser.cc:78: EBNF parse error at line 1, column 64: Expect element` for a "
        "regex with an empty alternative (mlc-ai/xgrammar#175, fixed by xgrammar PR #183).",
        fix="Correct the grammar (or upgrade vLLM with its xgrammar); install the xgrammar vLLM requires; upgrade "
        "vLLM past PR #14826; or the guidance backend.",
        limits="Three of xgrammar's refusals; its others stay with the generic readings.",
        references=[
            "https://github.com/mlc-ai/xgrammar/issues/175",
            "https://github.com/vllm-project/vllm/pull/13338",
            "https://github.com/vllm-project/vllm/pull/14826",
        ],
    ),
)

RULES: list[Rule] = [RULE]
