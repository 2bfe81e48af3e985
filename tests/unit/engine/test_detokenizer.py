"""Incremental detokenization: deltas add up to the text; stop strings are cut and never streamed."""

from __future__ import annotations

import pytest

from engine.core.sampling_params import SamplingParams
from engine.model.detokenizer import IncrementalDetokenizer
from tests.helpers.tiny_model import build_byte_tokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return build_byte_tokenizer(tmp_path_factory.mktemp("tok"))


def stream(tokenizer, text: str, params: SamplingParams):
    detok = IncrementalDetokenizer(tokenizer, tokenizer("prompt: ")["input_ids"], params)
    deltas, matched = [], None
    for token in tokenizer(text)["input_ids"]:
        matched = detok.update(token, check_stop=True)
        deltas.append(detok.take_delta(finished=matched is not None))
        if matched:
            break
    if not matched:
        deltas.append(detok.take_delta(finished=True))
    return detok, deltas, matched


def test_deltas_concatenate_to_the_text_including_multibyte_characters(tokenizer):
    detok, deltas, _ = stream(tokenizer, "héllo wörld 😀 ok", SamplingParams())
    assert "".join(deltas) == detok.text == "héllo wörld 😀 ok"
    assert all("\ufffd" not in d for d in deltas)


def test_stop_string_truncates_the_text_and_reports_the_match(tokenizer):
    detok, deltas, matched = stream(tokenizer, "one two STOP three", SamplingParams(stop=["STOP"]))
    assert matched == "STOP"
    assert detok.text == "one two " and "".join(deltas) == "one two "


def test_stop_string_prefix_is_never_streamed_before_the_cut(tokenizer):
    _, deltas, _ = stream(tokenizer, "abc ST", SamplingParams(stop=["STOP"]))
    assert "".join(deltas[:-1]) == "abc"  # "ST" held back while it could still become "STOP"
    assert "".join(deltas) == "abc ST"  # and released at the end


def test_include_stop_str_in_output_keeps_the_stop_string(tokenizer):
    detok, _, matched = stream(tokenizer, "x = 1;\ny", SamplingParams(stop=[";"], include_stop_str_in_output=True))
    assert matched == ";" and detok.text == "x = 1;"


def test_earliest_of_several_stop_strings_wins(tokenizer):
    detok, _, matched = stream(tokenizer, "alpha beta gamma", SamplingParams(stop=["gamma", "beta"]))
    assert matched == "beta" and detok.text == "alpha "
