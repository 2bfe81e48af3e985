"""OP-5.32: gpt-oss's output refused by the Harmony parser vLLM reads it with.

Why a rule of its own: gpt-oss writes every reply in OpenAI's Harmony format (`<|start|>assistant<|channel|>final
<|message|>…<|return|>`), and vLLM parses the generated tokens with the openai_harmony library. When the tokens do
not form a Harmony message, the library's words reach the client (releases up to at least 0.18 let its
HarmonyError fail the request, vllm-project/guidellm#979; 0.32 skips tokens the parser refuses,
vllm/parser/harmony.py). The words are
openai_harmony's, not vLLM's, so its message catalog does not hold them, and one of them ("Unknown role") is also
a DeepSeek encoder's message in vLLM.

Two kinds, with different fixes:
- "Unexpected token 200002 while expecting start token 200006": a token that ends a turn (<|return|>, <|call|>,
  <|end|>) where the next message's <|start|> must be. Generation went on past the end of the turn, which the
  request asks for with `ignore_eos: true` (benchmark clients send it to force output lengths) or `min_tokens`
  (vllm-project/guidellm#979, fixed by GuideLLM no longer sending it, guidellm#982).
- a header the parser cannot read (an unknown role such as `<|start|>assistant` twice, a channel marker with no
  channel name): the model strayed from the format, which follows from the prompt vLLM builds for it (its system
  message declares the valid channels); a release or a fork's merge that changed that prompt regressed it
  (tenstorrent/vllm#386: v0.16 stopped restricting the channels to analysis/final without custom tools).

The token ids are gpt-oss's Harmony encoding's (openai_harmony 0.0.11, `load_harmony_encoding(HARMONY_GPT_OSS)`).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# gpt-oss's Harmony special tokens, by id (openai_harmony's o200k_harmony encoding).
HARMONY_TOKENS: dict[int, str] = {
    200002: "<|return|>",
    200005: "<|channel|>",
    200006: "<|start|>",
    200007: "<|end|>",
    200008: "<|message|>",
    200012: "<|call|>",
}
# The tokens that end a turn or a message: one where a <|start|> must come means generation went past an end.
TURN_ENDS = frozenset({200002, 200007, 200012})
# What the parser's words about a header mean, in an operator's words.
_HEADER_WORDS = (
    ("channel marker present but no channel value", "a channel marker with no channel name after it"),
    ("Unknown role", "a role Harmony does not know"),
    ("did not contain a role", "a message header without its role"),
    ("unexpected tokens remaining in message header", "tokens left over in a message header"),
)
UPGRADE = (
    "Upgrade vLLM (with the openai-harmony version it pins): 0.32 skips the tokens Harmony's parser cannot place "
    "instead of failing the request (vllm/parser/harmony.py)."
)


def _token(token_id: int) -> str:
    name = HARMONY_TOKENS.get(token_id)
    return f"{name} ({token_id})" if name else str(token_id)


def _check_harmony(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.HARMONY_ERROR)
    if not events:
        return []
    past_end = next((e for e in events if e.token_ids and e.token_ids[0] in TURN_ENDS), None)
    return [_past_the_end(past_end, len(events)) if past_end is not None else _bad_header(events)]


def _past_the_end(event: LogEvent, count: int) -> Finding:
    got, wanted = event.token_ids[0], event.token_ids[1]
    evidence = c.log_evidence(event, name="harmony_error", value=event.message)
    evidence.description = f"Harmony's parser got {_token(got)} where {_token(wanted)} must come"
    return RULE_HARMONY.finding(
        Severity.HIGH,
        f"gpt-oss generated past the end of its turn: Harmony's parser got {_token(got)} where a new message's "
        f"{_token(wanted)} must come",
        summary=f"{_token(got)} ends a turn in gpt-oss's Harmony format; the tokens after it are no Harmony message, "
        "so the parser refuses them and vLLM fails the request. Generation does not stop at the end of a turn when "
        "the request says not to: `ignore_eos: true` (benchmark clients send it to force output lengths: GuideLLM, "
        "`vllm bench serve --ignore-eos`, genai-perf) or `min_tokens` longer than the answer"
        + (f"; {count} such errors in the text." if count > 1 else "."),
        evidence=[evidence],
        actions=[
            "Drop ignore_eos (and min_tokens) from requests to gpt-oss: in a benchmark, let it stop at the end of "
            "its turn and cap the output with max_tokens (GuideLLM stopped sending ignore_eos for this, "
            "vllm-project/guidellm#982; `vllm bench serve` without --ignore-eos).",
            UPGRADE,
        ],
        confidence=0.85,
    )


def _bad_header(events: list[LogEvent]) -> Finding:
    said = list(dict.fromkeys(e.message or "" for e in events))
    meant = list(dict.fromkeys(words for e in events for key, words in _HEADER_WORDS if key in (e.message or "")))
    evidence = c.log_evidence(events[0], name="harmony_error", value=events[0].message)
    evidence.description = "openai_harmony's parser refusing the header gpt-oss wrote"
    return RULE_HARMONY.finding(
        Severity.HIGH,
        "gpt-oss wrote message headers Harmony's parser cannot read: " + ("; ".join(meant) or said[0][:120]),
        summary=f"vLLM parses gpt-oss's output with openai_harmony, and {len(said)} kind(s) of header failed it "
        f"({'; '.join(s[:80] for s in said)}). The model strays from the Harmony format when the prompt vLLM builds "
        "for it differs from what it was trained on: the system message that declares its valid channels, the "
        "chat template, the tools. A vLLM release or a fork's merge that changed that prompt fails a share of "
        "requests this way.",
        evidence=[evidence],
        actions=[
            UPGRADE,
            "If it began with an upgrade or a fork's merge, the release before it is the comparison: a regression "
            "in the prompt vLLM builds for gpt-oss (tenstorrent/vllm#386: from v0.16 the system message no longer "
            "limited the channels to analysis and final without custom tools).",
        ],
        confidence=0.7,
    )


RULE_HARMONY = Rule(
    code="OP-5.32",
    title="gpt-oss's output refused by the Harmony parser: past the end of its turn, or a header it cannot read",
    category=Category.RELIABILITY,
    check=_check_harmony,
    needs=("events",),
    page=RulePage(
        checks="openai_harmony's errors as vLLM passes them on: `Unexpected token N while expecting start token "
        "200006` and `HarmonyError('Unknown role: …')`, `channel marker present but no channel value found in "
        "header`, `message header did not contain a role`, `unexpected tokens remaining in message header`.",
        why="gpt-oss replies in the Harmony format and vLLM parses every generated token with openai_harmony; what "
        "the parser refuses fails the request (up to at least 0.18), and the two kinds of refusal have "
        "different causes: the request asked for tokens past the end of the turn, or the model wrote a header "
        "off the format.",
        example="ValueError('Streaming response returned an error: Unexpected token 200002 while expecting start "
        "token 200006'): 65 % of GuideLLM's 1024-token requests to gpt-oss-120b on vLLM 0.18, all sent with "
        "ignore_eos (vllm-project/guidellm#979).",
        fix="A turn's end token where <|start|> must be: no ignore_eos or min_tokens for gpt-oss, then an upgrade. "
        "A header it cannot read: upgrade vLLM; compare with the release before if it began with one.",
        limits="Token ids are named from gpt-oss's Harmony encoding; another model's ids would be misnamed, but no "
        "other model is parsed with Harmony.",
        references=[
            "https://github.com/vllm-project/guidellm/issues/979",
            "https://github.com/tenstorrent/vllm/issues/386",
        ],
    ),
)

RULES: list[Rule] = [RULE_HARMONY]
