"""VC-6: pydantic's refusal of a value outside a field's list, in a field no flag of vLLM's is: the nearest named."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding

# PaddlePaddle/PaddleOCR#16897, verbatim: PaddleX's generated config said `backend: vllm`; it takes `vllm-server`
PADDLEX = (
    "  Input should be 'native', 'fastdeploy-server', 'vllm-server' or 'sglang-server' [type=literal_error, "
    "input_value='vllm', input_type=str]`。"
)


def test_another_programs_field_is_named_by_its_values_with_the_nearest_one():
    top = top_finding(PADDLEX)
    assert top.rule == "VC-6" and top.title.startswith("a configuration refused 'vllm'")
    assert "did you mean 'vllm-server'" in top.title and not top.changes
    assert top.actions == [
        "Set it to one of: native, fastdeploy-server, vllm-server, sglang-server; vllm-server is the nearest."
    ]


def test_a_vllm_flags_values_and_a_request_bodys_refusal_are_not_this_reading():
    flag = "Input should be 'auto', 'half' or 'bfloat16' [type=literal_error, input_value='bf16', input_type=str]"
    assert top_finding(flag).rule == "OP-7.47"
    body = (
        '{"detail":[{"loc":["body","messages",0,"role"],"msg":"Input should be \'user\' or \'assistant\' '
        "[type=literal_error, input_value='system', input_type=str]\"}]}"
    )
    assert not parse_lines([body]).of_kind(LogEventKind.FIELD_CHOICE_REFUSED)
