"""OP-5.67 and OP-5.68: what a pasted stream of chunks (or a response body) shows about the answer a client got.

Why rules of their own: a streamed answer that looks wrong carries no error line; its chunks are the evidence
(advisor/collect/streamed_chunks.py reads them as one STREAMED_ANSWER event).

- OP-5.67: chunks that leave `finish_reason` out. OpenAI's chunks carry it in every choice, null until the last;
  strict clients (typed SDKs, proxies that validate) refuse or misread a chunk without it. vLLM 0.9.0 dropped it from
  the chunks after the first (vllm#19650, the reporter's 0.8.5.post1 sent it), a regression vllm PR #19662 fixed.
- OP-5.68: the whole answer streamed as reasoning, none of it as content, so a client that reads delta.content shows
  nothing. Ended by `length`, the output ran out of max_tokens before the model stopped reasoning. Ended by `stop`,
  the reasoning parser never saw reasoning end: with thinking turned off (chat_template_kwargs enable_thinking=false)
  the prompt itself closes the think block, and vLLM's streaming path decided that from prompt_token_ids that some
  chunks lack, routing the answer into delta.reasoning (vllm#40816 with Qwen3's parser, fixed by vllm PR #40820);
  otherwise a model or template that never emits the parser's end token. A non-streamed response body pasted whole
  (advisor/collect/answer_body.py, an ANSWER_BODY event) is read the same way, except that a body ended by `stop` is
  the parser's end token never seen: vllm#40816's misrouting was the streaming path's alone. A stream that ends in a
  tool call or an
  abort, or that the paste cuts before its end, is no such answer.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Evidence, Finding, Rule, RulePage, Severity


def _check_finish_reason(facts: Facts) -> list[Finding]:
    stream = _stream(facts)
    if stream is None or not stream.chunks_without_finish_reason:
        return []
    missing, chunks = stream.chunks_without_finish_reason, stream.chunks or 0
    return [
        RULE_FINISH_REASON.finding(
            Severity.MEDIUM,
            f"{missing} of {chunks} streamed chunk(s) leave out finish_reason: from a vLLM server, 0.9.0's streaming "
            "regression",
            summary="OpenAI's stream chunks carry finish_reason in every choice, null until the last one; a strict "
            "client (a typed SDK, a proxy that validates the schema) refuses or misreads a chunk without the key. "
            "vLLM 0.9.0 dropped it from the chunks after the first (vllm#19650, where 0.8.5.post1 still sent it), "
            "a regression vllm PR #19662 fixed; another server's stream is read the same way.",
            evidence=[_evidence(stream, "chunks without finish_reason", missing)],
            actions=[
                "Upgrade vLLM to a release with vllm PR #19662 (the fix of vllm#19650, after 0.9.0): its chunks "
                "carry finish_reason again.",
                "Meanwhile read finish_reason as optional in the client (absent means null: the stream goes on).",
            ],
            confidence=0.8,
        )
    ]


# How a stream ends when its text should have been the answer: the model stopped, or its output limit did
_ANSWER_ENDS = frozenset({"stop", "length"})


def _check_reasoning_only(facts: Facts) -> list[Finding]:
    """Reasoning and no answer, in a stream (or a response body) that ended as an answer ends (a tool call, an
    abort, or a stream still going says nothing about where the answer went)."""
    answer = _stream(facts) or facts.first_event(LogEventKind.ANSWER_BODY)
    if answer is None or answer.answer_chars or not answer.reasoning_chars:
        return []
    if answer.finish_reason not in _ANSWER_ENDS:
        return []
    if answer.finish_reason == "length":
        return [_ran_out(answer)]
    return [_misrouted(answer) if answer.kind == LogEventKind.STREAMED_ANSWER else _never_ended(answer)]


def _ran_out(answer: LogEvent) -> Finding:
    streamed = answer.kind == LogEventKind.STREAMED_ANSWER
    spent = f" ({answer.generated_tokens} tokens)" if answer.generated_tokens else ""
    return RULE_REASONING_ONLY.finding(
        Severity.MEDIUM,
        f"the {'streamed ' if streamed else ''}answer ran out of max_tokens{spent} while the model was still "
        "reasoning: no content came",
        summary=f"Every token went to reasoning ({'delta' if streamed else 'message'}.reasoning), none to content, "
        f"and the {'stream' if streamed else 'response'} ended with finish_reason length: the request's max_tokens "
        "was spent before the model finished thinking.",
        evidence=[_evidence(answer, "reasoning characters, no content", answer.reasoning_chars)],
        actions=[
            "Raise the request's max_tokens (client side) so the answer fits after the reasoning, or lower the "
            "reasoning's length (a thinking budget where the model takes one, or enable_thinking=false in "
            "chat_template_kwargs where its template reads it).",
        ],
        confidence=0.8,
    )


# What to check when the model's end-of-thinking token never reached the parser, streamed or not
_PARSER_ADVICE = (
    "check that --reasoning-parser is the one the model card names, and that the chat template lets the model emit "
    "its end-of-thinking token; without the parser all text is content."
)


def _misrouted(stream: LogEvent) -> Finding:
    # a paste that leaves lines out between its chunks may have left the content out with them
    gaps = stream.stream_gaps or 0
    return RULE_REASONING_ONLY.finding(
        Severity.MEDIUM if gaps else Severity.HIGH,
        "the whole streamed answer came as reasoning, none as content: the reasoning parser never saw reasoning end"
        + (" (as far as the pasted chunks show)" if gaps else ""),
        summary=(
            f"The paste leaves {gaps} line(s) out between its chunks; the content may be in them. " if gaps else ""
        )
        + "A client reading delta.content shows an empty answer. With thinking turned off "
        "(chat_template_kwargs enable_thinking=false) the prompt itself closes the think block, so the text is the "
        "answer; vLLM's streaming path decided that from prompt_token_ids, which some chunks lack, and routed the "
        "answer into delta.reasoning while the non-streamed response was right (vllm#40816 with Qwen3's parser, "
        "fixed by vllm PR #40820). With thinking on, the model ended without the end-of-thinking token the parser "
        "waits for.",
        evidence=[_evidence(stream, "reasoning characters, no content", stream.reasoning_chars)],
        actions=[
            "If the request turns thinking off (enable_thinking=false): upgrade vLLM to a release with vllm PR "
            "#40820; meanwhile read delta.reasoning as the answer, or request without streaming.",
            "If thinking is on: " + _PARSER_ADVICE,
        ],
        confidence=0.6 if gaps else 0.75,
    )


def _never_ended(body: LogEvent) -> Finding:
    """A non-streamed answer all in reasoning, ended by the model: the streaming misrouting of vllm#40816 is not it
    (its non-streamed response was right), so the parser never saw the model's end-of-thinking token."""
    return RULE_REASONING_ONLY.finding(
        Severity.MEDIUM,
        "the whole answer came as reasoning, none as content: the reasoning parser never saw reasoning end",
        summary="The response's message holds reasoning and no content, and the model stopped (finish_reason stop). "
        "vLLM's reasoning parser moves the text before the model's end-of-thinking token into message.reasoning; "
        "a model that never emits that token (thinking the template did not close, a parser for another model "
        "family, a fine-tune without the token) leaves everything there.",
        evidence=[_evidence(body, "reasoning characters, no content", body.reasoning_chars)],
        actions=[
            _PARSER_ADVICE[0].upper() + _PARSER_ADVICE[1:] + " Meanwhile read message.reasoning as the answer.",
        ],
        confidence=0.6,
    )


