"""OP-7.192: vLLM's incremental detokenizer failed in tokenizers' DecodeStream, mid-answer.

Why a rule of its own: vLLM V1 detokenizes each request token by token with the tokenizers library's DecodeStream
(its FastIncrementalDetokenizer), and two of DecodeStream's own errors reach the user in its words, naming neither
vLLM nor the model:
- `Exception: Invalid prefix encountered`: the stream's state no longer matches the text it produced, an edge case
  of output that is not valid UTF-8 (vllm#17448, reproduced with gemma-3-1b-it on 0.8.5.post1 and tokenizers
  0.21.1). vLLM PR #19449 catches it, logs `Encountered invalid prefix detokenization error for request …, resetting
  decode stream.` and goes on; that warning is in vLLM's messages from 0.9.2 (the message catalog).
- `TypeError: argument 'id': StreamInput must be either an integer or a list of integers`: an id DecodeStream cannot
  take (a negative one) reached it. vLLM from 0.10.2 caught such ids as the OverflowError tokenizers raised and
  logged `Encountered invalid token id: …`; tokenizers 0.22.1 raises a TypeError instead, which escaped until vLLM PR
  #26445 caught it too (vllm#26071; where the bad ids come from was not found).
Either fails the request being decoded (offline, the whole generate() call), not the launch.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import DECODE_STREAM_PREFIX, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

PREFIX_GUARDED_FROM = (0, 9, 2)  # the first release whose detokenizer logs and resets on it (the message catalog)


def _finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    if event.message == DECODE_STREAM_PREFIX:
        return _prefix_finding(facts, event)
    return RULE_DECODE_STREAM.finding(
        Severity.HIGH,
        "the detokenizer was given a token id tokenizers' DecodeStream cannot take (a negative id): the request "
        "failed mid-answer",
        summary="vLLM's incremental detokenizer steps tokenizers' DecodeStream once per generated token, and this "
        "step got an id no token has. vLLM from 0.10.2 logs such an id and goes on when tokenizers raises "
        "OverflowError for it; tokenizers 0.22.1 raises this TypeError instead, which vLLM caught only from PR "
        "#26445 (vllm#26071). Where the invalid id comes from was not found there.",
        evidence=[c.log_evidence(event, name="DecodeStream", value="StreamInput must be an integer")],
        actions=[
            "Upgrade vLLM to a release made after PR #26445 (merged October 2025), which logs `Encountered invalid "
            "token id` and goes on; or, until then, install the tokenizers release before 0.22.1 that this vLLM was "
            "tested with (`pip install 'tokenizers<0.22.1'`).",
            "If it recurs, note the request (sampling parameters, structured output, speculative decoding) in a "
            "report: an id outside the vocabulary is produced upstream of the detokenizer.",
        ],
        confidence=0.7,
    )


def _prefix_finding(facts: Facts, event: LogEvent) -> Finding:
    release = c.vllm_release(facts)
    guarded = release is not None and release >= PREFIX_GUARDED_FROM
    return RULE_DECODE_STREAM.finding(
        Severity.HIGH,
        "tokenizers' DecodeStream lost track of the text it was decoding (`Invalid prefix encountered`): the request "
        "failed mid-answer",
        summary="vLLM's incremental detokenizer steps tokenizers' DecodeStream once per generated token; output "
        "that is not valid UTF-8 can leave the stream's state unlike the text it produced, and the next step raises "
        "this. It is the library's edge case, not the launch's: vLLM PR #19449 (in 0.9.2) catches it, logs "
        "`Encountered invalid prefix detokenization error … resetting decode stream.` and goes on.",
        evidence=[c.log_evidence(event, name="DecodeStream", value="Invalid prefix encountered")],
        actions=[
            "This vLLM (0.9.2 or later) already catches it in its own detokenizer, so it came through a path that "
            "guard does not cover: report it with the versions (`python collect_env.py`) and the request."
            if guarded
            else "Upgrade vLLM to 0.9.2 or later: its detokenizer catches this, resets the decode stream and goes on "
            "(PR #19449, vllm#17448).",
        ],
        confidence=0.75,
    )


RULE_DECODE_STREAM = Rule(
    code="OP-7.192",
    title="the incremental detokenizer failed in tokenizers' DecodeStream",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.DECODE_STREAM_FAILED, _finding),
    needs=("events",),
    page=RulePage(
        checks="tokenizers' `Invalid prefix encountered` and `StreamInput must be either an integer or a list of "
        "integers`, raised by DecodeStream under vLLM V1's detokenizer.",
        why="Both fail the request mid-answer in the library's words; later vLLM releases catch them and go on.",
        example="`Exception: Invalid prefix encountered` partway through an offline batch (vllm#17448; PR #19449 "
        "resets the stream instead, vLLM 0.9.2).",
        fix="vLLM 0.9.2 or later for the prefix error; a vLLM after PR #26445, or tokenizers before 0.22.1, for the "
        "StreamInput TypeError.",
        limits="The line does not say which request or id; the release is read from the log when it is there.",
        references=[
            "https://github.com/vllm-project/vllm/issues/17448",
            "https://github.com/vllm-project/vllm/issues/26071",
        ],
    ),
)

RULES: list[Rule] = [RULE_DECODE_STREAM]
