"""OP-5.48: a client could not read the server's answer: it parsed an error body as if it were a completion.

Why a rule of its own: when vLLM refuses or fails a request it answers with an error body, and a client that reads
the answer without checking the status first fails in its own words, which hide vLLM's. A hand-written client (or a
framework's: DSPy's HFClientVLLM, vLLM's own benchmark client) indexes the completion's `choices` and raises
`KeyError: 'choices'` (stanfordnlp/dspy#1242); langchain-openai raises `TypeError: Received response with null value
for `choices`` (langchain-ai/langchain#32252). The openai package before 1.0 reads an error's message under the body's
`error` key (`error_data = resp["error"]` in api_requestor.py's handle_error_response, openai 0.28.1), while vLLM
before 0.10.1 wrote its message at the body's top level (`{"object": "error", "message": …}`; vllm PR #22099 nested
it under `error`, as OpenAI's API does): the old client raises `KeyError: 'error'` (vllm#17977, whose body was the
chat-template refusal) or, for a body that is not a JSON object, `TypeError: string indices must be integers`
(vllm#749), then its own `APIError: Invalid response object from API: '<the body>'`. The cause is in that body.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# A completion's list every answer has and an error body lacks: Python's KeyError for it, langchain-openai's words.
NO_CHOICES = re.compile(r"^(?:'choices'|\"choices\"|Received response with null value for `choices`\.?)$")
# The openai package before 1.0 reading an error body's `error` key: its file and the function that reads it.
OLD_OPENAI_FILE = re.compile(r"openai[/\\]api_requestor\.py$")
OLD_OPENAI_READER = "handle_error_response"
OLD_OPENAI_WORDS = ("'error'", "string indices must be integers")
ERROR_FORMAT_NESTED = "0.10.1"  # the first vLLM release whose error bodies nest the message under `error`


class Unread(NamedTuple):
    """An answer a client failed to read: the error it raised and whether it was openai's client before 1.0."""

    event: LogEvent
    said: str
    old_openai: bool


def _unread(event: LogEvent) -> Unread | None:
    said = (event.message or "").removeprefix(f"{event.exception}: ").strip()
    if event.exception in ("KeyError", "TypeError") and NO_CHOICES.match(said):
        return Unread(event, said, old_openai=False)
    in_old_openai = bool(OLD_OPENAI_FILE.search(event.code_file or "")) or event.function == OLD_OPENAI_READER
    if in_old_openai and event.exception in ("KeyError", "TypeError") and said in OLD_OPENAI_WORDS:
        return Unread(event, said, old_openai=True)
    return None


def _check_client_parse(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        unread = _unread(event)
        if unread is not None:
            return [_old_openai_finding(unread) if unread.old_openai else _no_choices_finding(unread)]
    return []


def _client(event: LogEvent) -> str:
    package = c.installed_package(event.code_file)
    return f"the client ({package})" if package else "the client"


def _no_choices_finding(unread: Unread) -> Finding:
    client = _client(unread.event)
    return RULE.finding(
        Severity.HIGH,
        f"{client.capitalize()} read an answer without `choices`: the server answered with an error, not a "
        "completion, and the client's parser hid it",
        summary="Every completion vLLM returns has `choices`; an error body (a refused request, a failed one, a "
        "model name the server does not serve) has none, and neither has a page from something else at that URL "
        f"(a proxy, a route that is not OpenAI's). {client.capitalize()} read the answer without checking its "
        "status first, so its own error stands where the server's message should be: that message is the cause.",
        evidence=[c.log_evidence(unread.event, name="the client's error", value=unread.said)],
        actions=[
            "Print the status and the raw body of the answer the client got (or read the API server's log at that "
            "time, and its access log's status for the request): the error vLLM answered names the cause; paste it "
            "to `servops triage`.",
            "Check the client's URL and model name against the server: the path must be /v1/completions or "
            "/v1/chat/completions and the model one `GET /v1/models` lists.",
            "In code you own, read `choices` only after a 2xx status, and show the body otherwise.",
        ],
        confidence=0.6,
    )


def _old_openai_finding(unread: Unread) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        f"The openai client before 1.0 could not read vLLM's error body ({unread.event.exception}: {unread.said}): "
        "the request failed, and the reason is in that body",
        summary="openai before 1.0 reads an error's message under the body's `error` key; vLLM before "
        f'{ERROR_FORMAT_NESTED} writes it at the body\'s top level (`{{"object": "error", "message": …}}`), '
        "so the client raises this instead of vLLM's refusal (a body that is not a JSON object gives the "
        "TypeError). The `APIError: Invalid response object from API: '…'` it raises next quotes the body.",
        evidence=[c.log_evidence(unread.event, name="openai 0.x's error", value=unread.said)],
        actions=[
            "Read the body in the `Invalid response object from API: '…'` line after this traceback (or the API "
            "server's log): its message is why vLLM refused or failed the request; paste it to `servops triage`.",
            "Upgrade the client to openai 1.x (`pip install -U openai`, with `openai.OpenAI(base_url=…)`): its errors "
            f"quote the whole body; vLLM {ERROR_FORMAT_NESTED} and later also nest the message as OpenAI does.",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-5.48",
    title="A client could not read the server's answer: an error body read as a completion",
    category=Category.RELIABILITY,
    check=_check_client_parse,
    needs=("events",),
    page=RulePage(
        checks="A client's `KeyError: 'choices'` (or langchain-openai's `null value for `choices``); openai 0.x's "
        "`KeyError: 'error'` or `TypeError: string indices must be integers` raised in api_requestor.py's "
        "handle_error_response.",
        why="The client's parser raises its own error where vLLM's message should be; the server's answer, an "
        "error body, holds the cause.",
        example="`KeyError: 'choices'` from DSPy's HFClientVLLM (stanfordnlp/dspy#1242); `KeyError: 'error'` from "
        "openai 0.x reading vLLM's chat-template refusal (vllm#17977).",
        fix="Read the raw body or the server's log and triage the error there; openai 1.x for old clients.",
        limits="The words hold the client's failure, not the server's reason; a bare KeyError: 'error' outside "
        "openai's file is not read.",
        references=[
            "https://github.com/stanfordnlp/dspy/issues/1242",
            "https://github.com/vllm-project/vllm/issues/17977",
            "https://github.com/vllm-project/vllm/issues/749",
            "https://github.com/vllm-project/vllm/pull/22099",
            "https://github.com/langchain-ai/langchain/issues/32252",
        ],
    ),
)

RULES: list[Rule] = [RULE]
