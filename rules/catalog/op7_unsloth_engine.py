"""OP-7.93: Unsloth's GRPO trainer finds no vLLM engine on its model.

Why a rule of its own: Unsloth runs vLLM inside the training process. `FastLanguageModel.from_pretrained(...,
fast_inference=True)` builds a vLLM engine beside the model and attaches it as `model.vllm_engine`; Unsloth's patched
GRPO trainer (UnslothGRPOTrainer, with `use_vllm=True`) takes `self.llm = model.vllm_engine` when it is built. The
attribute exists only when the loader made the engine, so the trainer stops with Python's `'<ModelClass>' object has no
attribute 'vllm_engine'`, a line that names neither Unsloth nor vLLM. The threads show three causes:

- `fast_inference=True` left out of the loader call (unslothai/unsloth#2107, a user's finding confirmed by others;
  #1662 had it commented out);
- a model or loading mode Unsloth's vLLM path did not cover at the time: Gemma 3 (`Gemma3ForConditionalGeneration`,
  #2107 and #2706, later fixed), vision models through FastVisionModel (#1662), `load_in_8bit` (#3156);
- vLLM missing or unusable in the environment: the loader then says `vLLM is not installed! Will use Unsloth
  inference` and carries on without an engine (unslothai/unsloth PR #2975's fallback).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_unsloth_engine(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.UNSLOTH_NO_VLLM_ENGINE)
    if not events:
        return []
    event = events[0]
    model = event.model or "the model"
    return [
        RULE_UNSLOTH_ENGINE.finding(
            Severity.CRITICAL,
            f"Unsloth's GRPO trainer wants the vLLM engine on {model}, and the model was loaded without one: "
            "`fast_inference=True` missing, or a model Unsloth's vLLM path does not cover",
            summary="With `use_vllm=True`, Unsloth's GRPO trainer generates with the vLLM engine its loader attaches "
            "to the model as `vllm_engine` when called with `fast_inference=True`. This model has none, so the "
            "trainer stops before the first step.",
            evidence=[c.log_evidence(event, name="Unsloth's GRPO trainer", value=event.model)],
            actions=[
                "Load the model with `FastLanguageModel.from_pretrained(..., fast_inference=True, max_lora_rank=…, "
                "gpu_memory_utilization=…)`, the form Unsloth's GRPO notebooks use, so the loader builds the vLLM "
                "engine (unslothai/unsloth#2107).",
                "If it is set already: read the loader's banner. `vLLM is not installed! Will use Unsloth inference` "
                "means vLLM is missing from this environment (install the vLLM version the installed Unsloth "
                "supports); a model class Unsloth's vLLM path does not cover (Gemma 3 before its support, unsloth"
                "#2706; a vision model through FastVisionModel, #1662; `load_in_8bit`, #3156) needs a newer "
                "`pip install --upgrade unsloth unsloth_zoo`, 4-bit or 16-bit loading, or another model.",
                "Or train without vLLM: `use_vllm=False` in GRPOConfig (slower generation, no engine needed).",
            ],
            confidence=0.75,
        )
    ]


RULE_UNSLOTH_ENGINE = Rule(
    code="OP-7.93",
    title="Unsloth's GRPO trainer finds no vLLM engine on its model",
    category=Category.CONFIGURATION,
    check=_check_unsloth_engine,
    needs=("events",),
    page=RulePage(
        checks="Python's `'<ModelClass>' object has no attribute 'vllm_engine'`, the attribute Unsloth's loader "
        "attaches with `fast_inference=True` and its GRPO trainer reads.",
        why="Unsloth runs vLLM in the training process only when the loader was asked to (fast_inference=True), vLLM "
        "is installed, and the model class has Unsloth's vLLM path.",
        example="`'Gemma3ForConditionalGeneration' object has no attribute 'vllm_engine'` (unslothai/unsloth#2107); "
        "`'LlamaForCausalLM' object has no attribute 'vllm_engine'` (#2384).",
        fix="`fast_inference=True` in `from_pretrained`; vLLM installed; a newer Unsloth for a model it did not "
        "cover; or `use_vllm=False`.",
        limits="The line does not say which of the causes it is; the loader's banner above it does.",
        references=[
            "https://github.com/unslothai/unsloth/issues/2107",
            "https://github.com/unslothai/unsloth/issues/2706",
            "https://github.com/unslothai/unsloth/issues/1662",
            "https://github.com/unslothai/unsloth/issues/3156",
        ],
    ),
)

RULES: list[Rule] = [RULE_UNSLOTH_ENGINE]
