"""OP-7.69: a framework reading V0's engine internals on V1's engine, from the lines people pasted (OpenRLHF#922,
FastChat#3704, ms-swift#7065, verbatim)."""

from __future__ import annotations

from advisor.catalog.vllm_messages import message_catalog
from advisor.collect.logs import parse_lines
from rules import vllm_defaults
from rules.catalog import op7_engine_internals
from rules.facts import Facts
from tests.unit.rules.factories import config, top_finding

OPENRLHF = "(ActorModelRayActor pid=700388) AttributeError: 'LLMEngine' object has no attribute 'model_executor'"
FASTCHAT = "2025-03-24 22:04:27 | ERROR | stderr | AttributeError: 'AsyncLLM' object has no attribute 'engine'"
SWIFT = "AttributeError: 'LLMEngine' object has no attribute 'encode'"


def test_v0s_executor_read_on_v1s_engine_proposes_v0_where_it_still_exists():
    top = top_finding(OPENRLHF)
    assert top.rule == "OP-7.69" and "LLMEngine.model_executor" in top.title and "V0's engine" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == ("VLLM_USE_V1", "0", "env")
    assert any("collective_rpc" in action for action in top.actions)
    assert any("VLLM_ENABLE_V1_MULTIPROCESSING=0" in action for action in top.actions)


def test_asyncllm_without_the_inner_engine_is_the_same_class():
    top = top_finding(FASTCHAT)
    assert top.rule == "OP-7.69" and "AsyncLLM.engine" in top.title
    assert "replaced V0's AsyncLLMEngine" in top.summary


def test_an_attribute_v0_never_held_is_another_release_and_v0_is_not_offered():
    top = top_finding(SWIFT)
    assert top.rule == "OP-7.69" and top.title.endswith("written for another vLLM release")
    assert top.changes == []


def test_v0_is_not_offered_on_a_release_that_no_longer_has_it():
    assert top_finding(OPENRLHF, config=config(vllm_version="0.12.0")).changes == []


def test_the_release_v0_was_removed_in_is_where_the_catalogs_v0_engine_lines_end():
    lasts = {
        entry["last"]
        for entry in message_catalog().entries
        if entry["file"] == "vllm/engine/llm_engine.py" and entry["message"].startswith("Using V0 LLMEngine")
    }
    assert lasts == {"0.10"} and vllm_defaults.V0_REMOVED_FROM == (0, 11, 0)


def test_an_executors_own_missing_attribute_is_vllms_not_this():
    line = "AttributeError: 'MultiprocExecutor' object has no attribute 'workers'"
    assert op7_engine_internals.RULE_ENGINE_INTERNALS.evaluate(Facts(events=parse_lines([line]).events)) == []


def test_a_front_end_class_a_framework_constructs_without_what_it_calls_is_a_version_pair():
    # kserve/kserve#5399, verbatim: KServe's huggingfaceserver on vLLM 0.20.0, whose ServingEmbedding had no
    # create_embedding any more (KServe followed in its PR #5609)
    top = top_finding("{\"error\":\"AttributeError : 'ServingEmbedding' object has no attribute 'create_embedding'\"}")
    assert top.rule == "OP-7.69"
    assert top.title.startswith("code built on vLLM calls ServingEmbedding.create_embedding, which this vLLM's")
    assert not top.changes  # no VLLM_USE_V1 for a front end


def test_pythons_attribute_message_alone_on_its_line_is_read_as_the_attribute_error():
    # intel/ipex-llm#13012, verbatim: the message as a JSON string, without its class
    top = top_finding("\"'OpenAIServingTokenization' object has no attribute 'show_available_models'\"")
    assert top.rule == "OP-7.69" and "OpenAIServingTokenization.show_available_models" in top.title


def test_a_config_field_later_releases_removed_is_dated_by_the_engine_arguments_table():
    # verl-project/verl#4380, verbatim: verl's LoRA loader on a vLLM without lora_extra_vocab_size (EngineArgs had it
    # in 0.4 to 0.11; vllm/config/lora.py of 0.10.2 and 0.11 warns it "will be removed in v0.12.0")
    top = top_finding(
        "AttributeError: 'LoRAConfig' object has no attribute 'lora_extra_vocab_size'. Did you mean: '_return_value'?"
    )
    assert top.rule == "OP-7.69" and "LoRAConfig.lora_extra_vocab_size, a field of vLLM 0.4–0.11" in top.title
    assert "`vllm==0.11.*`" in top.actions[0]


def test_an_engine_argument_added_later_says_the_code_is_newer_than_the_installed_vllm():
    added = top_finding("AttributeError: 'EngineArgs' object has no attribute 'runner'")
    assert added.rule == "OP-7.69" and "from 0.10.1.1 on" in added.title


