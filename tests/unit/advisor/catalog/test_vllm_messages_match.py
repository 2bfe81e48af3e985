"""vLLM's own messages are found in pasted lines: whole, cut after a sentence, or quoted inside another."""

from __future__ import annotations

import re

import pytest

from advisor.catalog.vllm_messages import MIN_PARTIAL_LITERAL, message_catalog


def test_a_refused_launch_is_found_with_its_fields_and_source():
    [best, *_] = message_catalog().match(
        "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8)."
    )
    ref = best.ref()
    assert ref.captured == {"total_num_attention_heads": "12", "tensor_parallel_size": "8"}
    assert ref.file.startswith("vllm/config") and ref.exception == "ValueError" and not ref.partial
    assert ref.first == "0.4" and ref.last == "0.34"  # one entry for the wording, across the files it moved between


def test_the_servers_release_picks_the_file_that_raised_the_message_there():
    """V0's worker and V1's KV planner print the same words; a 0.5 server's log is pointed at the V0 file, a
    release no place covers (or none known) at the newest, which still names the span of every place."""
    line = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
    [best, *_] = message_catalog().match(line + "initializing the engine.")
    newest, v0, v1 = best.ref(), best.ref("0.5.0"), best.ref("0.11.2")
    assert (newest.file, newest.first, newest.last) == ("vllm/v1/core/kv_cache_utils.py", "0.4", "0.12")
    assert (v0.file, v0.first, v0.last) == ("vllm/worker/worker.py", "0.4", "0.10")
    assert v1.file == "vllm/v1/core/kv_cache_utils.py" and best.ref("0.2.7") == newest
    # both engines print it in 0.7 to 0.10: the default one's file, V0's before 0.8 and V1's from it
    assert (best.ref("0.7.3").file, best.ref("0.9.2").file) == ("vllm/worker/worker.py", newest.file)


def test_the_file_a_log_header_names_picks_among_files_logging_the_same_words():
    """Every tool parser logs `Error in extracting tool call from response.`: the header's file is the one."""
    [best, *_] = message_catalog().match("Error in extracting tool call from response.")
    assert best.ref(logged_in="hermes_tool_parser.py:117").file == "vllm/tool_parsers/hermes_tool_parser.py"
    assert best.ref(logged_in="llama_tool_parser.py:141").file.endswith("/llama_tool_parser.py")
    assert best.ref(logged_in="no_such_file.py:1") == best.ref()


def test_a_message_is_found_by_a_whole_word_never_one_glued_to_a_field():
    """`BFCL_v3_{category}.json` reads `BFCL_v3_x7` in a line: indexing the entry by `bfcl_v3_` lost it, and which
    of two equally rare words indexed it followed Python's string hashing, so the same line matched in one run and
    not in the next."""
    line = (
        "ValueError: BFCL category 'simple' not found: file 'BFCL_v3_simple.json' does not exist in /data. Check "
        "--bfcl-categories (defaults: simple)."
    )
    [best, *_] = message_catalog().match(line)
    assert best.entry["message"].startswith("BFCL category '{category}' not found")


def test_a_message_cut_after_its_first_sentences_still_matches():
    line = (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
        "Your Tesla V100-SXM2-32GB GPU has compute capability 7.0."
    )
    [best, *_] = message_catalog().match(line)
    assert best.partial and best.entry["message"].startswith("Bfloat16 is only supported")
    assert best.literal_chars >= MIN_PARTIAL_LITERAL


def test_the_cause_quoted_inside_a_wrapper_ranks_first():
    line = (
        "RuntimeError: Worker failed with error 'LoRA rank 32 is greater than max_lora_rank 16.', "
        "please check the stack trace above for the root cause"
    )
    matches = message_catalog().match(line)
    assert matches[0].entry["message"] == "LoRA rank {rank} is greater than max_lora_rank {max_lora_rank}."
    assert matches[0].captured == {"rank": "32", "max_lora_rank": "16"}


def test_nearest_entries_for_an_unknown_error_share_its_rarest_words():
    nearest = message_catalog().nearest("Unhandled structured output grammar: RuntimeError in xgrammar matcher")
    assert len(nearest) == 3
    assert all({"unhandled", "structured"} & set(ref.template.lower().split()) for ref in nearest), nearest


def test_one_shared_word_is_not_near_enough():
    """A plugin's error (vllm_kunlun's `speculative_attention failed`) shares one rare word with a few vLLM
    messages (`operand`); naming them would send the reader into unrelated code."""
    catalog = message_catalog()
    assert catalog.nearest("ValueError: frobnicator refused operand") == []
    died = catalog.nearest("RayActorError: The actor died unexpectedly before finishing this task.")
    assert died and all({"died", "unexpectedly"} <= set(re.findall(r"\w+", ref.template.lower())) for ref in died), died


def test_an_ordinary_line_matches_nothing():
    assert message_catalog().match("the weather is fine today") == []


def test_a_message_cut_mid_word_matches_where_the_line_ends():
    [best, *_] = message_catalog().match(
        "ValueError: Model architectures ['Qwen2ForSequenceClassification'] are not supported for no"
    )
    assert best.partial and best.entry["message"].startswith("Model architectures {architectures} are not supported")
    assert best.captured == {"architectures": "['Qwen2ForSequenceClassification']"}


def test_pythons_own_attribute_messages_that_vllm_repeats_claim_no_line():
    """vLLM's `__getattr__`s raise Python's own words (`{self} object has no attribute {name}`, lora/layers/base.py;
    `module {name} has no attribute {name_2}`): any AttributeError holds them, so they are no evidence of vLLM's."""
    for line in (
        "AttributeError : 'ServingEmbedding' object has no attribute 'create_embedding'",  # kserve/kserve#5399
        "AttributeError: 'list' object has no attribute 'to'",
        "AttributeError: module 'outlines.models' has no attribute 'vllm'",
    ):
        assert message_catalog().match(line) == [], line


