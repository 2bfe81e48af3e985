"""What carried each line to the person who pasted it, taken off before anything else reads the line.

Why a layer of its own, and first: a vLLM log on call rarely comes straight from the process. It comes out of
`kubectl logs --timestamps` or `--prefix`, a node's containerd or CRI-O files (`<time> stderr F <line>`), the
journal (`Nov 30 21:47:14 node vllm[4172]: <line>`), `docker compose logs` (`vllm-1  | <line>`), stern
(`<pod> <container> <line>`), or a shipper's JSON records (Docker's json-file and Fluent Bit `{"log": …}`,
Elasticsearch, Datadog and Vector `{"message": …}`, Loki's logcli `{"line": …}`, Splunk `{"_raw": …}`), often
with the terminal's colours. Every physical line carries that envelope, so a message wrapped over lines, a JSON
error body printed over lines or a traceback would look like separate records to the reader (advisor/collect/
logs.py), which judges wrapping and record starts on vLLM's own text. Taking the envelope off here, line by line
and before the reader joins anything, makes the same incident read the same however it was carried.

The same holds for what a person's tools wrap a paste in: an issue's Markdown code fence (```` ```log ````) and
`<details>` block, the indentation every line of a Markdown code block shares, a chat's quote bars, a Windows
editor's byte-order mark, the no-break and zero-width spaces a browser or chat app puts in copied text, and a
terminal's hard wrap at its width (joined back when the paste shows the width).

vLLM's own prefixes (`(EngineCore_DP0 pid=…)`, the `INFO 11-30 21:47:14 [file.py:12]` header) are vLLM's words,
not a carrier's: the reader keeps them.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain, islice, pairwise
from typing import Any, NamedTuple

from advisor.collect.pasted_text import SHARED_PREFIX_CHARS, error_body_message

# The keys shippers put the logged line under: Docker's json-file and Fluent Bit (`log`), Elasticsearch/Vector/
# Datadog/CloudWatch (`message`, `msg`), journald's JSON export (`MESSAGE`), GCP (`textPayload`), Loki's logcli
# `--output=jsonl` (`line`), Splunk (`_raw`).
SHIPPER_KEYS = ("log", "message", "msg", "MESSAGE", "textPayload", "line", "_raw")

# A terminal colour code: the escape itself, as a viewer shows it in caret notation (`^[[0;36m`, a copy from less or
# an editor), or replaced by U+FFFD (`\ufffd[0;36m`, a web log viewer that could not show it: vllm PR #51654's CI log).
# The shown forms need a number (`^[[0m`), so text such as a regex's `^[[a-z]` stays.
_ANSI = re.compile(r"(?:\x1b\[[0-9;?]*|(?:\^\[|\ufffd)\[[0-9;?]+)[A-Za-z]")
_ANSI_STARTS = ("\x1b", "^[[", "\ufffd[")
# What chat tools and Markdown put in front of a quoted line: `> `, Slack's and GitHub's quote bars.
_QUOTE_CHARS = frozenset(">▎│┃")
_QUOTE_MARK = re.compile(r"^\s*(?:[>▎│┃]\s?)+")
_RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
# containerd / CRI-O log files (what a node keeps under /var/log/pods): time, stream, F(ull) or P(artial).
_CRI = re.compile(rf"^{_RFC3339} (?:stdout|stderr) (?P<tag>[FP]) ?")
# A wrapper's own logger in front of vLLM's line (Xinference, Python's `%(asctime)s`): date, a space, time.
_SPACED_TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?"
# `kubectl logs --timestamps`, `docker logs -t`, and a shipper's or a wrapper's own stamp in front of the line.
_STAMP = re.compile(rf"^(?:{_RFC3339}|{_SPACED_TIME})\s+")
# `kubectl logs --prefix`: `[pod/<name>/<container>] `.
_KUBECTL_PREFIX = re.compile(r"^\[pod/[^/\]\s]+/[^\]\s]+\] ?")
# The journal and syslog (`journalctl -u vllm`, any locale's month: `Nov 30`, `6月 10`; or `-o short-iso`): time,
# host, identifier (with its pid after an ISO time, which alone would also begin `<stamp> Error code: 400`), colon.
_JOURNAL = re.compile(
    rf"^(?:\S{{1,5}} {{1,2}}\d{{1,2}} \d\d:\d\d:\d\d [\w.-]+ [^\s:\[\]]+(?:\[\d+\])?"
    rf"|{_RFC3339} [\w.-]+ [^\s:\[\]]+\[\d+\]): ?"
)
# RunPod's console for a serverless worker: the worker's id and the level in brackets, glued to the line
# (`duuu9mr59pks4j[info]AttributeError: …`, runpod-workers/worker-vllm#260).
_RUNPOD = re.compile(r"^[a-z0-9]{10,20}\[(?:info|error|warn|warning|debug)\] ?")
# Tried in order (the journal's ISO time before a bare stamp), each with the name the reader reports.
_ENVELOPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the journal", _JOURNAL),
    ("timestamps (kubectl --timestamps, docker -t, a wrapper's logger)", _STAMP),
    ("kubectl --prefix", _KUBECTL_PREFIX),
    ("a RunPod worker's console", _RUNPOD),
)
# Two shapes a whole file is written in, told from most of its lines (one line alone proves neither):
# `docker compose logs` (`vllm-server-1  | `) and stern (`<pod> <container> `, Kubernetes names).
_COMPOSE = re.compile(r"^(?P<prefix>[A-Za-z0-9][\w.-]*\s+\| ?)")
_STERN = re.compile(r"^(?P<prefix>[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?-[a-z0-9]+ [a-z0-9](?:[a-z0-9-]*[a-z0-9])? )")
# A Markdown fence (```` ``` ````, ```` ```log ````, `~~~`) or a `<details>`/`<summary>` line around an issue's paste:
# no text of the log, and never the wrapped rest of the line before it.
_MARKUP = re.compile(r"^\s*(?:(?:`{3,}|~{3,})[\w+.-]*|(?:</?details>|<summary>.*?</summary>)+)\s*$")
# A `<details>` block's title that holds the error itself (vllm#13230: `<summary>RuntimeError: No CUDA GPUs are
# available</summary>`, the rest of the paste a screenshot): its words are the line; a title without an error is markup.
_SUMMARY_ERROR = re.compile(
    r"^\s*(?:</?details>\s*)*<summary>\s*(?P<text>[^<]*?(?:Error|Exception)\b[^<]*?)\s*</summary>"
)
# What copying from a browser or a chat app puts for a space (no-break, narrow, figure, thin, en/em spaces), and
# the invisible characters it adds (zero-width spaces and joiners, the byte-order mark); vLLM writes none.
_UNICODE_SPACES = str.maketrans(
    {**dict.fromkeys("\u00a0\u2002\u2003\u2007\u2009\u202f", " "), **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff")}
)
# How a line of its own starts (a level, vLLM's process prefix, a date, a traceback's first line, an indentation of
# two spaces or more: a traceback's frames, source lines and carets; an item of Alertmanager's `name = value` lists,
# its notifications' labels and annotations one per line): what the rest of a hard-wrapped line, cut mid-word, rarely
# starts with.
_RECORD = re.compile(
    r"\s{2,}\S|\s*(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\b|\(\w+ pid=|\d{4}-\d\d-\d\d|Traceback|- \w+ = )"
)
_MIN_WRAP_WIDTH = 60  # narrower than any terminal a log is read in
_MAX_WRAPPED_PIECES = 64  # a line wrapped into more pieces is not one line
_SHAPE_SAMPLE = 200  # lines read ahead to tell the file's shape
_MIN_STERN_LINES = 2
_MAX_DEPTH = 4  # envelopes nest (a CRI line carrying a shipper's JSON carrying a stamped line); a bound, not a rule
# Where a record began in a paste that lost its line breaks (the lines joined by spaces): vLLM's header, with the
# process prefix in front of it when there is one (`(EngineCore_DP0 pid=7) ERROR 08-27 10:50:39 [core.py:502]`, V0's
# `INFO 08-27 10:50:39 llm_engine.py:65]`), and a traceback's own lines.
_VLLM_HEADER = (
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"(?:\[[^\]]*\]|[\w.-]+\.py:\d+\])"
)
# uvicorn's own lines (`INFO:     127.0.0.1:55504 - "POST /v1/completions HTTP/1.1" 200 OK`) pad the level to nine
# columns: two spaces or more after the colon tell them from a message's "ERROR: ", and so does an access line's
# client address where a page collapsed the padding.
_UVICORN = r"(?:INFO|WARNING|ERROR|DEBUG):(?:\s{2,}(?=\S)|\s+(?=[\d.:\[\]a-fA-F]+:\d+ - \"))"
# An offline job's progress bar (`Processed prompts:  33%|███▍ | 769/2343 [00:07<00:12, 124.65it/s]`): tqdm redraws
# it with a carriage return, so a log holds many, and a page that joined them holds them end to end.
_PROGRESS_BAR = r"Processed prompts:\s*\d+%\|"
# A record's start: vLLM's process prefixes with whatever line follows them (its header, uvicorn's), a header, or
# an offline progress bar.
_RECORD_START = re.compile(
    rf"(?:\([^()]*?\s(?:rank=\d+\s+)?pid=\d+[^()]*\)\s*)+(?:{_VLLM_HEADER}|{_UVICORN})?|{_VLLM_HEADER}|{_UVICORN}"
    rf"|{_PROGRESS_BAR}"
)
# A bare traceback's records: its header, each frame, the sentences that chain two tracebacks.
_TRACEBACK_RECORD = re.compile(
    r'Traceback \(most recent call last\):|File "[^"]+", line \d+, in [\w<>.]+|The above exception was the '
    r"direct cause|During handling of the above exception"
)
_TRACEBACK_AFTER = re.compile(r" (?=Traceback \(most recent call last\):\s*\S)")  # with its frames after it
_FRAME_HEAD = re.compile(r'^File "[^"]+", line \d+, in [\w<>.]+')
# The exception that ends a traceback, after its last frame's source line: a class name ending as exceptions' do,
# then its message (a source line names a class followed by `(`, never by `: `).
_EXCEPTION = re.compile(r"(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?:: |$)")
_EXCEPTION_AFTER = re.compile(rf" (?={_EXCEPTION.pattern})")
# A progress bar with an exception written after it: tqdm's last redraw ends without a line break when the job dies,
# so the exception's line starts on the bar's (`… 429/8535 [00:27<08:37, 15.68it/s]RuntimeError: …`).
_BAR_THEN_EXCEPTION = re.compile(rf"{_PROGRESS_BAR}[^\]]*\]\s*(?={_EXCEPTION.pattern})")
_CARETS = re.compile(r"\s+(?P<marks>[~^]+(?: [~^]+)*)$")  # Python 3.11's marks under the expression that failed
_MIN_JOINED_RECORDS = 2


def carried_lines(lines: Iterable[str], carriers: Counter[str] | None = None) -> Iterator[tuple[int, str]]:
    """(line number, the text its carriers held) for each line; a shipper record holding several lines gives
    several texts under one number, and a line a terminal hard-wrapped or a runtime split (CRI `P`) is joined at
    its first line's number. Records whose line breaks were lost are numbered as the lines they were (each
    physical line after them shifted by as many): the rules order events and measure their distance by line.
    `carriers`, when given, counts the lines each carrier was taken off (so the reader can say what it took off)."""
    seen: Counter[str] = Counter() if carriers is None else carriers
    iterator = iter(lines)
    head = [_bare(line, seen) for line in islice(iterator, _SHAPE_SAMPLE)]
    shape = _paste_shape(head)
    numbered = enumerate(chain(head, (_bare(line, seen) for line in iterator)), start=1)
    partial: tuple[int, str] | None = None  # a runtime's partial line (its own envelope off), waiting for its rest
    unjoined = 0  # lines the records of joined lines added before this one
    for physical_no, bare in _rejoined(numbered, shape.wrap_width, seen):
        line_no = physical_no + unjoined
        if partial is not None:  # its rest: what the runtime split was one line, whose envelopes are the whole's
            piece = _cri_piece(bare, shape)
            rest, more = piece if piece is not None else (bare, False)
            seen["containerd/CRI-O"] += piece is not None
            partial = (partial[0], partial[1] + rest)
            if not more:
                yield from _whole(partial, shape, seen)
                partial = None
            continue
        for text, is_partial, record in _texts(bare, shape, seen):
            if is_partial:
                partial = (line_no, text)
            else:
                yield line_no + record, text
            unjoined += record > 0
    if partial is not None:
        yield from _whole(partial, shape, seen)


def _cri_piece(bare: str, shape: _PasteShape) -> tuple[str, bool] | None:
    """(text, whether partial again) of a containerd/CRI-O line continuing a partial one; None for another line."""
    line = bare[len(shape.indent) :] if shape.indent and bare.startswith(shape.indent) else bare
    cri = _CRI.match(line)
    return (line[cri.end() :], cri["tag"] == "P") if cri is not None else None


def _whole(partial: tuple[int, str], shape: _PasteShape, seen: Counter[str]) -> Iterator[tuple[int, str]]:
    """A split line joined again, its inner envelopes taken off now that they are whole (a split may fall inside
    a stamp), at its first piece's number."""
    start, whole = partial
    for text, _ in _opened(whole, shape.prefix, _MAX_DEPTH, seen):
        yield start, text


