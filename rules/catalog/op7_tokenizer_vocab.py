"""OP-7.70: the model produced a token id its tokenizer does not have, and vLLM's detokenizer failed on it.

Why a rule of its own: a model's embedding often has more rows than its tokenizer has tokens (config.json's
vocab_size padded beyond the tokenizer: vllm#3118's fine-tuned Qwen1.5 said 151648 against 151643), and a model can
sample one of those rows. The tokenizers library's `convert_ids_to_tokens` gives None for an id past its vocabulary, and
vLLM before PR #3685 (merged March 2024; in 0.4.1) passed that None on to `convert_tokens_to_string`, whose Rust
binding refuses it: `TypeError: argument 'tokens': 'NoneType' object cannot be converted to 'PyString'` (vllm#340,
#516, #2104, #3118). The line names neither vLLM nor the model. The request dies; on V0's server the engine loop
with it. Later releases decode such an id as empty text (`_replace_none_with_empty`, vllm/tokenizers/
detokenizer_utils.py in 0.32). A model that samples those ids often is itself broken: QwenLM/Qwen3#122's (then
Qwen1.5's tracker) GPTQ 0.5B checkpoints did so through a bug of vLLM's Qwen2 with tied embeddings (vLLM PR #3344).

The Mistral tokenizer mode (`--tokenizer-mode mistral`, tekken's byte-level vocabulary) met the same ids later: the
empty text such an id became reached its wrapper's `convert_tokens_to_string` as empty bytes, whose reverse lookup in
tekken's vocabulary fails with `KeyError: b''` (vllm#9557, Pixtral and Mistral models on 0.6.3; vLLM PR #9625, merged
October 2024, handles those ids and partial UTF-8 bytes). The bare KeyError names nothing else, so it is read as
tekken's, where vLLM meets it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import DETOKENIZER_TEKKEN, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage

_NONE_TOKEN = "argument 'tokens': 'NoneType' object cannot be converted to 'PyString'"
DECODES_UNKNOWN_IDS_FROM = (0, 4, 1)  # the first release certain to hold PR #3685 (merged 2024-03-28)
TEKKEN_GUARDED_FROM = (0, 6, 4)  # the first release certain to hold PR #9625 (merged 2024-10-23)
_COMPARE_SIZES = (
    "Compare the model's vocab_size in config.json with the tokenizer's length (`python -c \"from "
    "transformers import AutoTokenizer as T; print(len(T.from_pretrained('<model>')))\"`): ids between the "
    "two are embedding rows no token names."
)
_WEIGHTS = (
    "If the answers before the failure were garbage (runs of '!' or one repeated token), the weights are "
    "at fault, not the tokenizer: try the unquantized model, and upgrade vLLM for its model code "
    "(QwenLM/Qwen3#122: Qwen1.5-0.5B's GPTQ checkpoints, fixed by vLLM PR #3344)."
)


def _finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    if event.message == DETOKENIZER_TEKKEN:
        return _tekken_finding(facts, event)
    release = c.vllm_release(facts)
    actions = [_COMPARE_SIZES, _WEIGHTS]
    if release is None or release < DECODES_UNKNOWN_IDS_FROM:
        actions.insert(
            0,
            "Upgrade vLLM to 0.4.1 or later: its detokenizer reads an id past the tokenizer as empty text (PR "
            "#3685) instead of failing the request.",
        )
    return RULE_TOKENIZER_VOCAB.finding(
        c.death_severity(facts),
        "the model produced a token id its tokenizer does not have, and the detokenizer failed on it "
        "(tokenizers' None for an unknown id)",
        summary="The tokenizers library turns an id past its vocabulary into None, which the decoder's Rust "
        "binding refuses as a string. The model's embedding is larger than its tokenizer (config.json's "
        "vocab_size padded), and the model sampled one of the extra rows; vLLM releases before PR #3685 "
        "did not guard against it, so the request fails (and on V0's server the engine loop with it).",
        evidence=[c.log_evidence(event, name="detokenizer", value=_NONE_TOKEN)],
        actions=actions,
        confidence=0.8,
    )


_TEKKEN_SIZE = (
    "Compare the model's vocab_size in config.json (or params.json) with tekken's own count: `python -c \"from "
    "mistral_common.tokens.tokenizers.mistral import MistralTokenizer as M; print(M.from_file('<model>/tekken.json')"
    '.instruct_tokenizer.tokenizer.n_words)"`: ids between the two are embedding rows no token names.'
)


def _tekken_finding(facts: Facts, event: LogEvent) -> Finding:
    """The Mistral tokenizer mode's tekken (byte-level) vocabulary: an id past its length became empty bytes, which
    its reverse lookup in convert_tokens_to_string does not hold (vllm#9557; vLLM PR #9625 guards it). A release with
    the guard met the same words elsewhere, which the line alone cannot say: read less surely there."""
    release = c.vllm_release(facts)
    guarded = release is not None and release >= TEKKEN_GUARDED_FROM
    upgrade = (
        "Upgrade vLLM to 0.6.4 or later: PR #9625 (merged October 2024) decodes such ids and partial UTF-8 bytes "
        "without the lookup that fails."
    )
    return RULE_TOKENIZER_VOCAB.finding(
        c.death_severity(facts),
        "the model produced a token id the Mistral tokenizer (tekken) has no token for, and the detokenizer failed "
        "on the empty bytes it became",
        summary="Under --tokenizer-mode mistral, vLLM's wrapper turned a sampled id past the tekken vocabulary's "
        "length into empty bytes, then looked those bytes up to rebuild the text; tekken holds no token for them, "
        "so the request (and the engine loop that ran it) failed with `KeyError: b''`. The model's embedding is "
        "larger than its tokenizer, and it sampled one of the extra rows."
        + (
            " This release already has vLLM's guard (PR #9625, 0.6.4), so these words came through another path: "
            "the traceback's frames say whose."
            if guarded
            else ""
        ),
        evidence=[c.log_evidence(event, name="detokenizer", value="KeyError: b''")],
        actions=([] if guarded else [upgrade]) + [_TEKKEN_SIZE],
        confidence=0.45 if guarded else 0.7,  # a bare KeyError of empty bytes: tekken's lookup is where vLLM meets it
    )


RULE_TOKENIZER_VOCAB = Rule(
    code="OP-7.70",
    title="a token id past the tokenizer's vocabulary failed the detokenizer",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.DETOKENIZER_UNKNOWN_ID, _finding),
    needs=("events",),
    page=RulePage(
        checks="tokenizers' `TypeError: argument 'tokens': 'NoneType' object cannot be converted to 'PyString'` (with "
        "or without `TypeError: `); the Mistral tokenizer's `KeyError: b''`.",
        why="convert_ids_to_tokens gives None for an id past the tokenizer's vocabulary; a padded embedding lets the "
        "model sample one; vLLM before PR #3685 (0.4.1) passed the None to the decoder.",
        example="`TypeError: argument 'tokens': 'NoneType' object cannot be converted to 'PyString'` from a fine-tuned "
        "Qwen1.5 whose config says 151648 tokens and whose tokenizer has 151643 (vllm#3118).",
        fix="vLLM 0.4.1 or later (unknown ids decode as empty text); if the model emits such ids often, its weights "
        "or quantization are broken: test the unquantized model.",
        limits="The line does not say which id or model; the release is read from the log when it is there. A "
        "bare `KeyError: b''` is read as tekken's, where vLLM meets it.",
        references=[
            "https://github.com/vllm-project/vllm/pull/3685",
            "https://github.com/vllm-project/vllm/issues/340",
            "https://github.com/vllm-project/vllm/issues/3118",
            "https://github.com/vllm-project/vllm/pull/9625",
        ],
    ),
)

RULES: list[Rule] = [RULE_TOKENIZER_VOCAB]
