"""OP-5.47: vLLM answered 400 with a JSON decoder's words: JSON inside the request does not parse.

Why a rule of its own: the request's body itself parsed (FastAPI would otherwise answer its own 422), but vLLM parses
JSON carried inside it as strings, and hands Python's json error back as the 400's message, without saying which
string. The one every chat request with tool history carries is `tool_calls[].function.arguments` of earlier
assistant turns: vLLM's chat_utils `_postprocess_messages` turns each into a dict with json.loads before it renders
the chat template (tool-use templates expect dicts). A client replays what the model wrote there, so one malformed
tool call from the model (an unterminated string, a missing comma) fails every later turn of that conversation:
vllm#43995 (the reporter traced `Expecting ',' delimiter` to a historical tool call's arguments) and vllm#47761 (a
contributor traced `Unterminated string starting at` to `_postprocess_messages`, whatever the tool parser).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Python's json module's own words for a document it could not parse, with where it stopped.
JSON_DECODER_WORDS = re.compile(
    r"^(?P<words>(?:Expecting (?:value|'[,:]' delimiter|property name enclosed in double quotes)|Unterminated string "
    r"starting at|Extra data|Invalid control character at|Invalid \\escape)): line (?P<line>\d+) column "
    r"(?P<column>\d+) \(char \d+\)$"
)
# The error body's type vLLM gives a request it refused (entrypoints' ErrorResponse for HTTP 400); the same failure
# in the API server's own log (`ERROR … [serving_chat.py:193] json.decoder.JSONDecodeError: …`, instructor#1336).
REFUSED_REQUEST = "BadRequestError"
JSON_ERROR = "JSONDecodeError"
SERVER = "API server"


def _check_request_json(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        said = (event.message or "").removeprefix(f"{event.exception}: ")
        refused = event.exception == REFUSED_REQUEST or (event.exception == JSON_ERROR and event.component == SERVER)
        decoded = JSON_DECODER_WORDS.match(said) if refused else None
        if decoded is not None:
            return [_finding(event, decoded)]
    return []


def _finding(event: LogEvent, decoded: re.Match[str]) -> Finding:
    where = f"line {decoded['line']}, column {decoded['column']}"
    return RULE.finding(
        Severity.HIGH,
        f"vLLM refused the request (400): JSON inside it does not parse ({decoded['words']} at {where}), most "
        "often an earlier tool call's arguments",
        summary="The body parsed, so the broken JSON is a string inside it that vLLM parses itself. In a chat "
        "request that is first the `function.arguments` of each earlier assistant tool call: vLLM turns them into "
        "dicts with json.loads before rendering the chat template (chat_utils' _postprocess_messages), and a "
        "client replays the model's own malformed call there, so every later turn of that conversation fails the "
        "same way.",
        evidence=[c.log_evidence(event, name="the JSON error vLLM answered with", value=decoded.group(0))],
        actions=[
            "Check the request's assistant messages: each `tool_calls[].function.arguments` must be a string holding "
            f"valid JSON (the error's {where} is inside that string); repair or drop the turn whose arguments do not "
            "parse before sending the conversation again.",
            'Stop the model writing such calls: a named tool_choice, or "required" (vLLM 0.8.3 on), constrains '
            'its output to the tools\' JSON schema with structured outputs; with "auto", use the --tool-call-parser '
            "vLLM's documentation pairs with the model and its tool chat template.",
            "Other strings vLLM parses as JSON are structured-output specifications given as strings (guided_json); "
            "check those if the request has no tool history.",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-5.47",
    title="vLLM refused the request: JSON inside it does not parse",
    category=Category.RELIABILITY,
    check=_check_request_json,
    needs=("events",),
    page=RulePage(
        checks="An error body of type BadRequestError whose message is Python's json error (`Expecting ',' "
        "delimiter: line 1 column 54 (char 53)`, `Unterminated string starting at: …`).",
        why="The 400 names no field; the string vLLM failed to parse is most often the replayed arguments of an "
        "earlier tool call, which breaks every later turn of the conversation.",
        example='`{"error":{"message":"Expecting \',\' delimiter: line 1 column 54 (char 53)","type":'
        '"BadRequestError","param":null,"code":400}}` for a history holding a malformed tool call '
        "(vllm#43995).",
        fix="Valid JSON in every replayed `function.arguments` (repair or drop the turn); tool calls constrained by a "
        "named or required tool_choice.",
        limits="The body does not say which string failed; tool-call arguments are the likeliest, not the only one.",
        references=[
            "https://github.com/vllm-project/vllm/issues/43995",
            "https://github.com/vllm-project/vllm/issues/47761",
        ],
    ),
)

RULES: list[Rule] = [RULE]
