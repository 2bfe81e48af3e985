"""OP-5.19 to OP-5.22 and OP-5.28: what the client sends — messages the chat template refuses, one request at a
time, an empty prompt that killed the engine, a token id outside the model's vocabulary, a field vLLM's request
schema refuses.

Why a module of their own: these complaints look like the server's fault (HTTP 400s, low throughput, a dead
engine) but are settled in the client, and the text shows it: the template's own error in the body, every
stats line with one request running and none waiting, or the request log line of an empty prompt just
before the engine died, or a token id in the request that a device kernel then indexed past the vocabulary.
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import NO_CHAT_TEMPLATE, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

MIN_SINGLE_STREAM_LINES = 2  # stats lines that all show it, so it is not one quiet interval
EMPTY_PROMPT_WINDOW = 10  # lines between the empty prompt's request log and the engine's death


# --- OP-5.19 the chat template refused the conversation --------------------------------------------


def _check_template_refused(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.CHAT_TEMPLATE_REFUSED)
    if not events:
        return []
    syntax = [e for e in events if e.exception == "TemplateSyntaxError"]
    if syntax:
        return [_template_syntax(syntax[0])]
    order = [e for e in events if e.exception == MISTRAL_ORDER]
    if order:
        return [_mistral_order(order[0])]
    if all(e.message == NO_CHAT_TEMPLATE for e in events):
        return [_no_template(events[0])]
    turns = next(((e, refusal) for e in events if (refusal := _turn_refusal(e))), None)
    if turns is not None:
        return [_turns_refused(turns[0], *turns[1])]
    return [
        RULE_TEMPLATE_REFUSED.finding(
            Severity.HIGH,
            _roles_title(events[0]),
            summary="The error is raised by the model's own Jinja chat template, not by vLLM's checks: Mistral's and "
            "Llama 2's templates allow only user and assistant turns in alternation (a system message breaks it), "
            "Gemma's has no system role. vLLM returns the template's error as HTTP 400.",
            evidence=[c.log_evidence(events[0], name="chat template error")],
            actions=[
                "Send no system message in the request: merge its text into the first user message, and keep user "
                "and assistant turns alternating (merge consecutive messages of one role into one).",
            ],
            alternatives=[
                ConfigChange(
                    flag="--chat-template",
                    proposed="<a template file that accepts a system role and the turns the client sends>",
                    reason="the server, not every client, adapts the conversation to what the model was trained on",
                    cost="a template of your own to keep beside the model; a system prompt the model never saw in "
                    "training may be followed less well",
                )
            ],
            confidence=0.9,
        )
    ]


def _roles_title(event: LogEvent) -> str:
    """The template's own demand when it states one: Mistral's and Llama 2's templates raise `Conversation roles must
    alternate user/assistant/user/assistant/...` for a system message and for two turns of one role in a row alike
    (weaviate/Verba#150: a RAG app's history, no system message), so the title says what the template asks for and
    names both ways to break it rather than guessing the system message."""
    said = event.message or event.raw or ""
    if "must alternate" in said:
        return (
            "the model's chat template refused the conversation's roles: they must alternate user/assistant (a system "
            "message, or two turns of one role in a row, breaks that)"
        )
    return (
        "the model's chat template refused the conversation's roles: no system message, user and assistant alternating"
    )


# Templates that refuse a conversation for where its turns stand (a system message allowed first and once, then
# user and assistant alternating) or for what a turn holds: by their words, what the template refused, what is
# wrong and how to send it instead.
_ORDER = "the conversation's order"
_HELD = "what the conversation holds"
_TURN_REFUSALS: tuple[tuple[str, str, str, str], ...] = (
    (
        "After the optional system message",
        _ORDER,
        "two turns of the same role in a row (user then user, or assistant then assistant) after the optional system "
        "message",
        "Merge consecutive messages of one role into one (a client that sends a user message and then the tool's "
        "output as another user message, or retries by appending), so that user and assistant alternate after the "
        "first system message.",
    ),
    (
        "System message must be at the be",
        _ORDER,
        "a system message that is not the conversation's first",
        "Send one system message, first: merge the others into it, or send what an agent inserts mid-conversation "
        "(instructions, tool results) as user or tool messages.",
    ),
    (
        # Llama 3.1-3.3's templates (and vLLM's example tool templates for them): one tool call per assistant turn
        "only supports single tool-calls",
        _HELD,
        "an assistant turn with several tool calls (parallel calls), which this template takes one at a time",
        "Send one tool call per assistant message: in the history, split a turn with several calls into consecutive "
        "assistant messages of one call each, every one followed by its tool result; ask for parallel_tool_calls="
        "false so the reply holds one call (vLLM 0.32 keeps only a turn's first call then: "
        "entrypoints/serve/utils/tool_calls_utils.py).",
    ),
    (
        # a template that names the roles it knows and raises on any other (an OpenAI client's `developer` role:
        # ogx-ai/ogx#6069, Codex CLI through Llama Stack to a Qwen model on vLLM)
        "Unexpected message role",
        _HELD,
        "a message role the template does not know (OpenAI's newer `developer` role, or `function`)",
        "Send the roles the model's template knows (system, user, assistant, tool): map `developer` to `system` "
        "in the client or the gateway in front of vLLM.",
    ),
    (
        # Qwen 3.x's templates: the tool block is anchored on the last user message that is not a `<tool_response>`,
        # and none is there (a history trimmed to system, assistant and tool turns; a request with tools and only a
        # system message): `raise_exception('No user query found in messages.')`
        "No user query found in messages",
        _HELD,
        "a conversation with no user message (other than tool responses), which this template anchors its tool "
        "calls on",
        "Keep at least one user message (the task's) in every request: an agent or a gateway that trims the history "
        "to fit the context must not drop the last user turn, and a request with tools needs one beside the system "
        "message.",
    ),
)


def _turn_refusal(event: LogEvent) -> tuple[str, str, str] | None:
    said = event.message or event.raw or ""
    return next(((refused, what, how) for words, refused, what, how in _TURN_REFUSALS if words in said), None)


def _turns_refused(event: LogEvent, refused: str, what: str, how: str) -> Finding:
    return RULE_TEMPLATE_REFUSED.finding(
        Severity.HIGH,
        f"the model's chat template refused {refused}: {what}",
        summary="The error is raised by the model's own Jinja chat template, not by vLLM's checks: the template "
        "renders only conversations shaped as the model was trained on (where a system message may stand, which "
        "roles alternate, what one turn may hold). vLLM returns the template's error as HTTP 400, for every request "
        "the client builds this way.",
        evidence=[c.log_evidence(event, name="chat template error")],
        actions=[how],
        alternatives=[
            ConfigChange(
                flag="--chat-template",
                proposed="<a template file that accepts the turns the client sends>",
                reason="the server, not every client, adapts the conversation to what the model was trained on",
                cost="a template of your own to keep beside the model; turns the model never saw in training may be "
                "followed less well",
            )
        ],
        confidence=0.85,
    )


MISTRAL_ORDER = "InvalidMessageStructureException"  # mistral_common's refusal of a conversation's order


def _mistral_order(event: LogEvent) -> Finding:
    """mistral_common validates a conversation against Mistral's format before vLLM's Mistral tokenizer encodes it;
    an agent that answers a tool result with a new user turn breaks it (browser-use/browser-use#2059,
    mistralai/mistral-vibe#454: `Unexpected role 'user' after role 'tool'`)."""
    said = event.message or "an unexpected role"
    return RULE_TEMPLATE_REFUSED.finding(
        Severity.HIGH,
        f"Mistral's tokenizer refused the conversation's order: {said}",
        summary="With --tokenizer-mode mistral (Mistral's own models), vLLM encodes a chat with mistral_common, "
        "which first checks the order of the messages against Mistral's format: after a tool result comes the "
        "assistant's answer to it (or another tool result), not a new user message. The client sent a turn the "
        "format does not allow there; vLLM answers HTTP 400. Agent loops do this when they append the user's next "
        "message before the model answered the tool result.",
        evidence=[c.log_evidence(event, name="mistral_common's refusal", value=said)],
        actions=[
            "In the client, keep Mistral's order: after the tool messages, the assistant's reply (the model's "
            "answer to them) before the next user message: send the request with the tool results first, and the "
            "user's new text in the request after the model answered.",
        ],
        alternatives=[
            ConfigChange(
                flag="--tokenizer-mode",
                proposed="auto",
                reason="the Hugging Face tokenizer and the repository's chat template instead of mistral_common's "
                "validator: the template may accept the order (or refuse it in its own words)",
                cost="the repository's Jinja template formats tool calls instead of Mistral's own encoder; only for "
                "a model repository with Hugging Face tokenizer files",
            )
        ],
        confidence=0.8,
    )


def _template_syntax(event: LogEvent) -> Finding:
    """Jinja could not parse the template: every chat request fails the same way, whatever it holds."""
    return RULE_TEMPLATE_REFUSED.finding(
        Severity.HIGH,
        f"the chat template does not parse (Jinja: {event.message}): every chat request fails on it",
        summary="vLLM renders each chat request's messages into a prompt with the chat template, through Jinja; a "
        "template with a syntax error fails every chat request (HTTP 400, Jinja's words as the message) while "
        "/v1/completions, which needs no template, still answers. The template is the one --chat-template gives (a "
        "file; a value that is no file vLLM can open but holds a brace or a line break is taken as the template's "
        "text itself), or else the model's own (chat_template in tokenizer_config.json, or chat_template.jinja).",
        evidence=[c.log_evidence(event, name="Jinja syntax error", value=event.message)],
        actions=[
            "Parse the template where you can read Jinja's line number: `python -c \"import jinja2, sys; "
            'jinja2.Environment().parse(open(sys.argv[1]).read())" template.jinja`, fix it, and restart the '
            "server with it.",
            "If no --chat-template is given, the model's own template is the broken one (a fine-tune's copy edited "
            "by hand, most often): serve the base model's template with --chat-template, or fix chat_template in "
            "the model's tokenizer_config.json.",
        ],
        confidence=0.85,
    )