def _texts(bare: str, shape: _PasteShape, seen: Counter[str]) -> Iterator[tuple[str, bool, int]]:
    """One bare line's texts, whether each is a runtime's partial line, and which record of a joined line it is
    (0 for the first, or for a line that held one): none of a Markdown fence (an empty line: it ends what the line
    before began), the rest without the shared indentation and the carriers' envelopes."""
    if (summary := _SUMMARY_ERROR.match(bare)) is not None:
        seen["Markdown fences"] += 1
        bare = summary["text"]
    elif _MARKUP.match(bare):
        seen["Markdown fences"] += 1
        yield "", False, 0
        return
    if shape.indent and bare.startswith(shape.indent):
        seen["a shared indentation"] += 1
        bare = bare[len(shape.indent) :]
    for text, is_partial in _opened(bare, shape.prefix, _MAX_DEPTH, seen):
        if is_partial:
            yield text, True, 0
        else:
            yield from ((piece, False, record) for record, piece in enumerate(_unjoined(text, seen)))


def _unjoined(text: str, seen: Counter[str]) -> list[str]:
    """The records of a text whose line breaks were lost, each on its own line again: a log quoted from a rendered
    page (GitHub's "Quote reply" of an unfenced log joins its lines with spaces, aibrix#1154) or copied out of a
    viewer that joins them. Only a text holding two records or more is cut, each with words of its own: one header
    in a message proves nothing (a message may quote a log line), and a prefix with nothing after it but another
    record's start is that record's prefix (a wrapper's `ERROR:    ` in front of vLLM's line)."""
    pieces = [line for record in _cut(_RECORD_START, text) for line in _unjoined_traceback(record)]
    if len(pieces) > 1:
        seen["lost line breaks (its records split again, numbered as lines)"] += 1
    return pieces


