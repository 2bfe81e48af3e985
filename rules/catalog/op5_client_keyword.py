"""OP-5.62: the openai Python package refused a keyword before any request reached vLLM.

Why a rule of its own: vLLM's OpenAI-compatible server reads request fields OpenAI's API lacks (`top_k`, `min_p`,
`repetition_penalty`, `chat_template_kwargs`, `structured_outputs` …), and people pass them as they pass
`temperature`: as keywords of `client.chat.completions.create(…)`. The openai package (1.x) declares OpenAI's
parameters as the method's own keywords, so Python refuses any other (`TypeError: Completions.create() got an
unexpected keyword argument 'top_k'`) and nothing is sent: the server's log is clean, and no server flag changes it.
vLLM's documentation of its OpenAI-compatible server says how such fields travel: the client's `extra_body`, which
the package merges into the JSON body. A keyword that is neither OpenAI's nor vLLM's is the calling program's own
mistake (infiniflow/ragflow#11688: a leftover `unused` argument in RAGFlow's model call, fixed there), which only
that program's code or release changes. One of OpenAI's own parameters (`max_completion_tokens`, `messages`) is the
openai package older than it, or the call on the other endpoint. Whether vLLM's request models have the keyword, or
had it (the guided_* fields later releases replaced with `structured_outputs`), is the collector's lookup in vLLM
0.32's interface.
"""

from __future__ import annotations

import json

from rules.catalog import common as c
from rules.events import OPENAI_PARAMETER, REMOVED_REQUEST_FIELD, VLLM_REQUEST_FIELD, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

EXTRA_PARAMETERS = "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#extra-parameters"
# The structured_outputs member that replaced each guided_* request field (StructuredOutputsParams)
_STRUCTURED: dict[str, str] = {
    "guided_json": "json",
    "guided_regex": "regex",
    "guided_choice": "choice",
    "guided_grammar": "grammar",
    "guided_whitespace_pattern": "whitespace_pattern",
}


# Every reading's last word: the refusal is the client's, before any request
_NOT_THE_SERVER = "No server flag changes this: the vLLM server is not involved until the client sends a request."


def _refused(event: LogEvent, keyword: str) -> list[Evidence]:
    """The line where the client refused the keyword: every reading's evidence."""
    return [c.log_evidence(event, name="openai client's create()", value=keyword)]


def _body(members: dict) -> str:
    """extra_body as a person writes it: JSON with `…` where their value goes."""
    return json.dumps(members, ensure_ascii=False).replace('"…"', "…")


def _client_keyword_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    keyword = event.request_field or "?"
    if event.component == OPENAI_PARAMETER:
        return _openai_parameter(event, keyword)
    if event.component == VLLM_REQUEST_FIELD:
        return _vllm_field(event, keyword)
    if event.component == REMOVED_REQUEST_FIELD:
        return _removed_field(event, keyword)
    return RULE_CLIENT_KEYWORD.finding(
        Severity.HIGH,
        f"the calling program passes the openai client's create() {keyword!r}, which neither OpenAI's API nor vLLM's "
        "server takes: no request was sent",
        summary=f"{event.message}: Python refused the keyword inside the client, before a request left it, so the "
        f"server never saw one. {keyword} is not among vLLM's request fields either, so passing it through "
        "extra_body would not help: the program that calls the client passes something it should not.",
        evidence=_refused(event, keyword),
        actions=[
            f"Find where the program builds the create() call and what puts {keyword} there (a leftover or "
            "misspelt argument: infiniflow/ragflow#11688 was one, fixed in RAGFlow's code); upgrade the program, or "
            "the openai package it was written for (`pip show openai`).",
            _NOT_THE_SERVER,
        ],
        confidence=0.75,
    )


# The parameter that sends a call to the other endpoint: a chat's messages to the completions API, a prompt to chat
_OTHER_ENDPOINT = {
    "messages": "`client.chat.completions.create(messages=…)`: messages belong to the chat API, and "
    "`client.completions.create` takes a prompt",
    "prompt": "`client.completions.create(prompt=…)`: a prompt belongs to the completions API, and "
    "`client.chat.completions.create` takes messages",
}


def _openai_parameter(event: LogEvent, keyword: str) -> Finding:
    """One of OpenAI's own parameters: the package predates it, or the call is on the other endpoint."""
    endpoint = _OTHER_ENDPOINT.get(keyword)
    return RULE_CLIENT_KEYWORD.finding(
        Severity.HIGH,
        f"the openai client refused {keyword}, one of OpenAI's own parameters: "
        + ("the call is on the other endpoint" if endpoint else "the installed openai package predates it")
        + ", and no request was sent",
        summary=f"{event.message}: the openai package's create() takes the parameters of the endpoint it calls, as "
        f"its release knows them, and refuses others before sending. {keyword} is a parameter of OpenAI's API, so "
        + (
            "it belongs to the other endpoint's call."
            if endpoint
            else "the package is older than it (`pip show openai`), or the call is on an endpoint without it."
        ),
        evidence=_refused(event, keyword),
        actions=[
            f"Call {endpoint}."
            if endpoint
            else "Upgrade the openai package in the client's environment (`pip install -U openai`); until then, "
            f'`extra_body={{"{keyword}": …}}` sends it as it is.',
            _NOT_THE_SERVER,
        ],
        confidence=0.75,
    )


