"""OP-7.192: vLLM's incremental detokenizer failed in tokenizers' DecodeStream, mid-answer.

Why a rule of its own: vLLM V1 detokenizes each request token by token with the tokenizers library's DecodeStream
(its FastIncrementalDetokenizer), and two of DecodeStream's own errors reach the user in its words, naming neither
vLLM nor the model. Offline they fail the generate() call; in the OpenAI server they escape the output handler, and
the engine is declared dead, so every request fails until a restart (vllm#26071, #25821).
- `Exception: Invalid prefix encountered`: the stream's state no longer matches the text it produced, an edge case
  of output that is not valid UTF-8 (vllm#17448, reproduced with gemma-3-1b-it on 0.8.5.post1 and tokenizers
  0.21.1). vLLM PR #19449 (0.9.2; its warning `Encountered invalid prefix detokenization error for request …,
  resetting decode stream.` is in the message catalog from 0.9.2) catches it and resets the stream. tokenizers 0.22.0
  lengthened the words (`… while decoding stream. Token ID: …, Expected prefix: …`), which that exact match missed
  until vLLM PR #24159 (September 2025): the longer words on a vLLM from before it raise again.
- `TypeError: argument 'id': StreamInput must be either an integer or a list of integers`: a negative id reached
  DecodeStream. vLLM PR #24351 (0.10.2: `Encountered invalid token id: …`) logs such ids, caught as the OverflowError
  tokenizers raised; tokenizers 0.22.1 raises this TypeError instead, caught only from PR #26445 (October 2025, after
  0.11.0). Where the negative ids come from is not known (vllm#21951).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import DECODE_STREAM_PREFIX, DECODE_STREAM_PREFIX_LONGER, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage

PREFIX_GUARDED_FROM = (0, 9, 2)  # the first release whose detokenizer resets on the words (the message catalog)
OVERFLOW_GUARDED_FROM = (0, 10, 2)  # the first release that logs a negative id (the message catalog's warning)
NEWER_WORDS_GUARDED_AFTER = (0, 11, 0)  # PR #24159 and #26445 are in releases after this one
_WHERE_IT_FAILS = (
    "Offline it fails the generate() call; in the OpenAI server it escapes the output handler and the engine is "
    "declared dead, so every request fails until a restart (vllm#26071)."
)


def _finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    if event.message in (DECODE_STREAM_PREFIX, DECODE_STREAM_PREFIX_LONGER):
        return _prefix_finding(facts, event)
    release = c.vllm_release(facts)
    pin = release is not None and OVERFLOW_GUARDED_FROM <= release <= NEWER_WORDS_GUARDED_AFTER
    return RULE_DECODE_STREAM.finding(
        c.death_severity(facts),
        "the detokenizer was given a token id tokenizers' DecodeStream cannot take (a negative id), and it failed",
        summary="vLLM's incremental detokenizer steps tokenizers' DecodeStream once per generated token, and this "
        "step got a negative id. vLLM from 0.10.2 logs such an id and goes on when tokenizers raises OverflowError "
        "for it (PR #24351); tokenizers 0.22.1 raises this TypeError instead, which vLLM catches only from PR "
        f"#26445 (after 0.11.0). {_WHERE_IT_FAILS} Where the negative ids come from is not known (vllm#21951).",
        evidence=[c.log_evidence(event, name="DecodeStream", value="StreamInput must be an integer")],
        actions=[
            "Upgrade vLLM past 0.11.0 (PR #26445 logs `Encountered invalid token id` and goes on)"
            + (
                "; or, on this release, install the tokenizers before 0.22.1 (`pip install 'tokenizers<0.22.1'`), "
                "whose OverflowError it already catches."
                if pin
                else "; pinning tokenizers below 0.22.1 helps only on vLLM 0.10.2 to 0.11.0, which catch its "
                "OverflowError."
            ),
            "Look beside it for a CUDA error or NaN outputs: ids outside the vocabulary are produced upstream of the "
            "detokenizer, and a report with the request (sampling parameters, structured output, speculative "
            "decoding) helps find where.",
        ],
        confidence=0.7,
    )


def _prefix_finding(facts: Facts, event: LogEvent) -> Finding:
    release = c.vllm_release(facts)
    longer = event.message == DECODE_STREAM_PREFIX_LONGER
    if longer:  # tokenizers 0.22.0 or later: caught from PR #24159 only
        fix = (
            "Upgrade vLLM to a release with PR #24159 (merged September 2025), whose detokenizer recognises "
            "tokenizers 0.22's longer words and resets the stream; or install tokenizers before 0.22 (`pip install "
            "'tokenizers<0.22'`), whose shorter words vLLM 0.9.2 and later catch."
        )
    elif release is not None and release >= PREFIX_GUARDED_FROM:
        fix = (
            "This vLLM (0.9.2 or later) catches these words in its own detokenizer, so they came through another "
            "caller of DecodeStream: report it with the versions (`python collect_env.py`) and the request."
        )
    else:
        fix = (
            "Upgrade vLLM to 0.9.2 or later: its detokenizer catches this, resets the decode stream and goes on (PR "
            "#19449, vllm#17448)."
        )
    return RULE_DECODE_STREAM.finding(
        c.death_severity(facts),
        "tokenizers' DecodeStream lost track of the text it was decoding (`Invalid prefix encountered`), and the "
        "detokenizer failed",
        summary="vLLM's incremental detokenizer steps tokenizers' DecodeStream once per generated token; output "
        "that is not valid UTF-8 can leave the stream's state unlike the text it produced, and the next step raises "
        "this. It is the library's edge case, not the launch's: vLLM 0.9.2 (PR #19449) resets the stream on it, "
        "and PR #24159 on tokenizers 0.22's longer words. " + _WHERE_IT_FAILS,
        evidence=[c.log_evidence(event, name="DecodeStream", value="Invalid prefix encountered")],
        actions=[fix],
        confidence=0.75,
    )


RULE_DECODE_STREAM = Rule(
    code="OP-7.192",
    title="the incremental detokenizer failed in tokenizers' DecodeStream",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.DECODE_STREAM_FAILED, _finding),
    needs=("events",),
    page=RulePage(
        checks="tokenizers' `Invalid prefix encountered` (and tokenizers 0.22's `… while decoding stream. Token ID: "
        "…`) and `StreamInput must be either an integer or a list of integers`, raised by DecodeStream under vLLM "
        "V1's detokenizer.",
        why="Offline they fail the call; online the engine is declared dead. Later vLLM releases catch them and go on.",
        example="`Exception: Invalid prefix encountered` partway through an offline batch (vllm#17448; PR #19449 "
        "resets the stream instead, vLLM 0.9.2).",
        fix="vLLM 0.9.2 or later for the short words, a vLLM with PR #24159 (or tokenizers before 0.22) for the "
        "longer; a vLLM after 0.11.0 (PR #26445) for the StreamInput TypeError.",
        limits="The line does not say which request or id; the release is read from the log when it is there.",
        references=[
            "https://github.com/vllm-project/vllm/issues/17448",
            "https://github.com/vllm-project/vllm/pull/24159",
            "https://github.com/vllm-project/vllm/pull/26445",
        ],
    ),
)

RULES: list[Rule] = [RULE_DECODE_STREAM]
