"""Request errors: the client-facing text of a request longer than the context, which also reaches logs.

Several wordings over the versions, each with some of the limit, the prompt tokens and the
total requested; `_request_too_long` reads whichever groups a wording has.
"""

from __future__ import annotations

import re

from advisor.catalog.vllm_interface import nearest_field, removed_request_fields, request_fields
from advisor.collect.log_patterns.pattern import Fields, Pattern, to_int, wording
from rules.catalog.op5_requests import CHAT_ONLY_FIELDS, NESTED_REQUEST_FIELDS, SDK_CALL_PARAMETERS
from rules.events import (
    NO_CHAT_TEMPLATE,
    OPENAI_PARAMETER,
    OPENAI_PARAMETERS,
    REMOVED_REQUEST_FIELD,
    VLLM_REQUEST_FIELD,
)
from rules.events import LogEventKind as K

# mistral_common's structure check named without its words (the paste ends after the exception's name)
MISTRAL_SAID_CUT = "a message out of the order Mistral's format allows (its words are not in the text)"


def _template_refused(match: re.Match[str]) -> Fields:
    """The template's refusal, transformers finding none, or Jinja refusing its syntax (the exception's name kept);
    mistral_common's validator of Mistral's message order, under --tokenizer-mode mistral, as its own exception."""
    if match["mistral"]:
        return {"message": match["mistral"], "exception": "InvalidMessageStructureException"}
    if match["mistral_class"]:
        said = match["mistral_said"].strip() or MISTRAL_SAID_CUT
        return {"message": said, "exception": "InvalidMessageStructureException"}
    if match["none"]:
        return {"message": NO_CHAT_TEMPLATE}
    if match["syntax"] or match["syntax2"]:
        return {"message": (match["syntax"] or match["syntax2"]).strip(), "exception": "TemplateSyntaxError"}
    return {"message": match.group(0)}


def _request_too_long(match: re.Match[str]) -> Fields:
    """The context limit, the prompt's tokens and the request's whole: stated, or the prompt plus the max_tokens
    vLLM names as too large (its 0.10-0.17 words say both parts, not their sum)."""
    groups = match.groupdict()
    prompt = to_int(groups.get("prompt") or groups.get("prompt2") or groups.get("prompt3"))
    total = to_int(groups.get("total") or groups.get("total2"))
    max_tokens = to_int(groups.get("maxtok"))
    if total is None and max_tokens is not None and prompt is not None:
        total = prompt + max_tokens
    return {"max_model_len": to_int(groups.get("limit")), "prompt_tokens": prompt, "requested_tokens": total}


def _with_first_output(match: re.Match[str]) -> Fields:
    """0.11 on counts the first output token with the prompt: a prompt exactly the context's length is refused."""
    prompt = to_int(match["prompt"])
    return {"requested_tokens": prompt + 1} if match["plus"] and prompt is not None else {}


def _client_keyword(match: re.Match[str]) -> Fields | None:
    """The keyword the openai package's create() refused, and whether vLLM's request models have it. A `create()`
    Python names without its class (before 3.10, or cut) is read only for a keyword of vLLM's: any create() says
    the same of its own arguments."""
    keyword = match["keyword"] or match["bare"]
    known = None
    if keyword in OPENAI_PARAMETERS:  # OpenAI's own first: vLLM's request models have most of them too
        known = OPENAI_PARAMETER
    elif keyword in removed_request_fields():
        known = REMOVED_REQUEST_FIELD
    elif keyword in request_fields():
        known = VLLM_REQUEST_FIELD
    if match["bare"] and known in (None, OPENAI_PARAMETER):  # `model`, `stream`: any library's create() has them
        return None
    return {"request_field": keyword, "component": known, "message": match.group(0)}


def _schema_refusal(match: re.Match[str]) -> Fields:
    """FastAPI's error list as vLLM answers it: its `loc` and `msg`."""
    return _refusal_fields(match["loc"], match["msg"] if match["msg"] is not None else match["quoted"])


