"""OP-7.197: the Hub's 404 for one file of a model repository at a revision."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_requests_bare_404_says_the_repository_may_be_missing_and_offers_the_revision():
    # vllm PR #8501, verbatim: HuggingFaceH4/gemma-2-2b-gkd keeps its model on another branch than main; requests'
    # 404 alone cannot tell that from a repository that does not exist (AIAnytime/Chat-with-PDF-Chatbot#4)
    top = top_finding(
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
        "https://huggingface.co/HuggingFaceH4/gemma-2-2b-gkd/resolve/main/config.json"
    )
    assert top is not None and top.rule == "OP-7.197"
    assert top.title.startswith("the Hub answered 404 for config.json of HuggingFaceH4/gemma-2-2b-gkd at main")
    assert top.changes == [] and (top.alternatives[0].flag, top.alternatives[0].current) == ("--revision", "main")
    assert "https://huggingface.co/HuggingFaceH4/gemma-2-2b-gkd must open" in top.actions[0]


def test_huggingface_hubs_words_are_sure_of_the_file_or_the_revision():
    entry = top_finding(
        "huggingface_hub.utils._errors.EntryNotFoundError: 404 Client Error. (Request ID: Root=1-66a) Entry Not Found "
        "for url: https://huggingface.co/gpt2/resolve/v1.0/config.json?download=true."
    )
    assert entry is not None and entry.rule == "OP-7.197" and "config.json at revision v1.0 of gpt2:" in entry.title
    assert (entry.changes[0].flag, entry.changes[0].current) == ("--revision", "v1.0")
    revision = top_finding(
        "RevisionNotFoundError: 404 Client Error. Revision Not Found for url: "
        "https://hf-mirror.com/org/m/resolve/refs%2Fpr%2F3/config.json."
    )
    assert revision is not None and revision.title.startswith("the Hub has no revision refs/pr/3 of org/m")


def test_files_a_model_can_do_without_and_datasets_are_not_its_failure():
    for line in (
        "huggingface_hub.errors.EntryNotFoundError: 404 Client Error. Entry Not Found for url: "
        "https://huggingface.co/org/m/resolve/main/model.safetensors.index.json.",
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
        "https://huggingface.co/datasets/squad/resolve/main/README.md",
    ):
        top = top_finding(line)
        assert top is None or top.rule != "OP-7.197", line


def test_a_refused_repository_is_still_a_token_question_and_names_a_repository_without_a_namespace():
    # BerriAI/litellm#1621, verbatim (the reporter's placeholder for the model's name)
    top = top_finding(
        "HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/MY_MODEL_NAME/resolve/main/config.json"
    )
    assert top is not None and top.rule == "OP-7.17" and "refused MY_MODEL_NAME's files" in top.title