def _vllm_field(event: LogEvent, keyword: str) -> Finding:
    body = _body({keyword: "…"})
    return RULE_CLIENT_KEYWORD.finding(
        Severity.HIGH,
        f"the openai client refused {keyword}, a request field of vLLM's that is not OpenAI's: pass it in "
        f"extra_body, and no request was sent",
        summary=f"{event.message}: the openai package's create() takes OpenAI's parameters as its keywords and "
        f"refuses any other before sending. {keyword} is a field vLLM's request models read; the client sends such "
        "fields when they are given in extra_body, which it merges into the request's JSON.",
        evidence=_refused(event, keyword),
        changes=[
            ConfigChange(
                flag="extra_body",
                proposed=body,
                reason=f"the openai client merges extra_body into the JSON it sends, where vLLM reads {keyword}",
                kind="setting",
            )
        ],
        actions=[
            f"Call `create(…, extra_body={body})` instead of `create(…, {keyword}=…)` (vLLM's documentation of its "
            f"OpenAI-compatible server, 'Extra parameters': {EXTRA_PARAMETERS}). If {keyword} is one of OpenAI's "
            "own newer parameters, a newer openai package takes it as a keyword too (`pip install -U openai`).",
        ],
        confidence=0.85,
    )


def _removed_field(event: LogEvent, keyword: str) -> Finding:
    member = _STRUCTURED.get(keyword)
    if member is None:  # guided_decoding_backend: the server's choice now, no request field
        return _server_side_field(event, keyword)
    body = _body({"structured_outputs": {member: "…"}})
    old = _body({keyword: "…"})
    return RULE_CLIENT_KEYWORD.finding(
        Severity.HIGH,
        f"the openai client refused {keyword}, a request field older vLLM releases read: vLLM 0.32 reads "
        "structured_outputs instead, passed in extra_body",
        summary=f"{event.message}: the openai package's create() refuses keywords that are not OpenAI's before "
        f"sending. {keyword} was a guided-decoding field of older vLLM releases; vLLM 0.32's request models have "
        "structured_outputs in its place, and a server that no longer reads a guided_* field answers unconstrained.",
        evidence=_refused(event, keyword),
        changes=[
            ConfigChange(
                flag="extra_body",
                proposed=body,
                reason="the openai client sends extra_body's members in the request's JSON; structured_outputs is "
                f"what a current vLLM reads in place of {keyword}",
                kind="setting",
            )
        ],
        actions=[
            f"Send `extra_body={body}` (on a server older than the guided_* "
            f"fields' removal, `extra_body={old}` works too); `response_format` with a `json_schema` is "
            f"OpenAI's own way to ask for JSON ({EXTRA_PARAMETERS}).",
        ],
        confidence=0.8,
    )


def _server_side_field(event: LogEvent, keyword: str) -> Finding:
    return RULE_CLIENT_KEYWORD.finding(
        Severity.HIGH,
        f"the openai client refused {keyword}, a request field older vLLM releases read: the structured-output "
        "backend is the server's setting now",
        summary=f"{event.message}: the openai package's create() refuses keywords that are not OpenAI's before "
        f"sending. {keyword} chose the guided-decoding backend per request in older vLLM releases; vLLM 0.32's "
        "requests have no such field, and the server chooses the backend.",
        evidence=_refused(event, keyword),
        actions=[
            "Drop it from the request and choose the backend where the server starts: `--structured-outputs-config "
            '\'{"backend": "xgrammar"}\'` (or guidance, outlines) on vLLM 0.32.',
        ],
        confidence=0.75,
    )


RULE_CLIENT_KEYWORD = Rule(
    code="OP-5.62",
    title="the openai client refused a keyword before sending the request",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.CLIENT_KEYWORD_REFUSED, _client_keyword_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `TypeError: Completions.create() got an unexpected keyword argument 'k'` (any of the "
        "openai package's resources, async too; a bare `create()` only for a keyword of vLLM's), and whether vLLM "
        "0.32's request models have `k` or older releases' did.",
        why="vLLM's request fields that OpenAI's API lacks must travel in the client's extra_body; passed as "
        "keywords, the client refuses them and sends nothing.",
        example="`TypeError: Completions.create() got an unexpected keyword argument 'top_k'`; "
        "`Completions.create() got an unexpected keyword argument 'unused'` (infiniflow/ragflow#11688: RAGFlow's "
        "own leftover argument).",
        fix="extra_body={'k': …} for a field of vLLM's (structured_outputs for a guided_* one); the calling "
        "program's fix for a keyword neither API has.",
        limits="Reads the keyword only; OpenAI's own parameters are those its API reference lists (rules/events.py's "
        "OPENAI_PARAMETERS), so one newer than the list reads as vLLM's field, whose extra_body fix works for it too.",
        references=[EXTRA_PARAMETERS, "https://github.com/infiniflow/ragflow/issues/11688"],
    ),
)

RULES: list[Rule] = [RULE_CLIENT_KEYWORD]