def _no_template(event: LogEvent) -> Finding:
    """transformers found no template to apply: the tokenizer defines none (a base model, most often)."""
    return RULE_TEMPLATE_REFUSED.finding(
        Severity.HIGH,
        "the tokenizer has no chat template: a chat request to a model that defines none (a base model, most often)",
        summary="A chat request needs the model's chat template to turn messages into a prompt; this tokenizer "
        "defines none, and transformers no longer supplies a default (vLLM's own words for it say so since "
        "transformers 4.44).",
        evidence=[c.log_evidence(event, name="chat template", value="not set")],
        changes=[
            ConfigChange(
                flag="--chat-template",
                proposed="<a Jinja template file for the model's format>",
                reason="the server then renders chat requests with it",
                cost="a template of your own to keep beside the model; a base model was not trained to chat",
            )
        ],
        actions=[
            "Serve the instruct (chat) variant of the model, which ships its template; or send plain prompts to "
            "/v1/completions, which needs no template.",
        ],
        confidence=0.85,
    )


RULE_TEMPLATE_REFUSED = Rule(
    code="OP-5.19",
    title="the model's chat template refused the conversation",
    category=Category.CONFIGURATION,
    check=_check_template_refused,
    needs=("events",),
    page=RulePage(
        checks="A chat template's own refusal in an error body or a log: `Conversation roles must alternate "
        "user/assistant/user/assistant/...`, `System role not supported`; transformers' `Cannot use chat template "
        "functions because tokenizer.chat_template is not set` (no template at all); Jinja's `TemplateSyntaxError` "
        "(a template that does not parse), or its words alone as a 400's message (`expected token 'end of print "
        "statement', got …`, `Encountered unknown tag …`); mistral_common's order check under --tokenizer-mode "
        "mistral, `Unexpected role 'user' after role 'tool'`; templates refusing what a turn holds: `This model "
        "only supports single tool-calls at once!` (Llama 3.1-3.3), `Unexpected message role.`",
        why="The template, shipped with the model, decides which roles a conversation may hold; vLLM passes its "
        "error back as HTTP 400, so the server looks at fault for what the client sent.",
        example="{'message': 'Conversation roles must alternate user/assistant/user/assistant/...'} for a system "
        "message to Mistral-7B-Instruct-v0.1 (vllm#2080).",
        fix="Merge the system message into the first user turn, or serve a chat template that accepts one.",
        limits="The template's words say which roles it refused, not which message of the request broke them.",
        references=[
            "https://github.com/vllm-project/vllm/issues/2080",
            "https://github.com/browser-use/browser-use/issues/2059",
        ],
    ),
)


