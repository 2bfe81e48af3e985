"""OP-5.69 and OP-5.70: what printed SamplingParams and outputs show about a wrong answer.

Why rules of their own: an offline user whose `LLM.generate()` answers wrongly pastes the objects they printed, and
no line of them is an error (advisor/collect/offline_outputs.py reads them as OFFLINE_SAMPLING_PARAMS and
OFFLINE_OUTPUT events). The settings and the output read together say what went wrong.

- OP-5.69: an output that ended at a stop string with fewer tokens than min_tokens. vLLM's V1 engine (the default from
  0.8.0) checked stop strings in its detokenizer without min_tokens until 0.10.1 (vllm#21987, fixed by PR #22014:
  vllm/v1/engine/detokenizer.py has no min_tokens in 0.8.0 and 0.10.0, and skips stop strings until it in 0.10.1);
  V0's stop checker always honoured it (vllm/engine/output_processor/stop_checker.py).
- OP-5.70: an output that is one token repeated. With the prompt's ids printed and the text naming a model family
  whose tokenizer starts every prompt with a BOS token, a prompt without it is the cause a base model shows this way:
  vLLM 0.19.0's Gemma 4 processor tokenized every prompt without special tokens, so a raw prompt to a Gemma 4 base
  model lost its `<bos>` (id 2) and degenerated (vllm#39827); 0.19.1 keeps it for a model without a chat template
  (PR #39842; both releases' vllm/model_executor/models/gemma4_mm.py). Otherwise the repetition is named, with what
  to check.
"""

from __future__ import annotations

import re
from collections import Counter

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

MIN_TOKENS_FIXED_IN = "0.10.1"  # V1's detokenizer skips stop strings until min_tokens from this release (PR #22014)
# How an output that ended at a stop string says so: vLLM's finish_reason, an adapter's stop_reason
_STOPPED = frozenset({"stop", "stop_sequence", "STOP_SEQUENCE"})


# --- OP-5.69 a stop string ended the output before min_tokens -----------------------------------------------------


def _check_min_tokens(facts: Facts) -> list[Finding]:
    params = facts.first_event(LogEventKind.OFFLINE_SAMPLING_PARAMS)
    output = facts.first_event(LogEventKind.OFFLINE_OUTPUT)
    if params is None or output is None or not params.min_tokens or not params.stop_strings:
        return []
    generated = output.generated_tokens
    if generated is None or generated >= params.min_tokens or output.finish_reason not in _STOPPED:
        return []
    stops = ", ".join(repr(s) for s in params.stop_strings[:3])
    return [
        RULE_MIN_TOKENS.finding(
            Severity.HIGH,
            f"the output stopped at a stop string after {generated} token(s) although min_tokens is "
            f"{params.min_tokens}: vLLM's V1 engine checked stop strings without min_tokens before "
            f"{MIN_TOKENS_FIXED_IN}",
            summary=f"The request asked for at least {params.min_tokens} tokens and stops at {stops}; it ended with "
            f"finish reason {output.finish_reason} after {generated}. vLLM's V1 engine (the default from 0.8.0) "
            "applies min_tokens to the end-of-sequence and stop token ids in the sampler, but its detokenizer checked "
            f"stop strings without it until {MIN_TOKENS_FIXED_IN} (vllm#21987, PR #22014); V0's stop checker honours "
            "it.",
            evidence=[
                c.log_evidence(params, name="min_tokens", value=params.min_tokens),
                c.log_evidence(output, name="tokens generated", value=generated),
            ],
            actions=[
                f"Upgrade vLLM to {MIN_TOKENS_FIXED_IN} or later (`pip install -U 'vllm>={MIN_TOKENS_FIXED_IN}'`): "
                "from it the detokenizer skips stop strings until min_tokens tokens are out.",
                "On an older release: leave the stop string out and cut the text at it after generation, or pass "
                "the string's token as stop_token_ids, which the sampler holds back until min_tokens.",
            ],
            confidence=0.85,
        )
    ]


RULE_MIN_TOKENS = Rule(
    code="OP-5.69",
    title="a stop string ended the output before min_tokens (V1's detokenizer before 0.10.1)",
    category=Category.RELIABILITY,
    check=_check_min_tokens,
    needs=("events",),
    page=RulePage(
        checks="A printed SamplingParams with min_tokens and stop strings beside an output that ended at a stop "
        "(finish reason stop) with fewer tokens than min_tokens.",
        why="V1's detokenizer checked stop strings without min_tokens until 0.10.1; the sampler's min_tokens holds "
        "back only end-of-sequence and stop token ids.",
        example="`SamplingParams(…, stop=['\\n'], …, max_tokens=200, min_tokens=200, …)` and an output of 2 tokens "
        'with `"stop_reason": "stop"` (vllm#21987, vLLM 0.9.0.1).',
        fix=f"Upgrade vLLM to {MIN_TOKENS_FIXED_IN} or later.",
        limits="Reads printed objects (and a TGIS adapter's keys); an OpenAI response's usage is not read here.",
        references=["https://github.com/vllm-project/vllm/issues/21987"],
    ),
)


# --- OP-5.70 the output is one token repeated ------------------------------------------------------------------------