def _cut(record: re.Pattern[str], text: str) -> list[str]:
    """`text` cut before each start of a `record` that follows a space and ends a piece with words of its own (after
    the last start before it: names chained one after another are one record's), when the text holds two records or
    more."""
    starts = list(record.finditer(text))
    if len(starts) < _MIN_JOINED_RECORDS:
        return [text]
    cuts: list[int] = []
    own_end = starts[0].end() if starts[0].start() == 0 else 0  # where the words of the piece before a cut begin
    for match in starts:
        i = match.start()
        if i == 0 or text[i - 1] != " ":
            continue
        if not text[own_end:i].strip():  # a start right after another's (`A: B: C: …`, LiteLLM's chain of names)
            own_end = match.end()
            continue
        cuts.append(i)
        own_end = match.end()
    if not cuts:
        return [text]
    return [piece for a, b in pairwise([0, *cuts, len(text)]) if (piece := text[a:b].strip())]


def _unjoined_traceback(record: str) -> list[str]:
    """A bare traceback's lines from one joined record, with the indentation Python gives them (a frame two
    spaces, its source line four: the reader tells a source line by it), and the exception after the last frame's
    source line on a line of its own; cut only when it holds two of a traceback's records or more (a header, a
    frame, a chaining sentence, the exception after a frame), so a frame alone behind a wrapper's words stays
    whole. A record under vLLM's header or a process prefix is one line, up to a bare traceback with its frames
    after its message (vLLM's processes print their own without a header); exception lines alone, one after
    another, each get their own."""
    bar = _BAR_THEN_EXCEPTION.match(record)
    if bar is not None:
        return [record[: bar.end()].strip(), *_unjoined_traceback(record[bar.end() :])]
    head = _RECORD_START.match(record)
    if head is not None:
        bare = _TRACEBACK_AFTER.search(record, head.end())
        return [record] if bare is None else [record[: bare.start()], *_unjoined_traceback(record[bare.end() :])]
    frames = len(_TRACEBACK_RECORD.findall(record))
    if frames == 0:
        return _cut(_EXCEPTION, record) if _EXCEPTION.match(record) else [record]
    lines = [line for piece in _cut_before_each(_TRACEBACK_RECORD, record) for line in _frame_lines(piece)]
    exceptions = sum(1 for line in lines if _EXCEPTION.match(line))
    return lines if frames + exceptions >= _MIN_JOINED_RECORDS else [record]


