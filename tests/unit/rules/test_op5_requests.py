"""OP-5.19 to OP-5.22: what the client sent, read from the text that shows it."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import health, op5_requests
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import event


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_template_that_refuses_the_roles_says_to_merge_the_system_message():
    # vllm#2080: a system message to Mistral-7B-Instruct-v0.1
    facts = _facts(
        [
            "`BadRequestError: Error code: 400 - {'object': 'error', 'message': 'Conversation roles must alternate "
            "user/assistant/user/assistant/...', 'type': 'invalid_request_error', 'param': None, 'code': None}"
        ]
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.19" and "chat template refused" in top.title
    # the template's own demand, and both ways to break it: vllm#2080 sent a system message, Verba#150 a history
    assert "must alternate user/assistant" in top.title and "two turns of one role in a row" in top.title
    assert top.actions[0].startswith("Send no system message in the request")
    assert "merge consecutive messages of one role" in top.actions[0]
    template = top.alternatives[0]  # weaviate/Verba#150: a template of the operator's own fixed it server-side
    assert template.flag == "--chat-template" and template.kind == "flag" and "system role" in template.proposed


@pytest.mark.parametrize(
    ("line", "what", "how"),
    [
        # vllm#25108, verbatim: a history holding an assistant turn with two tool calls (the template's own raise)
        (
            "(APIServer pid=4068503) ERROR 09-17 22:28:40 [chat_utils.py:1475] jinja2.exceptions.TemplateError: This "
            "model only supports single tool-calls at once!",
            "several tool calls",
            "parallel_tool_calls=false",
        ),
        # ogx-ai/ogx#6069, verbatim: Codex CLI's `developer` role through Llama Stack to a Qwen model on vLLM
        (
            "{\"error\":{\"message\":\"Error code: 400 - {'error': {'message': 'Unexpected message role.', 'type': "
            "'BadRequestError', 'param': None, 'code': 400}}\"}}",
            "`developer` role",
            "map `developer` to `system`",
        ),
        # vllm-ascend#8521, verbatim: Qwen 3.x's template with no user turn to anchor its tool block on
        (
            "(ApiServer_1 pid=220) ValueError: No user query found in messages.",
            "no user message",
            "must not drop the last user turn",
        ),
    ],
)
def test_a_template_refusing_what_a_turn_holds_says_what_and_how_to_send_it(line: str, what: str, how: str):
    top = evaluate(_facts([line])).top
    assert top.rule == "OP-5.19" and "refused what the conversation holds" in top.title and what in top.title
    assert how in top.actions[0] and top.alternatives[0].flag == "--chat-template"


def test_a_template_jinja_cannot_parse_is_named_with_jinjas_words_and_how_to_find_the_line():
    """The exception's own message can end in a quote or a brace (`unexpected '}'`): it is kept whole."""
    paste = [
        'ERROR 11-28 10:12:01 [serving_chat.py:245]   File "<template>", line 3, in template',
        "ERROR 11-28 10:12:01 [serving_chat.py:245] jinja2.exceptions.TemplateSyntaxError: unexpected '}'",
    ]
    [refused] = [e for e in _facts(paste).events if e.kind == K.CHAT_TEMPLATE_REFUSED]
    assert refused.message == "unexpected '}'" and refused.exception == "TemplateSyntaxError"
    top = evaluate(_facts(paste)).findings[0]
    assert top.rule == "OP-5.19"
    assert top.title == "the chat template does not parse (Jinja: unexpected '}'): every chat request fails on it"
    assert "jinja2.Environment().parse" in top.actions[0] and not top.changes


@pytest.mark.parametrize(
    "paste",
    [  # runpod-workers/worker-vllm#129: openai-python's repr of the 400 a vLLM 0.6.3 server answered, verbatim
        "ChatCompletion(id=None, choices=None, created=None, model=None, object='error', service_tier=None, "
        "system_fingerprint=None, usage=None, code=400, message=\"expected token 'end of print statement', got "
        "'name'\", param=None, type='BadRequestError')",
        '{"object":"error","message":"Encountered unknown tag \'generation\'.","type":"BadRequestError",'
        '"param":null,"code":400}',
    ],
)
def test_jinjas_own_words_without_the_class_are_the_template_not_parsing(paste):
    top = evaluate(_facts([paste])).findings[0]
    assert top.rule == "OP-5.19" and top.title.startswith("the chat template does not parse (Jinja: ")