# --- OP-5.20 one request at a time -----------------------------------------------------------------


def _check_single_stream(facts: Facts) -> list[Finding]:
    lines = c.stats_lines(facts)
    serving = [e for e in lines if (e.generation_throughput_tps or 0) > 0]
    if len(serving) < MIN_SINGLE_STREAM_LINES or any((e.running or 0) > 1 or (e.waiting or 0) > 0 for e in lines):
        return []
    rates = [e.generation_throughput_tps or 0.0 for e in serving]
    return [
        RULE_SINGLE_STREAM.finding(
            Severity.MEDIUM,
            f"one request at a time in all {len(lines)} stats lines ({min(rates):.1f}-{max(rates):.1f} tokens/s): "
            "the client does not send requests concurrently",
            summary="vLLM's throughput comes from batching many sequences into each step; with one running and none "
            "waiting, every request waits for the one before it and the server's throughput is one stream's speed. "
            "A 'batch' client that loops over its requests one by one looks exactly like this.",
            evidence=[c.log_evidence(serving[-1], name="running requests", value=serving[-1].running)],
            actions=[
                "Set the client's request concurrency above 1: send requests concurrently (asyncio with a semaphore, "
                "a thread pool, or the client's own concurrency option) so vLLM batches them.",
                "For offline batches, LLM.generate with the whole list batches by itself.",
            ],
            confidence=0.7,
        )
    ]


