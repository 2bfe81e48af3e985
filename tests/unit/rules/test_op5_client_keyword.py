"""OP-5.62: the openai client refused a keyword before sending the request."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_vllm_request_field_passed_as_a_keyword_goes_in_extra_body():
    top = top_finding("TypeError: Completions.create() got an unexpected keyword argument 'top_k'")
    assert top.rule == "OP-5.62" and "pass it in extra_body" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == ("extra_body", '{"top_k": …}', "setting")
    assert "extra-parameters" in top.actions[0]


def test_a_keyword_neither_api_takes_is_the_calling_programs_own():
    # infiniflow/ragflow#11688, verbatim: RAGFlow's leftover `unused` argument (the maintainer fixed RAGFlow's code)
    top = top_finding(
        "Fail to access model(VLLM/Qwen/Qwen2.5-VL-7B-Instruct).Completions.create() got an unexpected keyword "
        "argument 'unused'"
    )
    assert top.rule == "OP-5.62" and top.title.startswith("the calling program passes the openai client's create()")
    assert top.changes == [] and "No server flag changes this" in top.actions[1]


def test_a_guided_field_is_sent_as_structured_outputs_and_a_bare_create_is_read_only_for_vllms_keywords():
    top = top_finding("TypeError: create() got an unexpected keyword argument 'guided_json'")
    assert top.rule == "OP-5.62" and "structured_outputs" in top.title
    assert top.changes[0].proposed == '{"structured_outputs": {"json": …}}'
    other = top_finding("TypeError: create() got an unexpected keyword argument 'bucket_name'")
    assert other is None or other.rule != "OP-5.62"  # any create() of any library says the same


def test_openais_own_parameters_are_the_package_or_the_endpoint_not_extra_body():
    chat = top_finding("TypeError: Completions.create() got an unexpected keyword argument 'messages'")
    assert chat.rule == "OP-5.62" and "the call is on the other endpoint" in chat.title and chat.changes == []
    assert "client.chat.completions.create(messages=" in chat.actions[0]
    newer = top_finding("TypeError: Completions.create() got an unexpected keyword argument 'max_completion_tokens'")
    assert "the installed openai package predates it" in newer.title and "pip install -U openai" in newer.actions[0]
    bare = top_finding("TypeError: create() got an unexpected keyword argument 'stream'")
    assert bare is None or bare.rule != "OP-5.62"  # any library's create() may take a stream


def test_the_guided_decoding_backend_is_the_servers_setting_now():
    top = top_finding("TypeError: Completions.create() got an unexpected keyword argument 'guided_decoding_backend'")
    assert top.rule == "OP-5.62" and top.changes == [] and "--structured-outputs-config" in top.actions[0]