def _cut_before_each(record: re.Pattern[str], text: str) -> list[str]:
    """`text` cut before each start of a `record` that follows a space."""
    cuts = [m.start() for m in record.finditer(text) if m.start() > 0 and text[m.start() - 1] == " "]
    return [piece for a, b in pairwise([0, *cuts, len(text)]) if (piece := text[a:b].strip())]


def _frame_lines(piece: str) -> list[str]:
    """A frame's header, its source line, the carets under it, and an exception after them, as Python prints them."""
    frame = _FRAME_HEAD.match(piece)
    if frame is None:
        return [piece]
    source, *exception = _EXCEPTION_AFTER.split(piece[frame.end() :].strip(), maxsplit=1)
    carets = _CARETS.search(source)
    marks = [f"    {carets['marks']}"] if carets else []
    source = source[: carets.start()] if carets else source
    return [f"  {frame.group(0)}", *([f"    {source}"] if source else []), *marks, *(e.strip() for e in exception)]


def _rejoined(numbered: Iterator[tuple[int, str]], width: int | None, seen: Counter[str]) -> Iterator[tuple[int, str]]:
    """The lines, each a terminal hard-wrapped at `width` columns joined back at its first piece's number: a
    piece exactly `width` long continues on the next line, cut mid-word, unless that line is a record of its own."""
    held: tuple[int, str] | None = None
    last = ""  # the held line's last piece
    pieces = 0
    for line_no, text in numbered:
        if held is not None and len(last) == width and pieces < _MAX_WRAPPED_PIECES and _wrapped_rest(last, text):
            seen[f"a terminal's wrapping at {width} columns"] += 1
            held, last, pieces = (held[0], held[1] + text), text, pieces + 1
            continue
        if held is not None:
            yield held
        held, last, pieces = (line_no, text), text, 1
    if held is not None:
        yield held