def _schema_text_refusal(match: re.Match[str]) -> Fields:
    """pydantic's own text for the same refusal (`1 validation error for ChatCompletionRequest` / `functions` /
    `  Extra inputs are not permitted [type=extra_forbidden, …]`): the field's line, then its reason."""
    reason = match["msg"].replace("\\'", "'")
    value = match.groupdict().get("value")
    if value is not None:  # what the client sent, in pydantic's words: the rule reads it
        reason = f"{reason} [input_value='{value}']"
    return _refusal_fields(match["loc"], reason)


def _refusal_fields(loc: str, reason: str) -> Fields:
    """The refused field as a person writes it (`messages[2].function_call`), and pydantic's reason."""
    parts = re.findall(r"[\w-]+", loc)
    if parts and parts[0] == "body":
        parts = parts[1:]
    field = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts).lstrip(".")
    unknown = _UNKNOWN_FIELD.search(reason) is not None and bool(parts) and not parts[-1].isdigit()
    return {
        "request_field": field or None,
        "message": reason,
        "nearest_field": nearest_field(parts[-1]) if unknown else None,
    }


def _ignored_fields(match: re.Match[str]) -> Fields:
    """The first ignored field that misspells one vLLM has, and that one; else the first field vLLM has at another
    depth of the request (`schema`, which belongs inside response_format's json_schema); none of either, nothing."""
    names = re.findall(r"['\"]([^'\"]+)['\"]", match["keys"])
    for name in names:
        if meant := nearest_field(name):
            return {"request_field": name, "nearest_field": meant}
    known = (NESTED_REQUEST_FIELDS, CHAT_ONLY_FIELDS, SDK_CALL_PARAMETERS)
    misplaced = next((name for name in names if any(name in fields for fields in known)), None)
    return {"request_field": misplaced} if misplaced else {}


# pydantic's own text for a model it refused, as an error body or a gateway's repr carries it: its header, its line
# breaks (real, or escaped as `\n` inside a repr) and a character of one of its lines
_PYDANTIC_TEXT = r"\d+ validation errors? for "
_BREAK = r"(?:\n|\\n)"
_TEXT_CHAR = r"(?:(?!\\n)[^\n])"

# pydantic's words for a field the model does not have: v2's extra_forbidden, v1's (vLLM before 0.4)
_UNKNOWN_FIELD = re.compile(r"Extra inputs are not permitted|extra fields not permitted")