RULE_SINGLE_STREAM = Rule(
    code="OP-5.20",
    title="one request at a time: the client does not send concurrently",
    category=Category.SATURATION,
    check=_check_single_stream,
    needs=("events",),
    page=RulePage(
        checks=f"At least {MIN_SINGLE_STREAM_LINES} stats lines generating tokens, and every stats line with at most "
        "one request running and none waiting.",
        why="A server that never holds two requests at once cannot batch; its throughput is the latency of one "
        "stream, whatever the GPU.",
        example="Running: 1 reqs, Waiting: 0 reqs at 16-20 tokens/s while a 'batch' job ran: the client sent its "
        "requests one after another (meta-llama/synthetic-data-kit#67).",
        fix="Send requests concurrently from the client.",
        limits="A server with little traffic looks the same; the finding matters when the complaint is throughput.",
        references=["https://github.com/meta-llama/synthetic-data-kit/issues/67"],
    ),
)


# --- OP-5.21 an empty prompt before the engine died -------------------------------------------------


def _check_empty_prompt(facts: Facts) -> list[Finding]:
    deaths = facts.events_of(LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD)
    for empty in facts.events_of(LogEventKind.EMPTY_PROMPT):
        after = [d for d in deaths if 0 < (d.line_no or 0) - (empty.line_no or 0) <= EMPTY_PROMPT_WINDOW]
        if after:
            return [_empty_prompt_finding(empty, after[0])]
    return []


def _empty_prompt_finding(empty: LogEvent, death: LogEvent) -> Finding:
    return RULE_EMPTY_PROMPT.finding(
        Severity.CRITICAL,
        "a request with an empty prompt (no tokens) just before the engine died",
        summary="vLLM logged a request whose prompt was empty, and the engine died right after it. V0's scheduler "
        "asserted every scheduled sequence had tokens to compute (`assert num_new_tokens > 0`), so one empty "
        "prompt stopped the whole engine instead of failing its request (vllm#7632, fixed by vllm#7746, which "
        "rejects it).",
        evidence=[c.log_evidence(empty, name="empty prompt"), c.log_evidence(death)],
        actions=[
            "Upgrade vLLM: releases with vllm#7746 refuse an empty prompt with HTTP 400 instead of dying.",
            "Meanwhile reject empty prompts in the client or a proxy before they reach the server; restart it.",
            "If the server logs prompts cut to --max-log-len 0, every logged prompt looks empty: then this is not "
            "the cause.",
        ],
        confidence=0.9,
    )


RULE_EMPTY_PROMPT = Rule(
    code="OP-5.21",
    title="an empty prompt killed the engine",
    category=Category.RELIABILITY,
    check=_check_empty_prompt,
    needs=("events",),
    page=RulePage(
        checks=f"vLLM's request log of a request with an empty prompt (`Received request …: prompt: '',`) and, within "
        f"{EMPTY_PROMPT_WINDOW} lines after it, the engine's death (a fatal error, V0's background loop).",
        why="An empty prompt has no token to schedule; V0 asserted on it and lost every request in flight.",
        example="`Received request cmpl-…-0: prompt: ''` then `Engine background task failed` on 0.5.4 (vllm#7632).",
        fix="Upgrade vLLM (vllm#7746 rejects empty prompts); reject them in the client meanwhile.",
        limits="A server started with --max-log-len 0 logs every prompt empty; the death right after is what ties "
        "the two.",
        references=[
            "https://github.com/vllm-project/vllm/issues/7632",
            "https://github.com/vllm-project/vllm/pull/7746",
        ],
    ),
)


# --- OP-5.22 a token id outside the vocabulary ---------------------------------------------------------

# vLLM's catalog: sampling_params.py's `_validate_stop_token_ids` ("token_id(s) … in stop_token_ids contain
# out-of-vocab token ids") is first in 0.29; allowed_token_ids and logit_bias were checked long before.
STOP_TOKEN_IDS_CHECKED_FROM = "0.29"