def test_a_field_no_release_had_is_not_dated():
    unknown = top_finding("AttributeError: 'ModelConfig' object has no attribute 'no_such_field'")
    assert getattr(unknown, "rule", None) != "OP-7.69"


def test_an_engine_argument_of_the_same_name_does_not_date_another_config_class():
    # kv_transfer_config is an engine argument, but ModelConfig never held it: nothing says it was removed there
    other = top_finding("AttributeError: 'ModelConfig' object has no attribute 'kv_transfer_config'")
    assert getattr(other, "rule", None) != "OP-7.69"


def test_a_server_whose_release_had_the_field_is_not_told_it_is_too_old():
    lines = (
        "INFO 01-01 00:00:00 api_server.py:1] vLLM API server version 0.32.0",
        "AttributeError: 'EngineArgs' object has no attribute 'runner'",
    )
    assert getattr(top_finding(*lines), "rule", None) != "OP-7.69"


def test_a_server_a_patch_release_too_old_is_told_so():
    # runner came in 0.10.1.1: a 0.10.0 server lacks it though its minor is the same
    lines = (
        "INFO 01-01 00:00:00 api_server.py:1] vLLM API server version 0.10.0",
        "AttributeError: 'EngineArgs' object has no attribute 'runner'",
    )
    assert top_finding(*lines).rule == "OP-7.69"


def test_an_llm_without_llm_engine_is_a_constructor_that_failed_and_the_failure_stays_on_top():
    # vllm#11437: creating vllm.LLM ran out of memory, then LLM.__del__ read the llm_engine never set
    refusal = "AttributeError: 'LLM' object has no attribute 'llm_engine'"
    top = top_finding(refusal)
    assert top.rule == "OP-7.69" and top.title.startswith("LLM's constructor failed before it set llm_engine")
    assert top.changes == [] and "printed before this one" in top.actions[0]
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.64 GiB of which 1.2 GiB is free."
    )
    assert top_finding(oom, "Exception ignored in: <function LLM.__del__ at 0x7f>", refusal).rule == "OP-1.8"


# dottxt-ai/outlines#576 (vLLM's LoRA commit made the engine's tokenizer a TokenizerGroup; outlines#579 unwrapped it)
# and eosphoros-ai/DB-GPT#1600, verbatim: the second glued to the reporter's Chinese words, as pasted
OUTLINES_GROUP = ">     AttributeError: 'TokenizerGroup' object has no attribute 'get_vocab'"
DBGPT_GROUP = "使用VLLM推理报错AttributeError: 'TokenizerGroup' object has no attribute 'eos_token_id'"


def test_vllms_tokenizer_wrapper_taken_for_the_tokenizer_is_a_version_pair_and_names_the_unwrap():
    for line, name in ((OUTLINES_GROUP, "get_vocab"), (DBGPT_GROUP, "eos_token_id")):
        top = top_finding(line)
        assert top.rule == "OP-7.69" and f"asks it for {name}" in top.title, line
        assert op7_engine_internals.GROUP_RELEASES in top.summary and top.changes == []
        assert any("llm.get_tokenizer()" in action and ".tokenizer" in action for action in top.actions)
    own = top_finding("AttributeError: 'TokenizerGroup' object has no attribute 'tokenizer'")
    assert own is None or "asks it for tokenizer" not in own.title


def test_the_wrappers_folder_ends_where_the_rule_says_it_went():
    lasts = {entry["last"] for entry in message_catalog().entries if "tokenizer_group" in entry["file"]}
    assert max(lasts, key=lambda minor: tuple(map(int, minor.split(".")))) == "0.10"
    assert op7_engine_internals.GROUP_RELEASES.endswith("0.10")


def test_vllms_mistral_tokenizer_taken_for_a_hugging_face_one_offers_the_hugging_face_tokenizer():
    # ai-dynamo/dynamo PR #12659, verbatim (Dynamo's engine factory read chat_template; the merged fix stopped that)
    top = top_finding("'MistralTokenizer' object has no attribute 'chat_template'")
    assert top.rule == "OP-7.69" and "for a Hugging Face tokenizer and asks it for chat_template" in top.title
    assert "vllm#8358" in top.summary
    assert top.changes == [] and [(a.flag, a.proposed) for a in top.alternatives] == [("--tokenizer-mode", "hf")]


def test_v0_style_code_reaching_the_driver_worker_of_v1s_multiprocess_executor_is_the_callers():
    # google/tunix#780, verbatim: Tunix's vLLM sampler reads model_executor.driver_worker.model_runner
    top = top_finding("AttributeError: 'MultiprocExecutor' object has no attribute 'driver_worker'")
    assert top.rule == "OP-7.69" and "MultiprocExecutor.driver_worker" in top.title
    assert "UniProcExecutor" in top.summary and top.changes == []
    assert any("collective_rpc" in action for action in top.actions)
