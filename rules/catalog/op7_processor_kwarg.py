"""OP-7.193: transformers' processor warns that it ignores a keyword vLLM passed it, which for some is not so.

Why a rule of its own: vLLM hands a multimodal model's processor the keywords of `--mm-processor-kwargs` (and a
request's `mm_processor_kwargs`), and transformers' processing_utils warns `Keyword argument `max_pixels` is not a
valid argument for this processor and will be ignored` when the keyword is not among those the processor class
declares, even where the image processor under it does read it. People then think their setting is lost: vllm#14325
asked how to set Qwen2-VL's image size after seeing it, and vLLM's maintainer answered that max_pixels still works and
the warning is spurious. For a keyword no part of the processor reads, the warning is right; the line does not say
which, but the image's token count in vLLM's own log (or a request's prompt tokens) does.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Keywords of Qwen2-VL's image processor that its processor class does not declare, for which vLLM's maintainer said
# the warning is spurious (vllm#14325: max_pixels)
SPURIOUS_FOR_QWEN_VL = frozenset({"max_pixels"})


def _kwarg_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    keyword = event.message or "the keyword"
    known = keyword in SPURIOUS_FOR_QWEN_VL
    return RULE_PROCESSOR_KWARG.finding(
        Severity.INFO,
        f"transformers' processor warns that it ignores {keyword}"
        + (
            " (Qwen2-VL's image size bound): with the transformers of early 2025 the warning was spurious there"
            if known
            else ""
        ),
        summary=f"vLLM passes the multimodal processor the keywords of --mm-processor-kwargs (or a request's "
        f"mm_processor_kwargs); transformers warns for {keyword} because the processor class does not declare it, "
        "though the image processor under it may read it."
        + (
            " vLLM's maintainer said so of max_pixels for Qwen2-VL in March 2025 (vllm#14325); later transformers "
            "declare it on Qwen2-VL's processor, so with them the warning more likely means a processor that ignores "
            "it."
            if known
            else ""
        ),
        evidence=[c.log_evidence(event, name="keyword the processor warns of", value=keyword)],
        actions=[
            f"See whether {keyword} takes effect where it shows: the number of tokens an image becomes (a request's "
            "prompt tokens with and without the setting); if it changes, ignore the warning"
            + (
                ", as vLLM's maintainer advised for max_pixels."
                if known
                else "; if not, the model's processor does "
                "not read it: its model card or preprocessor_config.json names the keywords it takes."
            )
        ],
        confidence=0.7 if known else 0.5,
    )


RULE_PROCESSOR_KWARG = Rule(
    code="OP-7.193",
    title="transformers' processor warns that it ignores a keyword vLLM passed",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.PROCESSOR_KWARG_IGNORED, _kwarg_finding),
    needs=("events",),
    page=RulePage(
        checks="transformers' `Keyword argument `<name>` is not a valid argument for this processor and will be "
        "ignored`.",
        why="People read it as their --mm-processor-kwargs lost; for Qwen2-VL's max_pixels it is spurious.",
        example="`Keyword argument `max_pixels` is not a valid argument for this processor and will be ignored` "
        "with Qwen2-VL on vLLM 0.7.3 (vllm#14325: the setting still works, per vLLM's maintainer).",
        fix="Check the image's token count; ignore the warning where the setting takes effect.",
        limits="Whether the keyword takes effect is not in the line; only Qwen2-VL's pixel bounds are known spurious.",
        references=["https://github.com/vllm-project/vllm/issues/14325"],
    ),
)

RULES: list[Rule] = [RULE_PROCESSOR_KWARG]