_TABLE_ROW = re.compile(r"^\s*[|+│┃╋┼├┌└╔╚║].*[|+│┃╋┼┤┐┘╗╝║]\s*$")


def _wrapped_rest(piece: str, line: str) -> bool:
    """Whether `line` can be the rest of a wrapped `piece`: it starts no record (a level, a process prefix, a date,
    a traceback's line), with its carriers off, and does not begin as the piece does (a carrier's prefix, a pod's
    name: two records of one writer). A piece that opens and closes with a table's edge (`|…|`, `+---+`, as
    nvidia-smi draws its table) is a whole row: a table's rows are all the terminal's width without being cut."""
    if len(os.path.commonprefix([piece, line])) >= SHARED_PREFIX_CHARS or _TABLE_ROW.match(piece):
        return False
    first, _ = next(_opened(line, None, _MAX_DEPTH, Counter()))
    return not _RECORD.match(first)


def opened(line: str) -> list[str]:
    """The text(s) one line carries, read alone (no file shape, partial lines kept as they are)."""
    return [text for text, _ in _opened(_bare(line, None), None, _MAX_DEPTH, Counter())]


def _bare(line: str, seen: Counter[str] | None) -> str:
    """The line without its ending, the terminal's colours, a copy's odd spaces, and the quote bars a chat or
    Markdown put in front (the outermost envelope: a person quoted what the carrier printed)."""
    line = line.rstrip("\r\n").removesuffix("^M")  # `^M`: a carriage return as `cat -v` and vim show it
    if not line.isascii():
        line = line.translate(_UNICODE_SPACES)
    if any(start in line for start in _ANSI_STARTS):
        line = _ANSI.sub("", line)
        if seen is not None:
            seen["terminal colours"] += 1
    return unquoted(line)


def unquoted(line: str) -> str:
    """The line without the quote bars in front of it (a cheap test first: most lines have none)."""
    return _QUOTE_MARK.sub("", line) if line.lstrip()[:1] in _QUOTE_CHARS else line


