"""OP-7.210: a client written for the openai SDK before 1.0, from the line people pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm#1875, verbatim: vLLM's quickstart example of December 2023 run with openai 1.3.5
QUICKSTART = (
    "You tried to access openai.ChatCompletion, but this is no longer supported in openai>=1.0.0 - see the README at "
    "https://github.com/openai/openai-python for the API."
)


def test_the_sdks_words_alone_name_the_old_interface_and_the_client_object():
    top = top_finding(QUICKSTART)
    assert top.rule == "OP-7.210" and "openai.ChatCompletion" in top.title
    assert "OpenAI(base_url=" in top.actions[0] and "openai migrate" in top.actions[1]
    assert top.changes == []  # nothing on the server


def test_with_its_class_the_same():
    line = "openai.lib._old_api.APIRemovedInV1: " + QUICKSTART.replace("ChatCompletion", "Completion")
    assert top_finding(line).rule == "OP-7.210"
