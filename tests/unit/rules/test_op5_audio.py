"""OP-5.45: libsndfile's refusal of an uploaded audio file, however the text carries it."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_audio
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_500_body_of_libsndfiles_words_is_the_clients_file_not_the_server():
    # vllm PR #34715's description, verbatim: a corrupted or non-audio upload before the PR made it a 400
    body = (
        '{"error":{"code":500,"message":"Error opening \\u003c_io.BytesIO object at 0x79cb049209f0\\u003e: Format '
        'not recognised.","param":null,"type":"Internal Server Error"},"id":"9dc86d62-c777-48df-9d4e-e2ab5e719292"}'
    )
    top = evaluate(_facts([body])).findings[0]
    assert top.rule == "OP-5.45"
    assert top.title == "an uploaded audio file the server could not decode: libsndfile says Format not recognised"
    assert "ffmpeg -i" in top.actions[0]


def test_the_log_line_of_the_same_refusal_names_libsndfiles_reason():
    line = (
        "ERROR 02-17 10:00:00 [serving_transcription.py:120] soundfile.LibsndfileError: Error opening "
        "<_io.BytesIO object at 0x7f00aa>: File contains data in an unknown format."
    )
    [finding] = op5_audio.RULE_AUDIO.evaluate(_facts([line]))
    assert finding.title.endswith("libsndfile says File contains data in an unknown format")


def test_a_file_opened_by_name_is_not_an_upload():
    line = "soundfile.LibsndfileError: Error opening 'speech.wav': System error."
    assert op5_audio.RULE_AUDIO.evaluate(_facts([line])) == []
