"""OP-7.188: vLLM's command line refused a JSON flag's value."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_python_dicts_text_given_to_a_json_flag_is_rewritten_as_json():
    # snowflakedb/ArcticInference#29, verbatim: a YAML config file's nested mapping reached argparse as str(dict)
    top = top_finding(
        "vllm serve: error: argument --speculative-config: invalid loads value: \"{'method': 'arctic', "
        "'num_speculative_tokens': 3, 'enable_suffix_decoding': True}\""
    )
    assert top.rule == "OP-7.188" and "a Python dict's text, not JSON" in top.title
    [change] = top.changes
    assert change.proposed == '{"method": "arctic", "num_speculative_tokens": 3, "enable_suffix_decoding": true}'
    assert "quoted JSON string" in top.actions[1]


def test_a_value_that_is_no_literal_at_all_gets_no_invented_json():
    top = top_finding("vllm serve: error: argument --kv-transfer-config: invalid loads value: \"{kv_role: 'x'\"")
    assert top.rule == "OP-7.188" and top.title.endswith("its value is not JSON") and top.changes == []


def test_compilation_config_refused_by_pydantic_names_the_object_form_without_proposing_a_value():
    # kubernetes-sigs/gateway-api-inference-extension#2243, verbatim (`--compilation-config 3` on vLLM 0.11.0)
    top = top_finding("pi_server.py: error: argument --compilation-config/-O: 1 validation error for CompilationConfig")
    assert top.rule == "OP-7.188" and 'is written {"mode": 3} now' in top.title
    assert top.changes == []  # the refused value is on pydantic's next lines: a guess would replace the launch's value
    assert "--compilation-config '{\"mode\": 3}'" in top.actions[0]
    other = top_finding("vllm serve: error: argument --kv-transfer-config: 2 validation errors for KVTransferConfig")
    assert other.rule == "OP-7.188" and other.changes == [] and "KVTransferConfig's fields" in other.title