def _check_token_outside_vocab(facts: Facts) -> list[Finding]:
    faults = [e for e in facts.events_of(LogEventKind.INDEX_OUT_OF_BOUNDS) if e.index_bound]
    for sent in facts.events_of(LogEventKind.REQUEST_TOKEN_IDS):
        for fault in faults:
            outside = [i for i in sent.token_ids if i >= (fault.index_bound or 0)]
            if outside and (fault.index is None or fault.index in sent.token_ids):
                return [_outside_vocab_finding(sent, fault, outside)]
    return []


def _outside_vocab_finding(sent: LogEvent, fault: LogEvent, outside: list[int]) -> Finding:
    field, ids = sent.request_field or "token ids", ", ".join(str(i) for i in outside)
    return RULE_TOKEN_OUTSIDE_VOCAB.finding(
        Severity.CRITICAL,
        f"the request's {field} hold {ids}, outside the model's vocabulary ({fault.index_bound:,} tokens): a kernel "
        "indexed past it",
        summary=f"A token id is a column of the logits, which are as wide as the model's vocabulary. {field} "
        f"reached the device as indices and the kernel that used {fault.index} found the dimension only "
        f"{fault.index_bound:,} wide: a device-side fault kills the worker, and with it every rank and every "
        "request in flight. Token ids are per tokenizer: an id copied from another model's (an end-of-turn token "
        "of another family) is the usual source. Before "
        f"{STOP_TOKEN_IDS_CHECKED_FROM} vLLM did not check stop_token_ids against the vocabulary, as it checked "
        "allowed_token_ids and logit_bias.",
        evidence=[c.log_evidence(sent, name=field, value=ids), c.log_evidence(fault, name="index out of bounds")],
        actions=[
            f"Upgrade vLLM to {STOP_TOKEN_IDS_CHECKED_FROM} or later: it refuses stop_token_ids outside the "
            "vocabulary with HTTP 400 instead of crashing the engine (sampling_params.py, vllm#54196).",
            f"Fix the client: send token ids from this model's own tokenizer (below {fault.index_bound:,}), or stop "
            "on text with `stop` strings, which need no ids; then restart the server.",
        ],
        confidence=0.9,
    )


RULE_TOKEN_OUTSIDE_VOCAB = Rule(
    code="OP-5.22",
    title="a token id in the request lies outside the model's vocabulary",
    category=Category.RELIABILITY,
    check=_check_token_outside_vocab,
    needs=("events",),
    page=RulePage(
        checks="Token ids a request carried (`stop_token_ids`, `allowed_token_ids`, in its JSON body or vLLM's "
        "request log) and an index error naming one of them, or a bound they pass: `index value N exceeds bounds "
        "M`, `index N is out of bounds for dimension D with size M`.",
        why="Token ids index the logits, as wide as the vocabulary; one the server did not check crashes a device "
        "kernel and the engine with it.",
        example='`"stop_token_ids": [151645]` to a model of 129,280 tokens, then `index value 151645 exceeds bounds '
        "129280` on every Ascend rank (vllm#54195).",
        fix=f"Upgrade vLLM ({STOP_TOKEN_IDS_CHECKED_FROM}+ refuses them); send ids from the served model's tokenizer.",
        limits="Needs both the request and the kernel's numbers in the text; a CUDA device assert prints no index.",
        references=[
            "https://github.com/vllm-project/vllm/issues/54195",
            "https://github.com/vllm-project/vllm/pull/54196",
        ],
    ),
)


# --- OP-5.28 a field the request schema refuses ---------------------------------------------------------


UNKNOWN_FIELDS_IGNORED_FROM = "0.6.5"  # the first release whose request models ignore unknown fields (0.6.4 refused)
# Fields of OpenAI's request shape that live one level down, which a client writes one level too high: vLLM's model
# of the outer object drops them as unknown (vllm#35438: `schema` at response_format's top level), and the request
# runs without them.
NESTED_REQUEST_FIELDS = {
    "schema": (
        "response_format.json_schema.schema",
        '"response_format": {"type": "json_schema", "json_schema": {"name": "…", "schema": {…}}}',
    ),
}


# Fields only Chat Completions' request has, ignored where a request to /v1/completions carries them (0.6.5 on):
# what the completions endpoint takes instead
CHAT_ONLY_FIELDS = {"max_completion_tokens": "max_tokens"}

