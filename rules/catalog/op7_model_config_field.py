"""OP-7.159: the model's configuration lacks a field vLLM's code for the architecture reads.

Why a rule of its own: vLLM picks its implementation of a model by the `architectures` in config.json and reads the
fields that implementation was written for from the config object transformers builds. A checkpoint whose config is
of another format than that one stops at the first missing field, in Python's words only: `AttributeError:
'<Name>Config' object has no attribute '<field>'`. Three threads, three formats: a checkpoint converted for
transformers (InternVL3-8B-hf, whose language-model fields sit under text_config) read by the implementation of the
original format (hiyouga/LlamaFactory#8086: `'InternVLConfig' object has no attribute 'vocab_size'`; the -hf model
served once its `architectures` was changed to `InternVLChatModel`); an older config without a field added later,
which vLLM then learnt to do without (vllm PR #16513, merged April 2025: Pixtral configs without
`spatial_merge_size`); a project's own model class saved under a known architecture's name (apple/ml-fastvlm#28:
`'LlavaConfig' object has no attribute 'vision_config'`). The same words for one of vLLM's own config classes
(VllmConfig, ModelConfig, …) are code written for another vLLM release, not the model's: not this rule's.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.components import VLLM_CONFIG_CLASSES
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# A config class without a field, vLLM's own classes left out by name
MISSING_FIELD = re.compile(
    rf"'(?!(?:{'|'.join(sorted(VLLM_CONFIG_CLASSES))})')(?P<cls>\w*Config)' object has no attribute '(?P<field>\w+)'"
)


def _missing_field_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    cls, field = found["cls"], found["field"]
    return RULE.finding(
        Severity.HIGH,
        f"the model's {cls} has no {field}: its config.json is of another format than vLLM's implementation of the "
        "architecture reads",
        summary=f"vLLM chose its implementation by config.json's `architectures` and read {field} from the config, "
        "which does not have it. The checkpoint's config is of another format than that implementation's: a variant "
        "converted for transformers (an -hf checkpoint nests the language model's fields under text_config), an "
        "older config without a field added later, or a project's own model saved under a known architecture's "
        "name; or transformers builds the config class differently from what the installed vLLM expects.",
        evidence=[c.log_evidence(event, name="the field the config lacks", value=f"{cls}.{field}")],
        actions=[
            "Compare the checkpoint's config.json with the original checkpoint of this architecture: "
            "`architectures` must name the implementation that reads this format (hiyouga/LlamaFactory#8086: "
            "InternVL3-8B-hf served once `architectures` named `InternVLChatModel`).",
            "Upgrade vLLM: support for a model's config variants lands release by release (vllm PR #16513 made "
            "Pixtral configs without spatial_merge_size load).",
            "Check transformers against the range the installed vLLM requires (`pip check`; `pip show vllm` lists "
            "it): a config class of another transformers release may hold its fields elsewhere.",
        ],
        confidence=0.55,
    )


RULE = Rule(
    code="OP-7.159",
    title="the model's config lacks a field vLLM reads",
    category=Category.STARTUP,
    check=c.on_phrase(MISSING_FIELD, _missing_field_finding),
    needs=("events",),
    page=RulePage(
        checks="`AttributeError: '<Name>Config' object has no attribute '<field>'` for a model's configuration "
        "class (not one of vLLM's own config classes).",
        why="vLLM's implementation of an architecture reads the fields of the config format it was written for.",
        example="`'InternVLConfig' object has no attribute 'vocab_size'` serving an InternVL3-8B-hf derivative "
        "(hiyouga/LlamaFactory#8086).",
        fix="A config.json whose format and `architectures` match what vLLM's implementation reads; a vLLM release "
        "that reads the variant; transformers in the range vLLM requires.",
        limits="The words do not say which of the three formats differs; the checkpoint's config.json does.",
        references=[
            "https://github.com/hiyouga/LlamaFactory/issues/8086",
            "https://github.com/vllm-project/vllm/pull/16513",
        ],
    ),
)

RULES: list[Rule] = [RULE]