def test_a_tokenizer_without_a_chat_template_proposes_one_or_the_instruct_model():
    line = (
        "ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template "
        "argument was passed! For information about writing templates and setting the tokenizer.chat_template "
        "attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating"
    )
    [finding] = op5_requests.RULE_TEMPLATE_REFUSED.evaluate(_facts([line]))
    assert finding.title.startswith("the tokenizer has no chat template")
    assert [change.flag for change in finding.changes] == ["--chat-template"]
    assert "/v1/completions" in finding.actions[0]


def _stats(running: int, waiting: int = 0, generated: float = 18.0, line: int = 1):
    return event(K.STATS_LINE, line, running=running, waiting=waiting, generation_throughput_tps=generated)


def test_one_request_running_and_none_waiting_in_every_line_is_a_sequential_client():
    # meta-llama/synthetic-data-kit#67: 'batch' requests sent one after another
    [finding] = op5_requests.RULE_SINGLE_STREAM.evaluate(Facts(events=[_stats(1, line=1), _stats(1, line=2)]))
    assert "one request at a time in all 2 stats lines" in finding.title
    for lines in ([_stats(1)], [_stats(1, line=1), _stats(3, line=2)], [_stats(1, line=1), _stats(1, 2, line=2)]):
        assert op5_requests.RULE_SINGLE_STREAM.evaluate(Facts(events=lines)) == []