# The openai SDK's own call parameters, which are never fields of a request: the SDK sends `extra_body`'s fields at
# the body's top level, `extra_headers` as HTTP headers and `extra_query` in the URL. One that reaches vLLM as a field
# was written into the JSON by hand (curl, requests, a wrapper's kwargs), so what it holds was dropped with it
# (vllm#33397: `extra_body={"structured_outputs": …}` sent as JSON, the output not constrained). What each becomes:
SDK_CALL_PARAMETERS = {
    "extra_body": 'at the body\'s top level (`"structured_outputs": {…}` beside `"messages"`)',
    "extra_headers": "as the request's HTTP headers",
    "extra_query": "in the URL's query string",
}


def _check_schema_refused(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.REQUEST_SCHEMA_REFUSED)
    if not events:
        return _check_ignored(facts.events_of(LogEventKind.REQUEST_FIELD_IGNORED))
    refused = events[0]
    if refused.request_field in SDK_CALL_PARAMETERS:
        return [_sdk_parameter_field(refused, refused.request_field or "")]
    if refused.nearest_field:
        return [_misspelt_field(refused, refused.request_field or "a field", refused.nearest_field)]
    responses_part = _RESPONSES_PART.search(refused.message or "")
    if responses_part:
        return [_responses_part_finding(refused, responses_part["type"])]
    if _PARTS_FOR_STRING.search(refused.message or ""):
        return [_parts_for_string_finding(refused)]
    field = refused.request_field or "a field"
    return [
        RULE_SCHEMA_REFUSED.finding(
            Severity.HIGH,
            f"vLLM's request schema refused {field}: {refused.message}",
            summary="vLLM checks every request against its OpenAI-compatible schema (pydantic models, validated by "
            "FastAPI) before it runs, and answers a field of another type, a missing one, or one it does not know "
            "with HTTP 400 and the field's path. The client sends a request shape this vLLM release does not accept: "
            "often a field or a message format OpenAI's API added after the release, or a value of another type.",
            evidence=[c.log_evidence(refused, name="refused field", value=field)],
            actions=[
                f"Add {field} to the request: the schema requires it"
                + (
                    " (the transcription and translation endpoints take the audio as the multipart form's `file` "
                    "field: `curl -F file=@audio.wav -F model=…`)."
                    if field == "file"
                    else "."
                )
                if (refused.message or "").startswith("Field required")
                else f"Change the client's request: send {field} as the schema expects ({refused.message}), or leave "
                "it out (a library that builds the request may have an option for the older format).",
                "Or upgrade vLLM: its schema follows OpenAI's API, and later releases accept more of it.",
            ],
            confidence=0.8,
        )
    ]


# The content parts only OpenAI's Responses API has: a Chat Completions request carrying one is refused, each part
# tried against every chat part model in turn (`Input should be 'text'`, `… 'refusal'`), the value the part's type.
_RESPONSES_PART = re.compile(r"input_value='(?P<type>output_text|input_text)'")


def _responses_part_finding(refused: LogEvent, part: str) -> Finding:
    """A message part of the Responses API's shape in a Chat Completions request (langchain-ai/langchain#34751: an
    agent's conversation, with the model's earlier `output_text` reply in it, sent through LiteLLM to vLLM)."""
    return RULE_SCHEMA_REFUSED.finding(
        Severity.HIGH,
        f"the client sent a Responses API content part (type '{part}') to vLLM's Chat Completions endpoint",
        summary=f"'{part}' is a content part of OpenAI's Responses API; Chat Completions' message parts are 'text' "
        "(with 'image_url' and the other media, and 'refusal' in an assistant message), so vLLM's schema tried the "
        "part against each and refused the request (HTTP 400). A client that mixes the two APIs does this: a "
        "Responses-style reply kept in the conversation and sent back to /v1/chat/completions.",
        evidence=[c.log_evidence(refused, name="refused part", value=part)],
        actions=[
            f'Send the conversation in Chat Completions\' shape: each \'{part}\' part as {{"type": "text", '
            '"text": …} (or the message\'s content as a plain string); a client library that speaks both APIs has '
            "a setting for which one it uses.",
            "Or, if the client speaks the Responses API, send it to vLLM's /v1/responses, on a release that serves it.",
        ],
        confidence=0.85,
    )


# A message's content as a list of text parts where the schema takes a string: pydantic's string_type with the list
_PARTS_FOR_STRING = re.compile(r"Input should be a valid string.*input_value='?\[\{'type': 'text'")


