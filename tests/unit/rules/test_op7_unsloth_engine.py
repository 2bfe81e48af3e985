"""OP-7.93: Unsloth's GRPO trainer without the vLLM engine its loader attaches (unslothai/unsloth#2107's line and
#2384's, verbatim; #2107's traceback frame shows the trainer reading `model.vllm_engine`)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_unsloth_engine
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_the_bare_words_name_fast_inference_first():
    top = evaluate(_facts("'Gemma3ForConditionalGeneration' object has no attribute 'vllm_engine'")).top
    assert top.rule == "OP-7.93"
    assert "the vLLM engine on Gemma3ForConditionalGeneration" in top.title
    assert "fast_inference=True" in top.actions[0]
    assert "vLLM is not installed! Will use Unsloth inference" in top.actions[1]
    assert "`use_vllm=False`" in top.actions[2]


def test_the_trainers_traceback_reads_the_same():
    lines = [
        '  File "/data/scripts/unsloth_compiled_cache/UnslothGRPOTrainer.py", line 857, in __init__',
        "    self.llm = model.vllm_engine; self._last_loaded_step = 0; self.sampling_params = SamplingParams(",
        "AttributeError: 'LlamaForCausalLM' object has no attribute 'vllm_engine'",
    ]
    [finding] = op7_unsloth_engine.RULE_UNSLOTH_ENGINE.evaluate(_facts(*lines))
    assert finding.evidence[0].value == "LlamaForCausalLM"


def test_another_missing_attribute_is_not_unsloths_engine():
    facts = _facts("AttributeError: 'LLM' object has no attribute 'engine_step'")
    assert op7_unsloth_engine.RULE_UNSLOTH_ENGINE.evaluate(facts) == []