def test_an_empty_prompt_right_before_the_engine_died_is_named_above_the_death():
    # vllm#7632 (0.5.4): the request log of an empty prompt, then V0's background loop failing
    facts = _facts(
        [
            "INFO 08-18 00:51:02 logger.py:36] Received request cmpl-14b8-0: prompt: '', params: SamplingParams(n=1)",
            "INFO 08-18 00:51:02 async_llm_engine.py:174] Added request cmpl-14b8-0.",
            "ERROR 08-18 00:51:02 async_llm_engine.py:57] Engine background task failed",
        ]
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.21" and "empty prompt (no tokens)" in top.title
    assert health.RULE_DEAD.evaluate(facts)[0].confidence == health.SPECIFIC_BESIDE  # its cause named elsewhere
    far = Facts(events=[event(K.EMPTY_PROMPT, 1), event(K.FATAL_ERROR, 40)])
    assert op5_requests.RULE_EMPTY_PROMPT.evaluate(far) == []


def test_a_stop_token_id_past_the_vocabulary_the_kernel_names_is_the_cause_with_the_release_that_refuses_it():
    # vllm#54195: a stop token id of another tokenizer; vLLM's request log and torch's CPU wording read the same
    facts = _facts(
        [
            "INFO 08-28 10:00:00 [logger.py:40] Received request chatcmpl-1: params: SamplingParams(n=1, "
            "stop_token_ids=[2, 151645], max_tokens=300)",
            "IndexError: index 151645 is out of bounds for dimension 1 with size 129280",
        ]
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.22" and "stop_token_ids hold 151645, outside the model's vocabulary (129,280" in top.title
    assert top.actions[0].startswith("Upgrade vLLM to 0.29 or later")
    assert [e.value for e in top.evidence][0] == "151645"


def test_ids_inside_the_vocabulary_or_an_index_of_something_else_name_no_token():
    inside = _facts(['{"stop_token_ids": [128001]}', "index value 151645 exceeds bounds 129280!"])
    other = _facts(['{"stop_token_ids": [151645]}', "index 3 is out of bounds for dimension 0 with size 2"])
    for facts in (inside, other):
        assert op5_requests.RULE_TOKEN_OUTSIDE_VOCAB.evaluate(facts) == []


def test_a_field_the_request_schema_refuses_is_named_by_its_path_in_each_releases_wording():
    # vllm#3906 (a tuple `loc` inside the error body), 0.32's dotted `loc`, FastAPI's own JSON
    bodies = {
        "messages[2].function_call": 'Error code: 400 - {"object":"error","message":"[{\'type\': \'string_type\', '
        "'loc': ('body', 'messages', 2, 'function_call'), 'msg': 'Input should be a valid string'}]\"}",
        "messages[0].content": "{\"error\":{\"message\":\"1 validation error:\\n  {'type': 'missing', 'loc': "
        "'body.messages.0.content', 'msg': 'Field required'}\",\"code\":400}}",
        "tools[0].strict": '{"detail":[{"type":"extra_forbidden","loc":["body","tools",0,"strict"],'
        '"msg":"Extra inputs are not permitted"}]}',
    }
    for field, body in bodies.items():
        top = evaluate(_facts([body])).findings[0]
        assert top.rule == "OP-5.28" and top.title.startswith(f"vLLM's request schema refused {field}: "), top.title
    assert "Or upgrade vLLM" in top.actions[1]


def test_an_unknown_field_a_letter_away_from_a_real_one_is_named_as_the_misspelling_it_is():
    # gpustack/gpustack#429: a playground sending `stream_otpions` to vLLM 0.6.x
    body = (
        "Returned an error: `[{'type': 'extra_forbidden', 'loc': ('body', 'stream_otpions'), 'msg': 'Extra inputs "
        "are not permitted', 'input': {'include_usage': True}}]`"
    )
    top = evaluate(_facts([body])).findings[0]
    assert top.title == "vLLM refused the request field stream_otpions: no such field; the client means stream_options"
    assert top.actions == ["Correct the request field's name in the client: stream_options, not stream_otpions."]
    assert "from 0.6.5 it drops the field" in top.summary


def test_an_unknown_field_like_no_real_one_is_not_called_a_misspelling():
    body = (
        '{"detail":[{"type":"extra_forbidden","loc":["body","my_tracing_id"],"msg":"Extra inputs are not permitted"}]}'
    )
    [event_] = parse_lines([body]).events
    assert event_.nearest_field is None
    top = evaluate(_facts([body])).findings[0]
    assert top.title == "vLLM's request schema refused my_tracing_id: Extra inputs are not permitted"


def test_a_misspelt_field_a_later_release_dropped_is_named_too_as_served_without_it():
    # 0.6.5-0.17 warn and serve the request without the field (vllm/entrypoints/openai/protocol.py)
    line = (
        "WARNING 01-10 10:00:00 protocol.py:61] The following fields were present in the request but ignored: "
        "{'stream_otpions', 'my_trace_id'}"
    )
    [finding] = op5_requests.RULE_SCHEMA_REFUSED.evaluate(_facts([line]))
    assert (
        finding.title == "vLLM ignored the request field stream_otpions: no such field; the client means stream_options"
    )
    assert finding.severity.value == "medium"
    deliberate = line.replace("'stream_otpions', ", "")
    assert op5_requests.RULE_SCHEMA_REFUSED.evaluate(_facts([deliberate])) == []


def test_a_chat_only_field_sent_to_completions_names_max_tokens_and_its_default():
    # vllm-project/guidellm#208, verbatim: GuideLLM's requests flooding the log with this warning
    line = (
        "WARNING 06-27 14:57:36 [protocol.py:58] The following fields were present in the request but ignored: "
        "{'max_completion_tokens'}"
    )
    [finding] = op5_requests.RULE_SCHEMA_REFUSED.evaluate(_facts([line]))
    assert finding.title.endswith("the request went to /v1/completions, which takes max_tokens")
    assert "stops at 16 tokens" in finding.summary and finding.severity.value == "medium"


def test_a_responses_api_part_in_a_chat_request_is_named_as_the_two_apis_mixed():
    # langchain-ai/langchain#34751: an agent's conversation through LiteLLM to vLLM, pydantic's text escaped in a repr
    line = (
        "ERROR:__main__:An error occurred while running the deep agent: Error code: 400 - {'error': {'message': "
        "'litellm.BadRequestError: Hosted_vllmException - 3 validation errors for ValidatorIterator\\n"
        "0.ChatCompletionContentPartTextParam.type\\n  Input should be \\'text\\' [type=literal_error, "
        "input_value=\\'output_text\\', input_type=str]\\n    For further information visit "
        "https://errors.pydantic.dev/2.11/v/literal_error\\n"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.28"
    assert (
        top.title
        == "the client sent a Responses API content part (type 'output_text') to vLLM's Chat Completions endpoint"
    )
    assert "/v1/responses" in top.actions[1]
    # the same refusal of a plain text part's other value stays the schema's own words
    plain = line.replace("output_text", "txt")
    assert (
        evaluate(_facts([plain]))
        .findings[0]
        .title.startswith(
            "vLLM's request schema refused [0].ChatCompletionContentPartTextParam.type: Input should be 'text'"
        )
    )


def test_a_refusal_pasted_with_typographic_quotes_names_the_missing_field_to_add():
    # vllm#14676, verbatim start: a transcription request's 400 whose quotes an editor made typographic
    line = (
        '\u201cmessage": \u2018[{\u2019type\u2018: \u2019missing\u2018, \u2019loc\u2018: (\u2019body\u2018, '
        "\u2019file\u2018), \u2019msg\u2018: \u2019Field required\u2018, \u2019input\u2018: {\u2019language\u2018: "
        "\u2019fr\u2018,"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.28" and top.title == "vLLM's request schema refused file: Field required"
    assert top.actions[0].startswith("Add file to the request") and "-F file=@" in top.actions[0]


def test_a_field_sent_one_level_too_high_is_named_where_it_belongs_not_as_a_misspelling():
    # vllm#35438, verbatim: response_format's schema at its top level, dropped; the request then answered 500
    line = (
        "(APIServer pid=1) WARNING 02-26 11:57:44 [protocol.py:53] The following fields were present in the request "
        "but ignored: {'schema'}"
    )
    [finding] = op5_requests.RULE_SCHEMA_REFUSED.evaluate(_facts([line]))
    assert finding.title == (
        "vLLM ignored the request field schema: it belongs at response_format.json_schema.schema, one level down"
    )
    assert '"json_schema": {"name": "…", "schema": {…}}' in finding.actions[0]


@pytest.mark.parametrize(
    "line",
    [  # browser-use/browser-use#2059 and mistralai/mistral-vibe#454, verbatim
        "ERROR 06-19 07:36:24 [serving_chat.py:200] mistral_common.exceptions.InvalidMessageStructureException: "
        "Unexpected role 'user' after role 'tool'",
        "(APIServer pid=1) ERROR 03-04 14:55:30 [serving.py:315] ValueError: Unexpected role 'user' after role 'tool'",
    ],
)
def test_mistral_commons_order_check_is_named_with_the_order_mistral_wants(line):
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.19"
    assert top.title == "Mistral's tokenizer refused the conversation's order: Unexpected role 'user' after role 'tool'"
    assert [(c.flag, c.proposed) for c in top.alternatives] == [("--tokenizer-mode", "auto")]


def test_mistral_commons_exception_named_without_its_words_is_still_its_order_check():
    # anomalyco/opencode#7488, verbatim: the paste breaks the line after the exception's name
    top = evaluate(_facts(["  mistral_common.exceptions.InvalidMessageStructureException:"])).findings[0]
    assert top.rule == "OP-5.19" and "its words are not in the text" in top.title
    assert "after the tool messages, the assistant's reply" in top.actions[0]


def test_a_template_refusing_where_turns_are_says_what_is_out_of_place():
    # vllm#6862 (cut where the paste wraps) and docker/docker-agent#3344 (retyped with a typo), verbatim
    cut = (
        "BadRequestError: Error code: 400 - {'object': 'error', 'message': 'After the optional system message, "
        "conversation roles must "
    )
    [finding] = op5_requests.RULE_TEMPLATE_REFUSED.evaluate(Facts(events=parse_lines([cut]).events))
    assert "two turns of the same role in a row" in finding.title
    typo = (
        "When I switch to my AI box running Qwen 3.6 35B served via vLLM, I get error `HTTP 400: System message must "
        "be at the beignning`"
    )
    [finding] = op5_requests.RULE_TEMPLATE_REFUSED.evaluate(Facts(events=parse_lines([typo]).events))
    assert "a system message that is not the conversation's first" in finding.title


def test_pydantics_refusal_with_its_line_breaks_lost_names_the_field():
    # odysseus-dev/odysseus#103, verbatim (cut): a message's metadata refused
    line = (
        "returned HTTP 400: 1 validation error for UserMessage metadata Extra inputs are not permitted "
        "[type=extra_forbidden, input_value={'_db_id': '7ce1f0b3'}, input_type=dict]"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-5.28" and "refused metadata: Extra inputs are not permitted" in top.title


def test_an_sdk_parameter_sent_as_a_field_says_to_unwrap_it():
    # vllm-project/vllm#33397, verbatim: the docs' grammar example sent with `extra_body` inside the JSON (0.14.1)
    ignored = "The following fields were present in the request but ignored: {'extra_body'}"
    [finding] = op5_requests.RULE_SCHEMA_REFUSED.evaluate(_facts([ignored]))
    assert "ignored the request field extra_body" in finding.title and "SDK call parameter" in finding.title
    assert "body's top level" in finding.actions[0] and "`extra_body=…`" in finding.actions[0]
    # refused as an extra field (up to 0.6.4): the same reading, as a refusal
    refused = "{'type': 'extra_forbidden', 'loc': ('body', 'extra_body'), 'msg': 'Extra inputs are not permitted'}"
    [finding] = op5_requests.RULE_SCHEMA_REFUSED.evaluate(_facts([refused]))
    assert "refused the request field extra_body" in finding.title