def _parts_for_string_finding(refused: LogEvent) -> Finding:
    """Content parts where this vLLM's model of that message takes a string (vllm PR #18729: Mistral's tool messages,
    whose text parts vLLM then joined into one string)."""
    field = refused.request_field or "a message's content"
    return RULE_SCHEMA_REFUSED.finding(
        Severity.HIGH,
        f"the client sent {field} as a list of text parts where this vLLM takes a string",
        summary="OpenAI's API lets a message's content be a string or a list of parts; some of vLLM's request paths "
        "took only a string for some messages (Mistral's tokenizer mode for tool messages, until vllm PR #18729 "
        "joined their text parts), so the request was refused with HTTP 400.",
        evidence=[c.log_evidence(refused, name="refused field", value=field)],
        actions=[
            "Send that content as one string (the text parts joined); a client library may have a setting to "
            "flatten content.",
            "Or upgrade vLLM: later releases accept the list form in more places (PR #18729 for Mistral's tool "
            "messages).",
        ],
        confidence=0.75,
    )


def _chat_only_field(ignored: LogEvent, field: str) -> Finding:
    """A Chat Completions field sent to /v1/completions, whose request model ignores it (vllm-project/guidellm#208:
    GuideLLM's max_completion_tokens flooding the log). The output cap it meant is max_tokens there, 16 when left
    out, so a client that sent only this field got 16-token outputs; one that sent both got a warning."""
    instead = CHAT_ONLY_FIELDS[field]
    return RULE_SCHEMA_REFUSED.finding(
        Severity.MEDIUM,
        f"vLLM ignored the request field {field}: it is Chat Completions', and the request went to /v1/completions, "
        f"which takes {instead}",
        summary=f"{field} is a field of the Chat Completions API; vLLM's /v1/completions request has {instead} "
        f"instead and drops fields it does not have, with this warning for each request. Without {instead} a "
        f"completions request stops at {vllm_defaults.COMPLETIONS_MAX_TOKENS} tokens (its default): a benchmark "
        "or client that sent only this field measured outputs of that length.",
        evidence=[c.log_evidence(ignored, name="ignored field", value=field)],
        actions=[
            f"Send {instead} to /v1/completions ({field} only to /v1/chat/completions); a benchmark tool has a "
            "setting for which endpoint and field it uses. Check the output lengths it reports: "
            f"{vllm_defaults.COMPLETIONS_MAX_TOKENS} tokens each means the cap never reached the server.",
        ],
        confidence=0.8,
    )


def _check_ignored(ignored: list[LogEvent]) -> list[Finding]:
    """The fields vLLM dropped (0.6.5 on) that say what the client meant: a misspelling first, then a field of
    another endpoint, an SDK parameter written into the body, a field one level too high."""
    dropped = next((e for e in ignored if e.nearest_field), None)
    if dropped is not None:
        return [_misspelt_field(dropped, dropped.request_field or "a field", dropped.nearest_field or "")]
    chat_only = next((e for e in ignored if e.request_field in CHAT_ONLY_FIELDS), None)
    if chat_only is not None:
        return [_chat_only_field(chat_only, chat_only.request_field or "")]
    wrapper = next((e for e in ignored if e.request_field in SDK_CALL_PARAMETERS), None)
    if wrapper is not None:
        return [_sdk_parameter_field(wrapper, wrapper.request_field or "")]
    nested = next((e for e in ignored if e.request_field in NESTED_REQUEST_FIELDS), None)
    return [_misplaced_field(nested, nested.request_field or "")] if nested is not None else []


def _sdk_parameter_field(event: LogEvent, field: str) -> Finding:
    """The openai SDK's call parameter sent as a field: what it wrapped never reached vLLM's request model."""
    dropped = event.kind == LogEventKind.REQUEST_FIELD_IGNORED
    where = SDK_CALL_PARAMETERS[field]
    lost = ": guided decoding, sampling options, chat-template arguments (vllm#33397)" if field == "extra_body" else ""
    fate = (
        f"dropped it with everything inside it (from {UNKNOWN_FIELDS_IGNORED_FROM}) and served the request without "
        f"what it asked for{lost}."
        if dropped
        else "refused the request (HTTP 400, 'Extra inputs are not permitted', vLLM up to 0.6.4)."
    )
    return RULE_SCHEMA_REFUSED.finding(
        Severity.HIGH,
        f"vLLM {'ignored' if dropped else 'refused'} the request field {field}: an openai SDK call parameter written "
        "into the JSON body",
        summary=f"{field} is a parameter of the openai SDK's call, not a field of OpenAI's request: the SDK sends what "
        f"it holds {where}. A request that carries {field} itself was built by hand (curl, requests, another "
        f"client's passthrough), so vLLM's request model {fate}",
        evidence=[c.log_evidence(event, name="ignored field" if dropped else "refused field", value=field)],
        actions=[
            f"Unwrap what {field} holds and send it {where}; with the openai SDK, pass `{field}=…` to the call and it "
            "does this.",
        ],
        confidence=0.9,
    )