def _opened(line: str, shape: _Shape | None, depth: int, seen: Counter[str]) -> Iterator[tuple[str, bool]]:
    """(text, whether the runtime marked it partial) for each text `line` carries (at least one), its envelopes
    taken off, and quote bars both outside them (`_bare`) and inside (what a carrier carried was quoted)."""
    for _ in range(depth):
        record = _shipper_record(line)
        if record is not None:
            seen["a log shipper's JSON"] += 1
            for inner in record.splitlines() or [""]:
                yield from _opened(_bare(inner, seen), None, depth - 1, seen)
            return
        cri = _CRI.match(line)
        if cri is not None:
            seen["containerd/CRI-O"] += 1
            if cri["tag"] == "P":  # a piece of a line: its envelopes are taken off the whole, once joined
                yield line[cri.end() :], True
                return
            line = line[cri.end() :]
            continue
        found = next(((name, m) for name, pattern in _ENVELOPES if (m := pattern.match(line))), None)
        if found is None and shape is not None and (m := shape.pattern.match(line)):
            found = shape.name, m
        if found is None:
            break
        seen[found[0]] += 1
        line = line[found[1].end() :]
    yield unquoted(line), False


def _shipper_record(line: str) -> str | None:
    """The logged text of a shipper's JSON record (the whole line one object, with a string under a shipper key);
    None for anything else, an OpenAI error body above all (`{"object": "error", "message": …}` is what vLLM
    answered, read as such by the reader)."""
    stripped = line.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        record: Any = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(record, dict) or error_body_message(record) is not None:
        return None
    return next((record[key] for key in SHIPPER_KEYS if isinstance(record.get(key), str)), None)


class _PasteShape(NamedTuple):
    """What a whole paste shares, told from its first lines (one line alone proves none of it)."""

    wrap_width: int | None  # the columns a terminal hard-wrapped it at
    indent: str  # the leading whitespace every line has
    prefix: _Shape | None  # compose's or stern's prefix


def _paste_shape(head: list[str]) -> _PasteShape:
    text_lines = [line for line in head if line.strip() and not _MARKUP.match(line)]
    indent = _shared_indent(text_lines)
    return _PasteShape(_wrap_width(text_lines), indent, _file_shape([line[len(indent) :] for line in text_lines]))


def _wrap_width(lines: list[str]) -> int | None:
    """The width a terminal hard-wrapped the text at, when it did: the longest lines all share one length of a
    terminal's width, two distinct lines or more have it, and the line after most of them starts no record of
    its own (a log's longest lines, repeated, are followed by the next record's level or stamp)."""
    longest = max((len(line) for line in lines), default=0)
    at_width = [i for i, line in enumerate(lines) if len(line) == longest]
    if longest < _MIN_WRAP_WIDTH or len({lines[i] for i in at_width}) < 2:
        return None
    continued = [i for i in at_width if i + 1 < len(lines) and _wrapped_rest(lines[i], lines[i + 1])]
    return longest if 2 * len(continued) > len(at_width) else None


def _shared_indent(lines: list[str]) -> str:
    """The leading whitespace every line shares (a Markdown code block's four spaces, an e-mail's tab): a
    traceback keeps its own indentation relative to it."""
    indents = [line[: len(line) - len(line.lstrip())] for line in lines]
    return os.path.commonprefix(indents) if indents else ""


class _Shape(NamedTuple):
    name: str
    pattern: re.Pattern[str]


def _file_shape(lines: list[str]) -> _Shape | None:
    """The prefixes a whole file's lines (its non-empty ones) begin with when it is compose's or stern's output:
    such prefixes begin at least half of them. Compose's `name  | ` is its own proof; stern's `pod container ` is
    two plain words, so only a pair that begins two lines or more counts (several pods interleave)."""
    compose = [line for line in lines if _COMPOSE.match(line)]
    if compose and 2 * len(compose) >= len(lines):
        return _Shape("docker compose", _COMPOSE)
    pairs = Counter(match["prefix"] for line in lines if (match := _STERN.match(line)))
    recurring = [prefix for prefix, count in pairs.items() if count >= _MIN_STERN_LINES]
    if recurring and 2 * sum(pairs[prefix] for prefix in recurring) >= len(lines):
        return _Shape("stern", re.compile("|".join(re.escape(prefix) for prefix in recurring)))
    return None