def test_a_message_a_person_cut_with_an_ellipsis_matches_before_it():
    # QwenLM/Qwen3-Omni#122, verbatim: the limit cut off and an ellipsis put in its place
    for ellipsis in ("...", "…"):
        found = message_catalog().match(f"ValueError: The decoder prompt (length 4926) is longer than {ellipsis}")
        assert found and found[0].partial and found[0].entry["message"].startswith("The {prompt_type} prompt (length")


def test_a_message_cut_inside_its_rarest_word_is_found_by_its_next_rarest():
    # vllm#39279's title, cut at its width inside "define", the word the entry is indexed by
    [best, *_] = message_catalog().match(
        "vllm.entrypoints.chat_utils.ChatTemplateResolutionError: As of transformers v4.44, default chat template is "
        "no longer allowed, so you must provide a chat template if the tokenizer does not defi"
    )
    assert best.partial and best.entry["message"].startswith("As of transformers v4.44, default chat template")


def test_a_message_cut_at_its_start_matches_from_the_word_the_line_begins_with():
    """vllm#10295's title quotes the warning's second sentence, its first letter lower-cased; a line that goes on
    past the message's end, or keeps fewer of its words than a partial match needs, is not it."""
    [best, *_] = message_catalog().match("since, enforce-eager is enabled, async output processor cannot be used")
    assert best.partial and best.entry["message"].startswith("To see benefits of async output processing")
    assert not message_catalog().match("since, enforce-eager is enabled, async output processor cannot be used today")
    assert not message_catalog().match("cannot be used")


def test_the_releases_a_module_said_things_in_are_when_it_existed():
    catalog = message_catalog()
    # bitsandbytes came in 0.5 and its module is gone after 0.27 (0.32's --quantization has no bitsandbytes)
    quantization = "vllm/model_executor/layers/quantization/"
    assert catalog.releases_with(f"{quantization}bitsandbytes.py", f"{quantization}bitsandbytes/") == ("0.5", "0.27")
    assert catalog.releases_with(f"{quantization}no_such_method.py") is None


@pytest.mark.parametrize(
    "line",
    [
        "(3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",  # Ray's words
        "the model is required to run",
    ],
)
def test_a_short_message_inside_another_sentence_is_not_vllms(line: str):
    assert not [
        m for m in message_catalog().match(line) if m.entry["message"] in ("unexpected error", "model is required")
    ]


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: unexpected error",
        "ERROR 01-01 [core.py:788] unexpected error",
        "Error code: 500 - {'message': 'Internal server error'}",
        # xiaomi-research/dasheng-lm#31, verbatim: a Chinese sentence's full-width colon before vLLM's words
        "你好，我使用VLLM部署模型后（服务起来了），使用openai接口形式调用服务，一直报错：Unknown part type: audio",
    ],
)
def test_a_short_message_where_a_message_starts_and_ends_is_vllms(line: str):
    assert message_catalog().match(line)


def test_the_one_message_quoting_a_distinct_value_is_vllms_words_for_it():
    # vllm#51801 (0.26): a bare KeyError on the combined pooling task, which 0.29 explains where it checks it
    ref = message_catalog().naming("embed&token_classify")
    assert ref is not None and ref.first == "0.29" and "--pooler-config" in ref.flags
    assert message_catalog().naming("embed") is None  # a word: any message might quote it
    assert message_catalog().naming("no_such_value_anywhere") is None


def test_a_models_own_file_does_not_name_a_value_for_errors_elsewhere():
    # eosphoros-ai/DB-GPT#1600's `'TokenizerGroup' object has no attribute 'eos_token_id'` was once sent to
    # unlimited_ocr2.py's page-count guard; phi4flash.py alone quotes `layer_idx`
    ref = message_catalog().naming("eos_token_id")
    assert ref is not None and not ref.file.startswith("vllm/model_executor/models/")
    assert message_catalog().naming("layer_idx") is None


def test_a_run_from_inside_a_message_matches_when_it_keeps_enough_of_vllms_words():
    """mem0ai/mem0#3133 quoted the middle of vLLM's refusal, cut at both ends; a home-lab PR's excerpt (rwlove/home-ops
    PR #13226) kept two runs of the Mamba check around its own ellipsis. A run shorter than a cut needs, or a line
    that goes on past vLLM's words, is not it."""
    [best, *_] = message_catalog().match(
        "does not support matryoshka representation, changing output dimensions will lead to poor"
    )
    assert best.partial and "matryoshka representation" in best.entry["message"]
    [mamba, *_] = message_catalog().match(
        "`exceeds available Mamba cache blocks (95)... CUDA graph capture cannot proceed`"
    )
    assert mamba.entry["message"].startswith("max_num_seqs (") and mamba.ref().captured["num_blocks"] == "95"
    assert not message_catalog().match("does not support matryoshka representation, whatever you do")
    assert not message_catalog().match("changing output dimensions will")


def test_a_common_sentence_inside_a_message_is_not_claimed_as_vllms():
    """A run of plain English that a vLLM message happens to hold is anybody's sentence: without a field's value, a name
    or more words than a sentence, and with a piece after an ellipsis that is not vLLM's, it is not vLLM's message."""
    for line in (
        "This will likely result in reduced accuracy.",
        "Please check your network configuration... Thanks",
        "Please make sure you have the required hardware and software setup",
    ):
        assert not message_catalog().match(line), line