PATTERNS: tuple[Pattern, ...] = (
    wording(  # the openai package's resource methods take OpenAI's parameters as Python keywords, so a keyword of
        # vLLM's passed straight to create() is refused in Python's words before a request leaves the client
        ("create() got an unexpected keyword argument",),
        K.CLIENT_KEYWORD_REFUSED,
        r"\b(?:Async)?(?:Completions|Embeddings|Responses|Moderations|Transcriptions)\.create\(\) got an unexpected "
        r"keyword argument '(?P<keyword>\w+)'"
        r"|(?<![\w.])create\(\) got an unexpected keyword argument '(?P<bare>\w+)'",
        _client_keyword,
    ),
    wording(
        ("is too large: ",),
        K.REQUEST_TOO_LONG,
        r"'max_tokens' or 'max_completion_tokens' is too large: (?P<maxtok>\d+)\. This model's maximum context "
        r"length is (?P<limit>[\d,]+) tokens and your request has (?P<prompt>[\d,]+) input tokens",
        _request_too_long,
    ),
    wording(
        ("maximum context length is",),
        K.REQUEST_TOO_LONG,
        r"This model's maximum context length is (?P<limit>[\d,]+) tokens\. However, (?:"
        r"you requested (?P<total>[\d,]+) tokens(?: \((?P<prompt>[\d,]+) in the messages)?"
        r"|your request has (?P<prompt2>[\d,]+) input tokens"
        r"|you requested \d+ output tokens and your prompt contains (?:at least )?(?P<prompt3>[\d,]+) input tokens, "
        r"for a total of (?:at least )?(?P<total2>[\d,]+) tokens"
        r"|your prompt contains (?:at least )?(?P<prompt4>[\d,]+) input tokens)",
        lambda m: {
            **_request_too_long(m),
            "prompt_tokens": to_int(m["prompt"] or m["prompt2"] or m["prompt3"] or m["prompt4"]),
        },
    ),
    wording(  # SGLang's words for the same refusal (and an OpenAI-compatible server's behind LiteLLM, whose
        # hosted_vllm provider relays it inside a ContextWindowExceededError: getkimchi/kimchi#794, cut after "the")
        ("is longer than the model's context length", "ContextWindowExceededError"),
        K.REQUEST_TOO_LONG,
        r"(?:ContextWindowExceededError\b.*?)?The input \((?P<prompt>[\d,]+) tokens\) is longer than the(?: model's "
        # LiteLLM repeats its class's name in the chain it prints (`litellm.exceptions.ContextWindowExceededError:
        # litellm.BadRequestError: ContextWindowExceededError: …`): its last one is read, once
        r"context length \((?P<limit>[\d,]+) tokens\))?|ContextWindowExceededError(?!: litellm\.)",
        lambda m: {**_request_too_long(m), "message": m.string[m.start() :]},
    ),
    wording(  # vllm/engine/llm_engine.py (0.8-0.10) and v1/engine/input_processor.py (0.11 on, which adds the
        # first output token to the prompt); v1/engine/processor.py (0.7) in other words
        ("The decoder prompt", "Prompt length of"),
        K.REQUEST_TOO_LONG,
        r"(?:The decoder prompt \(length (?P<prompt>\d+)\)(?P<plus> plus the number of requested output tokens "
        r"\(at least 1\))?|Prompt length of (?P<prompt2>\d+)) is longer than the maximum model length of "
        r"(?P<limit>\d+)",
        lambda m: {**_request_too_long(m), **_with_first_output(m), "message": m.string[m.start() :]},
    ),
    wording(  # the model's chat template raising (Mistral, Llama 2, Gemma templates' raise_exception), or transformers
        # finding none to apply (tokenization_utils_base.py: a tokenizer without a chat template)
        (
            "Conversation roles must alternate",
            "conversation roles must",
            "System message must be at the be",
            "System role not supported",
            "tokenizer.chat_template is not set",
            "TemplateSyntaxError",
            "expected token 'end of ",
            "Encountered unknown tag '",
            "Unexpected role '",
            "InvalidMessageStructureException",
            "only supports single tool-calls",
            "Unexpected message role",
            "No user query found in messages",
        ),
        K.CHAT_TEMPLATE_REFUSED,
        r"Conversation roles must alternate[^'\"]*|System role not supported"
        # templates refusing what a turn holds: Llama 3.1-3.3's one tool call per turn; a template's unknown role
        r"|This model only supports single tool-calls at once!?|Unexpected message role\.?"
        # Qwen 3.x's templates anchoring their tool block on the last user turn that is not a tool response
        r"|No user query found in messages\.?"
        # Mistral v0.3's template (cut where a paste ends: vllm#6862), Qwen 3.5/3.6's (retyped with a typo: docker-agent
        # #3344, `System message must be at the beignning`)
        r"|After the optional system message, conversation roles must[^'\"]*|System message must be at the be\w*"
        r"|(?P<none>Cannot use chat template functions because tokenizer\.chat_template is not set)"
        # Jinja refusing the template itself, before any conversation is rendered
        r"|(?:jinja2\.exceptions\.)?TemplateSyntaxError: (?P<syntax>.+)"
        # Jinja's own words without the class (jinja2/lexer.py TokenStream.expect, jinja2/parser.py), as a 400's message
        # carries them
        r"|(?P<syntax2>expected token 'end of (?:print statement|statement block)', got '[^']*'"
        r"|Encountered unknown tag '[^']*'\.?)"
        # mistral_common's request validator (the Mistral tokenizer mode): a role its format does not allow next
        r"|(?P<mistral>Unexpected role '\w+' after role '\w+')"
        # … and its exception by name, whatever it says (or where the paste ends before it: anomalyco/opencode#7488)
        r"|(?P<mistral_class>InvalidMessageStructureException)\b:?\s*(?P<mistral_said>.*)",
        _template_refused,
    ),
    wording(  # vLLM's request log (entrypoints/logger.py) of a request whose prompt is empty
        ("Received request",),
        K.EMPTY_PROMPT,
        r"Received request (?P<id>\S+): prompt: (?:''|\"\"),",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # FastAPI's validation error as vLLM answers it: `loc` a tuple (0.4-0.2x), a dotted string (0.32) or JSON
        ("'loc'", '"loc"'),
        K.REQUEST_SCHEMA_REFUSED,
        r"""['"]loc['"]:\s*(?P<loc>\([^)]*\)|\[[^\]]*\]|'[^']*'|"[^"]*")\s*,\s*['"]msg['"]:\s*"""
        r"""(?:'(?P<msg>[^']*)'|"(?P<quoted>[^"]*)")""",  # a reason holding ' is printed in "…"
        _schema_refusal,
    ),
    wording(  # the same list with its quotes made typographic by an editor or a forum on the way (vllm#14676)
        ("loc‘", "loc’", "loc“", "loc”"),
        K.REQUEST_SCHEMA_REFUSED,
        r"[‘’“”]loc[‘’“”]:\s*(?P<loc>\([^)]*\))\s*,\s*"
        r"[‘’“”]msg[‘’“”]:\s*[‘’“”](?P<msg>[^‘’“”]*)",
        lambda m: _refusal_fields(m["loc"], m["msg"]),
    ),
    wording(  # pydantic's text for a request model's refusal, as a 400's message carries it with its newlines
        # (runpod-workers/worker-vllm#85: `functions`, a field vLLM's ChatCompletionRequest did not have), or with
        # them escaped inside a gateway's repr of it; a message's content parts are validated as a ValidatorIterator
        # (langchain-ai/langchain#34751, through LiteLLM)
        ("validation error for ", "validation errors for "),
        K.REQUEST_SCHEMA_REFUSED,
        rf"{_PYDANTIC_TEXT}\w*(?:Request|ValidatorIterator){_BREAK}(?P<loc>{_TEXT_CHAR}+)"
        rf"{_BREAK}\s+(?P<msg>{_TEXT_CHAR}+?)"
        r"(?: \[type=\w+, input_value=\\?'(?P<value>[^'\\]*)| \[type=|\n|\\n|$)",
        _schema_text_refusal,
    ),
    wording(  # the same text with its line breaks lost to spaces (a client's one-line report,
        # odysseus-dev/odysseus#103: a message's `metadata` refused), for a field pydantic says is extra or missing
        ("validation error for ", "validation errors for "),
        K.REQUEST_SCHEMA_REFUSED,
        rf"{_PYDANTIC_TEXT}\w*(?:Request|Message) (?P<loc>[\w.\[\]]+) "
        r"(?P<msg>Extra inputs are not permitted|Field required)(?: \[type=\w+, input_value=|\s*$)",
        _schema_text_refusal,
    ),
    wording(  # pydantic's reason line alone, for a message's content sent as text parts where a string is taken
        # (vllm PR #18729's test output: `E  Input should be a valid string [type=string_type, input_value=[{'type':
        # 'text', 'text': 'Rainy'}], input_type=list]`): request-shaped by its value, whatever the line's prefix
        ("Input should be a valid string [type=string_type",),
        K.REQUEST_SCHEMA_REFUSED,
        r"(?P<msg>Input should be a valid string) \[type=string_type, input_value=(?P<value>\[\{'type': 'text'.*?)"
        r"(?:, input_type=list\]|$)",
        lambda m: {"request_field": None, "message": f"{m['msg']} [input_value={m['value']}]"},
    ),
    wording(  # pydantic refusing a response vLLM built itself: the model is one of its response models
        # (vllm#33873: PoolingResponseData; vllm#42363: ChatCompletionStreamResponse after the engine died)
        ("validation error for ", "validation errors for "),
        K.RESPONSE_SCHEMA_FAILED,
        rf"{_PYDANTIC_TEXT}(?P<model>\w*Response\w*)(?:{_BREAK}(?P<loc>(?:(?!\\n)[^\n\s])+))?",
        lambda m: {"message": m["model"], "request_field": m["loc"]},
    ),
    wording(  # vLLM's base request model (0.6.5 on) dropping fields it does not have
        ("present in the request but ignored",),
        K.REQUEST_FIELD_IGNORED,
        r"present in the request but ignored: (?P<keys>\{[^}]*\}|\[[^\]]*\])",
        _ignored_fields,
    ),
    wording(  # token ids a request carries: its JSON body (`"stop_token_ids": [151645]`) or vLLM's request log of
        # its SamplingParams (`stop_token_ids=[151645]`); what they index must be inside the model's vocabulary
        ("stop_token_ids", "allowed_token_ids"),
        K.REQUEST_TOKEN_IDS,
        r"(?P<field>stop_token_ids|allowed_token_ids)['\"]?\s*[:=]\s*\[(?P<ids>\s*\d+(?:\s*,\s*\d+)*)\s*\]",
        lambda m: {"request_field": m["field"], "token_ids": [int(i) for i in m["ids"].split(",")]},
    ),
    wording(  # openai_harmony's parser refusing gpt-oss's output as vLLM streams it (its words, not vLLM's: up to at
        # least 0.18 its HarmonyError fails the request); "Unknown role" is also a DeepSeek encoder's, hence the prefix
        ("Unexpected token", "HarmonyError", "unexpected tokens remaining in message header"),
        K.HARMONY_ERROR,
        r"(?P<said>Unexpected token (?P<got>\d+) while expecting start token (?P<want>\d+)|unexpected tokens remaining "
        r"in message header[^'\"]*|(?<=HarmonyError\(['\"])(?:Unknown role: [^'\"]*|channel marker present but no "
        r"channel value found in header|message header did not contain a role[^'\"]*))",
        lambda m: {
            "message": m["said"],
            "token_ids": [int(m["got"]), int(m["want"])] if m["got"] else [],
        },
    ),
    wording(  # libsndfile (through soundfile and librosa) refusing an upload to the transcription endpoint, which
        # vLLM answered as a 500 before vllm PR #34715; the object's repr may come HTML-escaped in a JSON body
        ("Error opening <_io.BytesIO", "Error opening \\u003c_io.BytesIO"),
        K.AUDIO_UNDECODABLE,
        r"Error opening (?:<|\\u003c)_io\.BytesIO object at 0x[0-9a-f]+(?:>|\\u003e): (?P<reason>Format not "
        r"recognised|File contains data in an unknown format|[^.\"']{3,80})",
        lambda m: {"message": m["reason"]},
    ),
    wording(  # V0's scheduler (core/scheduler.py), which drops the request with a warning
        ("is too long and exceeds limit of", "is too long and exceeds the capacity of block_manager"),
        K.PROMPT_OVER_LIMIT,
        # a reporter's placeholder for the count (`Input prompt (xxxx tokens)`, xorbitsai/inference PR #2385) leaves
        # the limit, which is the fact
        r"Input prompt \((?:(?P<prompt>\d+)|[xX?.…]+) tokens\)(?: \+ lookahead slots \(\d+\))? is too long and "
        r"exceeds (?:the capacity of block_manager|limit of (?P<limit>\d+))",
        lambda m: {"prompt_tokens": to_int(m["prompt"]) if m["prompt"] else None, "prompt_limit": to_int(m["limit"])},
    ),
)