MIN_REPEATED = 8  # output tokens before a run of one id is read as degenerate, not a short answer
REPEATED_SHARE = 0.9
# Families whose tokenizers put a BOS token first in every prompt, by the words a paste names them with, and its id
# (Gemma's `<bos>` is 2 in every release; Llama 3's `<|begin_of_text|>` is 128000)
BOS_BY_FAMILY: tuple[tuple[re.Pattern[str], str, int], ...] = (
    (re.compile(r"\bgemma", re.IGNORECASE), "Gemma", 2),
    (re.compile(r"\b(?:meta-)?llama[-_ ]?3", re.IGNORECASE), "Llama 3", 128000),
)


def _check_repeated(facts: Facts) -> list[Finding]:
    output = facts.first_event(LogEventKind.OFFLINE_OUTPUT)
    if output is None or len(output.token_ids) < MIN_REPEATED:
        return []
    token, times = Counter(output.token_ids).most_common(1)[0]
    if times < REPEATED_SHARE * len(output.token_ids):
        return []
    missing_bos = _bos_missing(facts, output)
    if missing_bos is not None:
        return [_without_bos(output, token, times, *missing_bos)]
    return [
        RULE_REPEATED.finding(
            Severity.MEDIUM,
            f"the output is one token repeated (id {token}, {times} of {len(output.token_ids)}): the model's "
            "generation degenerated",
            summary="A model that repeats one token from the start is not being given what it was trained on. "
            "Check, in this order: the prompt's first ids (a model whose tokenizer starts with a BOS token "
            "degenerates without it), the prompt's format (a chat model without its chat template, a base model "
            "given a chat prompt), the dtype (float16 on a model trained in bfloat16 can overflow) and the "
            "quantization's kernels (compare with the unquantized model).",
            evidence=[c.log_evidence(output, name="output token ids", value=f"{token} x{times}")],
            actions=[
                "Print the prompt's token ids (RequestOutput.prompt_token_ids) and compare them with what "
                "transformers' tokenizer gives for the same text with add_special_tokens=True; then try --dtype "
                "bfloat16 and the unquantized model.",
            ],
            confidence=0.5,
        )
    ]


def _bos_missing(facts: Facts, output: LogEvent) -> tuple[str, int] | None:
    """(family, BOS id) when the prompt's printed ids do not start with the BOS of a family the text names."""
    if not output.prompt_token_ids:
        return None
    text = " ".join(e.raw or e.message or "" for e in facts.events)
    for pattern, family, bos in BOS_BY_FAMILY:
        if pattern.search(text) and output.prompt_token_ids[0] != bos:
            return family, bos
    return None


def _without_bos(output: LogEvent, token: int, times: int, family: str, bos: int) -> Finding:
    first = output.prompt_token_ids[0]
    return RULE_REPEATED.finding(
        Severity.HIGH,
        f"the prompt has no BOS token at position 0 (it starts with id {first}, not {family}'s {bos}), and the output "
        f"is one token repeated (id {token}, {times} times)",
        summary=f"{family}'s tokenizer starts every prompt with its BOS token (id {bos}); a model given a prompt "
        "without it, a base (pre-trained) model most of all, degenerates into repeating a token. vLLM 0.19.0's "
        "Gemma 4 processor tokenized every prompt without special tokens (so a chat template's own <bos> was not "
        "doubled), which left a raw prompt to a Gemma 4 base model without one (vllm#39827); 0.19.1 keeps the BOS "
        "for a model without a chat template (PR #39842).",
        evidence=[
            c.log_evidence(output, name="prompt's first token id", value=first),
            c.log_evidence(output, name="output token ids", value=f"{token} x{times}"),
        ],
        actions=[
            "Upgrade vLLM to 0.19.1 or later (`pip install -U 'vllm>=0.19.1'`) when the model is Gemma 4 on 0.19.0.",
            f"Otherwise put the BOS in the prompt yourself: pass prompt_token_ids starting with {bos}, or the "
            "tokenizer's BOS text at the start of the prompt (`<bos>` for Gemma), and check that the tokenizer's "
            "add_bos_token is not turned off.",
        ],
        confidence=0.75,
    )


RULE_REPEATED = Rule(
    code="OP-5.70",
    title="a printed output is one token repeated (a prompt without its BOS, or a format the model was not trained on)",
    category=Category.RELIABILITY,
    check=_check_repeated,
    needs=("events",),
    page=RulePage(
        checks=f"A printed CompletionOutput whose token ids are {MIN_REPEATED} or more, nine in ten of them one id; "
        "high when the prompt's printed ids do not start with the BOS of a family the text names (Gemma, Llama 3).",
        why="A model that repeats one token from the start was given a prompt unlike its training's: without its "
        "BOS, without its chat template, in a dtype it overflows in.",
        example="`prompt_token_ids=[50429, 563]` and `token_ids=[563, 563, …]` from google/gemma-4-26B-A4B on vLLM "
        "0.19.0 (vllm#39827).",
        fix="For Gemma 4 on 0.19.0, upgrade to 0.19.1; otherwise start the prompt with the BOS.",
        limits="Knows the BOS ids of Gemma and Llama 3 only; other families get the general reading.",
        references=["https://github.com/vllm-project/vllm/issues/39827"],
    ),
)

RULES: list[Rule] = [RULE_MIN_TOKENS, RULE_REPEATED]
