"""OP-7.119: transformers has no tokenizer class by the name the checkpoint's tokenizer_config.json gives."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_tokenizer_class
from rules.evaluate import evaluate
from rules.facts import Facts

# vLLM 0.12-0.20's wrapper around transformers' refusal, as gpustack/gpustack#5096 shows it (frames shortened)
WRAPPED_BACKEND = [
    '(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/'
    'tokenization_auto.py", line 1153, in from_pretrained',
    "(APIServer pid=1)     raise ValueError(",
    "(APIServer pid=1) ValueError: Tokenizer class TokenizersBackend does not exist or is not currently imported.",
    "(APIServer pid=1) ",
    "(APIServer pid=1) The above exception was the direct cause of the following exception:",
    "(APIServer pid=1) ",
    "(APIServer pid=1) Traceback (most recent call last):",
    '(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/vllm/tokenizers/hf.py", line 108, in '
    "from_pretrained",
    "(APIServer pid=1)     raise RuntimeError(err_msg) from e",
    "(APIServer pid=1) RuntimeError: Failed to load the tokenizer. If the tokenizer is a custom tokenizer not yet "
    "available in the HuggingFace transformers library, consider setting `trust_remote_code=True` in LLM or using "
    "the `--trust-remote-code` flag in the CLI.",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_transformers_5_save_outranks_vllms_trust_remote_code_advice():
    top = evaluate(_facts(WRAPPED_BACKEND)).findings[0]
    assert top.rule == "OP-7.119" and "transformers 5" in top.title
    assert top.changes[0].flag == "tokenizer_class" and top.changes[0].kind == "setting"
    assert top.alternatives[0].flag == "--tokenizer"
    assert "cannot load it" in top.summary


def test_old_llama_casing_is_renamed_to_the_class_transformers_ships():
    # CVI-SZU/Linly#71 and henrywoo/pyllama#35, verbatim; codellama#132's class with Python's exception prefix
    for line, proposed in (
        ("ValueError: Tokenizer class LLamaTokenizer does not exist or is not currently imported.", "LlamaTokenizer"),
        (
            "ValueError: Tokenizer class CodeLLaMATokenizer does not exist or is not currently imported.",
            "LlamaTokenizer",
        ),
        ("ValueError: Tokenizer class LLaMATokenizer does not exist or is not currently imported.", "LlamaTokenizer"),
    ):
        top = evaluate(_facts([line])).findings[0]
        assert top.rule == "OP-7.119" and top.changes[0].proposed == proposed


def test_another_missing_class_names_both_causes_and_stays_below_vllms_own_words():
    line = "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported."
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.119" and "older than the model" in top.title
    assert "--trust-remote-code" in top.actions[0] and "upgrade transformers" in top.actions[1]
    wrapped = [*WRAPPED_BACKEND[:2], line, *WRAPPED_BACKEND[3:]]
    assert [f.rule for f in evaluate(_facts(wrapped)).findings][:2] == ["VC-1", "OP-7.119"]


def test_other_tokenizer_errors_are_not_read_as_a_missing_class():
    line = "ValueError: Tokenizer class Qwen2Tokenizer failed to load vocabulary."
    assert op7_tokenizer_class.RULE.evaluate(_facts([line])) == []
