"""OP-5.44: transformers' "Token indices sequence length is longer than …" warning is the tokenizer's, not vLLM's limit.

Why a rule of its own: transformers warns once whenever it tokenizes a sequence longer than the tokenizer's
model_max_length (tokenization_utils_base.py, `_eventual_warn_about_too_long_sequence`: `Token indices sequence length
is longer than the specified maximum sequence length for this model (N > L). Running this sequence through the model
will result in indexing errors`). vLLM tokenizes prompts with transformers but enforces its own limit,
--max-model-len (from the model's config, not the tokenizer's), and refuses a longer prompt with its own error. The
tokenizer's figure is often smaller than the model's context (vllm#14652: 16384 against DeepSeek-R1's 163840), so the
warning alone is not a failure; people paste it as one.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_tokenizer_length(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.TOKENIZER_LENGTH_WARNING)
    if event is None or event.prompt_tokens is None or event.prompt_limit is None:
        return []
    limit = facts.config.max_model_len if facts.config else None
    if limit is None:
        fits = "Whether vLLM serves it depends on --max-model-len, which the text does not give."
    elif event.prompt_tokens <= limit:
        fits = f"--max-model-len here is {limit:,}: the sequence fits, and vLLM serves it."
    else:
        fits = f"--max-model-len here is {limit:,}: the sequence is longer, and vLLM refuses it with its own error."
    return [
        RULE_TOKENIZER_LENGTH.finding(
            Severity.LOW,
            f"transformers' tokenizer warned of a {event.prompt_tokens:,}-token sequence over its model_max_length "
            f"({event.prompt_limit:,}): the tokenizer's figure, not vLLM's limit",
            summary="transformers warns once when it tokenizes a sequence longer than the tokenizer_config.json's "
            "model_max_length. vLLM does not use that figure: its limit is --max-model-len (from the model's config), "
            f"and it refuses a longer prompt with its own message. {fits}",
            evidence=[
                c.log_evidence(
                    event, name="tokens > tokenizer's maximum", value=f"{event.prompt_tokens} > {event.prompt_limit}"
                )
            ],
            actions=[
                "If requests failed, read vLLM's own error for them (a prompt over --max-model-len is refused with "
                "vLLM's words); this warning is printed either way.",
                "To silence it, set model_max_length in the tokenizer's tokenizer_config.json to the model's context "
                "length; it changes nothing in what vLLM serves.",
            ],
            confidence=0.7,
        )
    ]


RULE_TOKENIZER_LENGTH = Rule(
    code="OP-5.44",
    title="transformers' tokenizer-length warning, not vLLM's limit",
    category=Category.CONFIGURATION,
    check=_check_tokenizer_length,
    needs=("events",),
    page=RulePage(
        checks="transformers' `Token indices sequence length is longer than the specified maximum sequence length "
        "for this model (N > L)`.",
        why="The tokenizer compares every sequence with tokenizer_config.json's model_max_length; vLLM's limit is "
        "--max-model-len, and a longer prompt gets vLLM's own refusal.",
        example="`Token indices sequence length is longer than the specified maximum sequence length for this model "
        "(39682 > 16384)` from a DeepSeek-R1 deployment whose context is 163840 (vllm#14652).",
        fix="None needed for the warning; a failed request's cause is vLLM's own error. model_max_length in the "
        "tokenizer's config silences it.",
        limits="Whether the sequence fits is said only when the launch gives --max-model-len.",
        references=["https://github.com/vllm-project/vllm/issues/14652"],
    ),
)

RULES: list[Rule] = [RULE_TOKENIZER_LENGTH]
