"""OP-7.196: transformers' `It looks like the config file at '<path>' is not a valid JSON file.` for a config."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# microsoft/OmniParser#130, verbatim: `vllm serve microsoft/OmniParser-v2.0`; the repository's config.json is 0 bytes
OMNIPARSER = (
    "OSError: It looks like the config file at '/Users/manish/.cache/huggingface/hub/models--microsoft--OmniParser-v2.0"
    "/snapshots/11459378703eb81474b8a59e156e7a37aa75a092/config.json' is not a valid JSON file."
)


def test_a_config_that_does_not_parse_names_the_file_and_how_to_look_at_it():
    top = top_finding(OMNIPARSER)
    assert top is not None and top.rule == "OP-7.196" and "config.json is not valid JSON" in top.title
    assert (
        "python -m json.tool '/Users/manish/.cache/huggingface/hub/models--microsoft--OmniParser-v2.0" in top.actions[0]
    )
    assert "--force-download" in top.actions[1]


def test_a_gguf_file_in_the_same_words_is_still_a_vllm_without_gguf():
    # vllm#1002 (the GGUF feature thread), verbatim: vLLM 0.5.4 handed a .gguf file to transformers as a config
    top = top_finding(
        "OSError: It looks like the config file at '/home/victor.placido/.cache/huggingface/hub/"
        "models--TheBloke--TinyLlama-1.1B-Chat-v1.0-GGUF/snapshots/52e7645ba7c309695bec7ac98f4f005b139cf465/"
        "tinyllama-1.1b-chat-v1.0.Q4_0.gguf' is not a valid JSON file."
    )
    assert top is not None and top.rule == "OP-7.24"


def test_a_generation_config_in_the_same_words_is_not_the_models_failure_and_a_gguf_in_capitals_is_gguf():
    generation = top_finding(
        "OSError: It looks like the config file at '/models/qwen/generation_config.json' is not a valid JSON file."
    )
    assert generation is None or generation.rule != "OP-7.196"
    capitals = top_finding(
        "OSError: It looks like the config file at '/models/Qwen2-7B-Q4_K_M.GGUF' is not a valid JSON file."
    )
    assert capitals is not None and capitals.rule == "OP-7.24"


def test_a_bare_config_json_path_is_the_models_config():
    top = top_finding("OSError: It looks like the config file at 'config.json' is not a valid JSON file.")
    assert top is not None and top.rule == "OP-7.196"