def _stream(facts: Facts) -> LogEvent | None:
    return facts.first_event(LogEventKind.STREAMED_ANSWER)


def _evidence(answer: LogEvent, name: str, value: int | None) -> Evidence:
    evidence = c.log_evidence(answer, name=name, value=value)
    where = f"the {answer.chunks} pasted chunk(s)" if answer.kind == LogEventKind.STREAMED_ANSWER else "the body"
    evidence.description = f"{name}, in {where}"
    return evidence


RULE_FINISH_REASON = Rule(
    code="OP-5.67",
    title="streamed chunks without finish_reason",
    category=Category.RELIABILITY,
    check=_check_finish_reason,
    needs=("events",),
    page=RulePage(
        checks='A pasted stream (`data: {"object": "chat.completion.chunk", …}` lines) whose choices leave the '
        "finish_reason key out.",
        why="OpenAI's chunks carry it, null until the last; strict clients refuse chunks without it, and vLLM 0.9.0 "
        "dropped it (vllm#19650).",
        example='`data: {…"choices":[{"index":0,"delta":{"content":"안","tool_calls":[]}}]}` from vLLM 0.9.0 '
        "(vllm#19650).",
        fix="Upgrade vLLM past 0.9.0 (vllm PR #19662).",
        limits="Reads the chunks pasted; a stream another server wrote is read the same way.",
        references=["https://github.com/vllm-project/vllm/issues/19650"],
    ),
)

RULE_REASONING_ONLY = Rule(
    code="OP-5.68",
    title="a streamed answer that came entirely as reasoning",
    category=Category.RELIABILITY,
    check=_check_reasoning_only,
    needs=("events",),
    page=RulePage(
        checks="A pasted stream (or a non-streamed response body) that ended with finish_reason stop or length, whose "
        "text is all in reasoning (or reasoning_content) and none in content or a tool call.",
        why="A client reading content shows nothing: the output ran out while reasoning (finish_reason length), or "
        "the parser never saw reasoning end (stop): vLLM's streaming misrouting with thinking off (vllm#40816).",
        example='`data: {…"choices":[{"index":0,"delta":{"reasoning":"1"},"finish_reason":null}]}` … then '
        '`"finish_reason":"stop"`, Qwen3 with enable_thinking=false (vllm#40816).',
        fix="Length: raise max_tokens. Stop: upgrade vLLM (vllm PR #40820), or the parser the model card names.",
        limits="The request's chat_template_kwargs are not in the stream; both readings are named for stop. A paste "
        "that leaves lines out between its chunks lowers the reading to MEDIUM.",
        references=["https://github.com/vllm-project/vllm/issues/40816"],
    ),
)

RULES: list[Rule] = [RULE_FINISH_REASON, RULE_REASONING_ONLY]