def _misplaced_field(ignored: LogEvent, field: str) -> Finding:
    """A field OpenAI's shape has one level down, sent one level up: dropped as unknown, so the request ran without
    it (vllm#35438: a json_schema response format whose schema vLLM never saw, answered 500)."""
    where, shape = NESTED_REQUEST_FIELDS[field]
    return RULE_SCHEMA_REFUSED.finding(
        Severity.HIGH,
        f"vLLM ignored the request field {field}: it belongs at {where}, one level down",
        summary=f"The request carries {field} where vLLM's request model has no such field, so vLLM dropped it with "
        f"this warning and served the request without it. OpenAI's shape puts it at {where}; a client that writes "
        "it one level up asks for structured output vLLM never receives (vllm#35438: the request then failed with an "
        "empty 500).",
        evidence=[c.log_evidence(ignored, name="ignored field", value=field)],
        actions=[f"Send it nested, as OpenAI's API shapes it: {shape}."],
        confidence=0.85,
    )


def _misspelt_field(refused: LogEvent, field: str, meant: str) -> Finding:
    """An unknown field one letter or two away from a field vLLM has: the client misspelt it. Refused (up to 0.6.4),
    the request failed; ignored (0.6.5 on), it was served without what the client asked for."""
    dropped = refused.kind == LogEventKind.REQUEST_FIELD_IGNORED
    return RULE_SCHEMA_REFUSED.finding(
        Severity.MEDIUM if dropped else Severity.HIGH,
        f"vLLM {'ignored' if dropped else 'refused'} the request field {field}: no such field; the client means "
        f"{meant}",
        summary=f"The request carries {field}, which none of vLLM's request models has, and {meant}, which they "
        f"have, is a letter or two away: a misspelling in the client. vLLM up to 0.6.4 refuses the whole request "
        f"for it (HTTP 400, 'Extra inputs are not permitted'); from {UNKNOWN_FIELDS_IGNORED_FROM} it drops the "
        f"field with a warning (a debug line in later releases) and serves the request as if {meant} were unset.",
        evidence=[c.log_evidence(refused, name="ignored field" if dropped else "refused field", value=field)],
        actions=[
            f"Correct the request field's name in the client: {meant}, not {field}.",
        ],
        confidence=0.9,
    )


RULE_SCHEMA_REFUSED = Rule(
    code="OP-5.28",
    title="vLLM's request schema refused (or dropped) a field of the request",
    category=Category.CONFIGURATION,
    check=_check_schema_refused,
    needs=("events",),
    page=RulePage(
        checks="A field vLLM dropped as unknown that misspells one it has (`The following fields were present in the "
        "request but ignored: {'stream_otpions'}`, 0.6.5 on), or a validation error vLLM answered (or logged): "
        "pydantic's `'loc': ('body', 'messages', 2, "
        "'function_call'), 'msg': 'Input should be a valid string'` (0.4 on), the dotted `'loc': "
        "'body.messages.2.function_call'` of 0.32, or FastAPI's JSON `\"loc\": [\"body\", …]`; pydantic's own text "
        "(`3 validation errors for ValidatorIterator` / `0.ChatCompletionContentPartTextParam.type` / `Input should be "
        "'text' [type=literal_error, input_value='output_text', …]`), where a Responses API part is named as such.",
        why="The server refuses the whole request for one field; the field's path and pydantic's reason say what the "
        "client must change.",
        example="`'loc': ('body', 'messages', 2, 'function_call'), 'msg': 'Input should be a valid string'` for an "
        "assistant message carrying a function_call object; a later release accepted it (vllm#3906).",
        fix="Send the field as the schema expects, leave it out, or upgrade vLLM.",
        limits="Names the first refused field; which release accepts it is not in the text. A misspelt field is named "
        "from the request fields of vLLM 0.32 (scripts/extract_vllm_interface.py), with the guided-decoding ones it "
        "removed.",
        references=[
            "https://github.com/vllm-project/vllm/issues/3906",
            "https://github.com/langchain-ai/langchain/issues/34751",
        ],
    ),
)

RULES: list[Rule] = [
    RULE_TEMPLATE_REFUSED,
    RULE_SINGLE_STREAM,
    RULE_EMPTY_PROMPT,
    RULE_TOKEN_OUTSIDE_VOCAB,
    RULE_SCHEMA_REFUSED,
]
