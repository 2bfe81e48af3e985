"""OP-5.45: an uploaded audio file the server could not decode (libsndfile's words, answered as a 500).

Why a rule of its own: vLLM's transcription and translation endpoints decode the upload in memory with librosa,
which reads it through soundfile (libsndfile). A file libsndfile does not recognise fails there with its own words,
`Error opening <_io.BytesIO object at 0x…>: Format not recognised.`, which vLLM releases before vllm-project/vllm
PR #34715 (February 2026) answered as an HTTP 500, so the client saw a server error for its own file; from that PR
the same failure is a 400 saying `Invalid or unsupported audio file`, which VC-1's remedies read. The words are
libsndfile's, not vLLM's, so vLLM's message catalog does not hold them.

libsndfile reads WAV, FLAC, OGG/Vorbis and Opus, and MP3 only from 1.1.0; it never reads M4A/AAC or video
containers. A file of one of those, a truncated upload, or bytes that are not audio give this error.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_audio(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.AUDIO_UNDECODABLE)
    if not events:
        return []
    event = events[0]
    return [
        RULE_AUDIO.finding(
            Severity.MEDIUM,
            "an uploaded audio file the server could not decode: libsndfile says " + (event.message or "unknown"),
            summary="vLLM's transcription endpoint decodes the upload with librosa through soundfile (libsndfile), "
            "and libsndfile did not recognise the bytes as audio it reads: a container it has no decoder for "
            "(M4A/AAC, WebM, video; MP3 before libsndfile 1.1.0), a truncated upload, or not audio at all. vLLM "
            "releases before PR #34715 answer this with HTTP 500, so it looks like a server fault; it is the "
            "request's file (later releases answer 400, 'Invalid or unsupported audio file').",
            evidence=[c.log_evidence(event, name="libsndfile's refusal", value=event.message)],
            actions=[
                "Check the file the client sent: `ffprobe file` names its container and codec. Convert it to one "
                "libsndfile reads before uploading, `ffmpeg -i in.m4a -ar 16000 -ac 1 out.wav` (WAV, FLAC or OGG), "
                "and make sure the client sends the file's bytes in the multipart `file` field, not its name or "
                "a URL.",
                "If every file is refused, valid WAV included, test the server's decoder: `python -c \"import "
                "soundfile; print(soundfile.__libsndfile_version__)\"` in the server's image.",
            ],
            confidence=0.8,
        )
    ]


RULE_AUDIO = Rule(
    code="OP-5.45",
    title="an uploaded audio file the server could not decode",
    category=Category.CONFIGURATION,
    check=_check_audio,
    needs=("events",),
    page=RulePage(
        checks="libsndfile's refusal of an upload as vLLM answered it: `Error opening <_io.BytesIO object at 0x…>: "
        "Format not recognised.` (or `… File contains data in an unknown format.`), in the log or a 500's body.",
        why="Before vLLM PR #34715 a file the server cannot decode is answered with HTTP 500, which reads as a "
        "server fault; the fix is the file the client sends.",
        example='`{"error":{"code":500,"message":"Error opening <_io.BytesIO object at 0x79cb049209f0>: Format not '
        'recognised.","type":"Internal Server Error"}}` for a corrupted or non-audio upload (vllm PR #34715).',
        fix="Convert the audio to WAV, FLAC or OGG with ffmpeg and send its bytes as the `file` field.",
        limits="Which container the file was is not in the text; libsndfile's version (MP3 from 1.1.0) is not either.",
        references=["https://github.com/vllm-project/vllm/pull/34715"],
    ),
)

RULES: list[Rule] = [RULE_AUDIO]
