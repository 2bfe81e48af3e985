"""OP-7.200: mistral_common older than the tokenizer version a Mistral model's tekken.json declares, from the lines
people pasted."""

from __future__ import annotations

from rules.catalog import op7_mistral_tokenizer
from tests.unit.rules.factories import top_finding

# vllm PR #20801, verbatim: Devstral-Small-2507's v13 tokenizer on vLLM with mistral_common<1.7.0
DEVSTRAL = (
    "ValueError: Unknown version: v13 in /app/cache/huggingface/hub/models--mistralai--Devstral-Small-2507. Make sure "
    "to use a valid version string: ['v1', 'v2', 'v3', 'v7', 'v11']"
)
# A deployment log's first line of the same error for Mistral-Small-4-119B-2603 (v15) on vLLM 0.17.1's image, whose
# message wrapped before "Make sure …"
SMALL4_FIRST_LINE = "  ValueError: Unknown version: v15 in tekken.json."


def test_a_tokenizer_version_mistral_common_lacks_names_the_release_that_reads_it():
    top = top_finding(DEVSTRAL)
    assert top.rule == "OP-7.200" and "tokenizer version v13" in top.title
    assert "['v1', 'v2', 'v3', 'v7', 'v11']" in top.summary and "mistral_common>=1.7.0" in top.summary
    assert top.changes == []  # no flag of vLLM's: a package to install
    assert any('pip install -U "mistral_common>=1.7.0"' in action for action in top.actions)


def test_the_wrapped_first_line_alone_is_enough_and_v15_names_its_own_release():
    top = top_finding(SMALL4_FIRST_LINE)
    assert top.rule == "OP-7.200" and "mistral_common>=1.11.0" in top.summary


def test_a_version_without_a_sourced_release_is_told_to_upgrade_without_one():
    line = "ValueError: Unknown version: v99 in tekken.json. Make sure to use a valid version string: ['v1']"
    top = top_finding(line)
    assert top.rule == "OP-7.200" and "newer than the one installed" in top.summary
    assert "v99" not in op7_mistral_tokenizer.FIRST_READING


def test_other_unknown_versions_are_not_mistral_commons():
    top = top_finding("ValueError: Unknown version: 3.1 in the API header")
    assert top is None or top.rule != "OP-7.200"


def test_a_paste_cut_inside_make_sure_or_with_words_after_the_path_is_still_read():
    cut = (
        "ValueError: Unknown version: v13 in /root/.cache/huggingface/hub/models--mistralai--Devstral-Small-2507/"
        "snapshots/3178e9e2d8880880098af656c1fe223927ce74f8/tekken.json. Make sure to use a valid"
    )
    for line in (cut, "ValueError: Unknown version: v15 in /models/My Model/tekken.json (while loading)"):
        assert top_finding(line).rule == "OP-7.200", line
