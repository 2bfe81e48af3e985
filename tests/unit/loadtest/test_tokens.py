"""Token counting falls back to a local tokenizer when the server sends no usage."""

import pytest

from loadtest.errors import LoadTestError
from loadtest.records import RequestRecord
from loadtest.stats import fill_tokens_with_tokenizer, load_tokenizer


@pytest.fixture(scope="module")
def word_tokenizer_dir(tmp_path_factory):
    """A whitespace word-level tokenizer saved as a Hugging Face tokenizer directory."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "hello": 1, "world": 2}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path_factory.mktemp("tok")
    PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]").save_pretrained(path)
    return str(path)


def _record(text, tokens=None):
    return RequestRecord(
        step=0,
        index=0,
        intended_send_ts=0.0,
        actual_send_ts=0.0,
        content_chunks=2,
        output_tokens=tokens,
        output_text=None if tokens is not None else text,
    )


def test_records_without_usage_are_counted_by_the_tokenizer(word_tokenizer_dir):
    without, with_usage = _record("hello world hello"), _record("ignored", tokens=7)
    fill_tokens_with_tokenizer([without, with_usage], load_tokenizer(word_tokenizer_dir))
    assert (without.tokens, without.token_source) == (3, "tokenizer")
    assert with_usage.tokens == 7 and with_usage.output_text is None  # usage already set: untouched


def test_without_a_tokenizer_content_events_are_the_count():
    record = _record("hello world hello")
    fill_tokens_with_tokenizer([record], None)
    assert record.tokens == 2


def test_unloadable_tokenizer_is_a_user_error(tmp_path):
    with pytest.raises(LoadTestError, match="--tokenizer"):
        load_tokenizer(str(tmp_path / "missing"))
