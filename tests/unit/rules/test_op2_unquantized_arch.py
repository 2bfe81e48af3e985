"""OP-2.6: vLLM 0.2's loader refusing to quantize an architecture it had no quantized implementation of."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding

# vllm#1711, verbatim: bloomz-3b AWQ through a wrapper whose pydantic 1 settings model printed vLLM's refusal; a
# maintainer said BLOOM's quantization support would come with the next release (vllm PR #1714)
BLOOM = (
    "  Quantization is not supported for <class 'vllm.model_executor.models.bloom.BloomForCausalLM'>. "
    "(type=value_error)"
)


def test_pydantic_ones_line_is_read_as_the_valueerror_it_prints():
    [event] = parse_lines([BLOOM]).events
    assert event.kind == LogEventKind.UNPLACED_ERROR and event.exception == "ValueError"
    assert "Quantization is not supported for <class" in event.message and "type=value_error" not in event.message


def test_the_architecture_is_named_and_the_fix_is_a_release_or_the_unquantized_checkpoint():
    top = top_finding(BLOOM)
    assert top.rule == "OP-2.6" and "cannot run BloomForCausalLM quantized" in top.title
    assert top.actions[0].startswith("Upgrade vLLM") and "unquantized" in top.actions[1]
