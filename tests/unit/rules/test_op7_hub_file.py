"""OP-7.197: the Hub's 404 for one file of a model repository at a revision."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_file_missing_at_the_revision_asked_for_is_a_revision_to_name():
    # vllm PR #8501, verbatim: HuggingFaceH4/gemma-2-2b-gkd keeps its model on another branch than main
    top = top_finding(
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
        "https://huggingface.co/HuggingFaceH4/gemma-2-2b-gkd/resolve/main/config.json"
    )
    assert top is not None and top.rule == "OP-7.197"
    assert top.title.startswith("the Hub has no config.json at revision main of HuggingFaceH4/gemma-2-2b-gkd")
    change = top.changes[0]
    assert (change.flag, change.current) == ("--revision", "main")
    assert "https://huggingface.co/HuggingFaceH4/gemma-2-2b-gkd/tree/main" in top.actions[0]


def test_huggingface_hubs_words_for_it_and_a_repository_without_a_namespace():
    top = top_finding(
        "huggingface_hub.utils._errors.EntryNotFoundError: 404 Client Error. (Request ID: Root=1-66a) Entry Not Found "
        "for url: https://huggingface.co/gpt2/resolve/v1.0/tokenizer.json."
    )
    assert top is not None and top.rule == "OP-7.197" and "tokenizer.json at revision v1.0 of gpt2:" in top.title


def test_a_refused_repository_is_still_a_token_question_and_names_a_repository_without_a_namespace():
    # BerriAI/litellm#1621, verbatim (the reporter's placeholder for the model's name)
    top = top_finding(
        "HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/MY_MODEL_NAME/resolve/main/config.json"
    )
    assert top is not None and top.rule == "OP-7.17" and "refused MY_MODEL_NAME's files" in top.title
