"""Read a vLLM (or bundled-engine) log, or whatever text a user pasted, into typed `LogEvent`s.

Rules read events, never raw text. This reader strips what varies between releases and
processes (the `(EngineCore_DP0 pid=…)` prefixes, nested or not; the `LEVEL MM-DD HH:MM:SS
[file.py:NNN]` header of V1 and V0's `file.py:NNN]`), unwraps what log shippers and HTTP clients
add (advisor/collect/pasted_text.py), and hands the bare message to the wording table of the
`log_patterns` package. A line that table does not know, if it is an error or a warning, is
looked up in vLLM's own message catalog (advisor/catalog/vllm_messages.py); an exception that is
in neither becomes an unplaced error, named with the component its traceback ran in.

Any text is read: a full log, an excerpt, a bare traceback, one error line, an HTTP error body.
`LogReadResult` says how much of it was recognised. Only an empty input or one that is not text
(NUL bytes) is an error, because then the user passed the wrong file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from advisor.catalog.vllm_messages import CatalogMatch, check_statement, message_catalog
from advisor.collect import refused_names
from advisor.collect.answer_body import AnswerBody
from advisor.collect.env_switches import EnvSwitches
from advisor.collect.log_patterns import candidates
from advisor.collect.log_transport import carried_lines
from advisor.collect.offline_outputs import OfflineOutputs
from advisor.collect.pasted_text import (
    Frame,
    Unwrapped,
    call_site,
    component_of,
    continues,
    deepest_vllm_frame,
    exception_in,
    frame_in,
    joiner,
    notebook_context,
    notebook_frame,
    notebook_header,
    phase_of,
    plugin_in_path,
    plugin_of,
    release_named,
    unwrap,
)
from advisor.collect.quoted_metrics import QuotedMetrics
from advisor.collect.server_args import args_from_repr
from advisor.collect.streamed_chunks import StreamedChunks
from advisor.collect.text_files import COMPRESSED_READ_ERRORS, open_text, stdin_text
from advisor.collect.windows_host import windows_only_module, windows_vllm_path
from advisor.errors import UserError
from rules.components import CONFIGURATION, component_of_path
from rules.events import (
    FAILURE_WORDS,
    HTTP_ERROR_EXCEPTION,
    NATIVE_LOG,
    NCCL_LOG,
    OTHER_LOGGER,
    STARTUP_FAILURE_KINDS,
    VLLM_LOGGER,
    CatalogRef,
    LogEvent,
    LogEventKind,
    OomPhase,
)
from rules.literals import python_literal

# Lines a long log repeats without end, of which only the newest are kept (and the older counted): a day of 10 s
# stats lines is 8640; a server logging each step prints tens of lines a second (a minute or more of a busy GPU's).
MAX_STATS_EVENTS = 5000
MAX_ITERATION_EVENTS = 3000
# The kinds a long log repeats without end, and how many of the newest of each are kept.
NEWEST_KEPT: dict[LogEventKind, int] = {
    LogEventKind.STATS_LINE: MAX_STATS_EVENTS,
    LogEventKind.ITERATION_LINE: MAX_ITERATION_EVENTS,
}
MAX_LINE_CHARS = 20_000  # non-default args can be long; binary junk should not be
MAX_WRAPPED_LINES = 4  # an error message wrapped by a terminal or an issue rarely takes more
# A JSON object printed over several lines (jq, Postman, a client's pretty error body): `{` alone on a line, then its
# members, then `}`; joined into one line so it is read as the body it is. A longer one is left line by line.
MAX_JSON_LINES = 40

_PREFIX = re.compile(r"^\s*\((?P<proc>[^()]*?)\s+(?:rank=\d+\s+)?pid=\d+[^()]*\)\s*")
# torchrun's prefix on every line a rank prints (`[rank1]: Traceback …`), wherever a viewer put it in the line; its
# own warnings keep theirs (`[rank1]:[W …]`).
_TORCHRUN_RANK = re.compile(r"(?:^|\s)\[rank\d+\]: ?(?!\[)")
# Ray's log deduplication: a line its workers printed alike on several processes, shown once with the count appended
# (`… [repeated 2x across cluster]`, Ray's "Log deduplication", RAY_DEDUP_LOGS); the words before it are the line's
_RAY_REPEATED = re.compile(r"\s*\[repeated \d+x across cluster\]\s*$")
# vLLM's own header (`ERROR 08-27 10:50:39 [core.py:502]`, V0's `INFO 08-27 10:50:39 llm_engine.py:65]`); a logging
# config that dates it in full keeps the year (vllm-ascend: `ERROR 2026-04-25 10:01:17.340 [mooncake_connector.py:246]`)
_HEADER = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?:\d{4}-)?(?P<ts>\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)?"
    r"(?: \[(?P<where>[^\]]*)\]| (?P<where_v0>[\w.-]+\.py:\d+)\])? ?(?P<msg>.*)$"
)
# A native library's line in glog's format (UCX and NIXL's `W0904 10:52:53.047694 512 ucx_utils.cpp:62] …`,
# Mooncake's transfer engine, gRPC) or PyTorch's c10 logger's (`[W socket.cpp:663] …`): its level letter and the
# C/C++ file it names. Read for the level only after no wording matched the whole line, which some quote.
_NATIVE_HEADER = re.compile(
    r"^\[?(?P<level>[IWEF])(?:\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+)?\s*(?P<where>[\w./-]+\.(?:cc|cpp|cu|cxx|c|h|hpp):\d+)\]"
    r" ?(?P<msg>.*)$"
)
# Ray's C++ core (its GCS, raylets and core workers; src/ray/util/logging.cc): `[2025-06-13 01:49:41,730 E 1 1]
# gcs_rpc_client.h:179: …`, the stamp, a glog letter, the process and thread ids, then the file and line
_RAY_CORE_HEADER = re.compile(
    r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (?P<level>[IWEF]) \d+ \d+\] "
    r"(?P<where>[\w./-]+\.(?:cc|cpp|cu|cxx|c|h|hpp):\d+):? ?(?P<msg>.*)$"
)
# NCCL's own debug lines (NCCL_DEBUG=WARN or INFO; src/debug.cc): an optional `[%F %T] ` stamp, `host:pid:tid
# [device] `, for a WARN the file, line and function that warned, then `NCCL WARN ` (which NCCL's documentation of
# NCCL_DEBUG calls "messages indicating a fatal error") or `NCCL INFO `.
_NCCL_HEADER = re.compile(
    r"^(?:\[[\d-]+ [\d:.]+\] )?\S+:\d+:\d+ \[\d+\] (?:(?P<where>[\w./-]+:\d+)(?: \([\w:~<>]+\))? )?"
    r"NCCL (?P<level>WARN|INFO|ABORT|TRACE|CALL) (?P<msg>.*)$"
)
_NCCL_LEVELS = {"WARN": "ERROR", "ABORT": "CRITICAL", "INFO": "INFO", "TRACE": "DEBUG", "CALL": "DEBUG"}
# Another program's logger naming its level in brackets (a wrapper around vLLM: Lemonade's `[Error] (WrappedServer)
# vllm-server failed to start within timeout`, after its timestamp is taken off).
_BRACKETED_LEVEL = re.compile(r"^\[(?P<level>(?i:error|err|warn|warning|info|debug|critical|fatal))\] ?(?P<msg>.*)$")
# Another program's logger that writes its level as a word before the logger's name (Rust's tracing, as NVIDIA
# Dynamo's workers print it: `ERROR engine.run_mp_engine: …`, once its timestamp is taken off), or after the name and
# a process id (Python's logging in Xinference's format: `xinference.api.restful_api 155837 ERROR    […] …`), or
# joined to it by colons (Python's logging's default format).
_LEVEL_WORDS = (
    re.compile(r"^(?P<level>ERROR|WARN|WARNING|CRITICAL|FATAL) +(?P<where>[A-Za-z_][\w.:-]*): (?P<msg>\S.*)$"),
    re.compile(r"^[A-Za-z_][\w.]*\.[\w.]+ \d+ (?P<level>ERROR|WARNING|CRITICAL) +(?P<msg>\S.*)$"),
    # Python's logging in its default format, `LEVEL:logger:message` (vllm-mlx's `ERROR:vllm_mlx.engine_core:Engine
    # loop error: …`, waybarrios/vllm-mlx#87)
    # (a logger's name has two characters or more, and a URL's `https://` or a drive's `C:\\` is not one)
    re.compile(r"^(?P<level>ERROR|WARNING|CRITICAL):(?P<where>[A-Za-z_][\w.]+):(?![/\\])(?P<msg>\S.*)$"),
)
# A glog letter's or a bracketed word's level, by its first letter.
_OTHER_LEVELS = {"I": "INFO", "D": "DEBUG", "W": "WARNING", "E": "ERROR", "F": "CRITICAL", "C": "CRITICAL"}


def _other_logger(message: str) -> tuple[re.Match[str], str] | None:
    """The header of a logger other than vLLM's that names a level, and whose it is: a native library's, or a
    wrapper's."""
    native = _NATIVE_HEADER.match(message) or (_RAY_CORE_HEADER.match(message) if message.startswith("[2") else None)
    if native:
        return native, NATIVE_LOG
    nccl = _NCCL_HEADER.match(message) if " NCCL " in message else None
    if nccl:
        return nccl, NCCL_LOG
    worded = _BRACKETED_LEVEL.match(message) or next(
        (found for pattern in _LEVEL_WORDS if (found := pattern.match(message))), None
    )
    return (worded, OTHER_LOGGER) if worded else None


# Lines that are not errors whatever they hold: informational levels (vLLM's header or uvicorn's
# `INFO:     127.0.0.1:5000 - "POST …" 200 OK`).
_QUIET_LEVELS = ("DEBUG", "INFO")
_QUIET_PREFIXES = ("INFO:", "DEBUG:")  # a traceback's first line is `_starts_traceback`'s, read before these
_TRACEBACK_START = "Traceback (most recent call last)"
# Lines under a frame that are not its source: Python 3.11's `^^^^` markers, and any line without a word (a log
# viewer's table rule `-- | --` pasted between the frame and its source).
_NOT_SOURCE = re.compile(r"^[^A-Za-z_]*$")
# Python's own words for a failed import or a missing attribute. vLLM re-raises a few of them word for word (its
# lazy-import helpers), so its catalog holds `No module named {module_name}`; a pasted one is Python's, about the
# environment, not a check of vLLM's (OP-7.8 reads them). V0's engine logs any exception's words alone
# (`logger.exception(e)` in engine/multiprocessing/engine.py): a KeyError's are its key quoted, an unpacking's
# ValueError its counts, so the class is known from the words (OP-7.21 reads a checkpoint tensor's KeyError).
_PYTHON_OWN = re.compile(
    r"^(?:No module named '?[\w.]+'?(?:; '?[\w.]+'? is not a package)?|module '?[\w.]+'? has no attribute '?\w+'?"
    r"|'?[\w.]+'? object has no attribute '?\w+'?|cannot import name '?\w+'? from '?[\w.]+'?.*"
    r"|'[\w.-]+'|(?:not enough|too many) values to unpack \(expected \d+(?:, got \d+)?\)"
    # an UnboundLocalError, in Python 3.11's words and in 3.10's and before
    r"|cannot access local variable '\w+' where it is not associated with a value"
    r"|local variable '\w+' referenced before assignment)\s*$"
)
# The exception class each of Python's own wordings is raised with, for an ERROR line that prints the words alone.
_PYTHON_OWN_CLASS = (
    ("No module named", "ModuleNotFoundError"),
    ("cannot import name", "ImportError"),
    ("has no attribute", "AttributeError"),
    ("values to unpack", "ValueError"),
    ("local variable", "UnboundLocalError"),
    ("'", "KeyError"),  # a KeyError's words are its key's repr, quoted: `'layers.0.mlp.down_proj.weight.absmax'`
)


# Python's words closing a line after a program's own `error =` or `error:` (Unsloth's `Unsloth: FAILED getting
# compilation_config with error = cannot import name 'CompilationLevel' from 'vllm.config' (…)`, unsloth-zoo#356): the
# exception it caught and printed without its class. A quoted word alone is not taken there (a KeyError's words).
# Not on a line vLLM's logger wrote: that is a message of vLLM's, which the catalog reads with its component and phase
# (vLLM's `Batch read error: {e}`); and a line that opens as a warning or a note is not an error however it ends
# (`WARNING: failed to import flash_attn, error: No module named 'flash_attn'`).
_AFTER_ERROR_WORD = re.compile(r"\berror\s*[=:]\s*(?P<words>(?!'[\w.-]+'\s*`?\s*$)\S.*?)\.?`?\s*$", re.IGNORECASE)
_NOT_AN_ERROR = re.compile(r"^\W*(?:warn(?:ing)?|\w*warning|note|info|debug)\b", re.IGNORECASE)


def _python_own_error(text: str, bare: bool = False, vllms: bool = False) -> tuple[str, str] | None:
    """(class, words) of Python's own error wording on a line that lacks its class: vLLM's V0 engine logs
    `'ColumnParallelLinear' object has no attribute 'input_scale'` at ERROR before the traceback, and a person pastes
    the words alone from an issue title, or a program other than vLLM (`vllms`) prints them after its own `error =`.
    A `bare` line (no log level) is never read as a KeyError: a quoted word alone is as often a list item or a value
    as a missing key."""
    if not _PYTHON_OWN.match(text):
        caught = _AFTER_ERROR_WORD.search(text) if not vllms and not _NOT_AN_ERROR.match(text) else None
        if caught is None or not _PYTHON_OWN.match(caught["words"]):
            return None
        text = caught["words"]
    found = next(((cls, text) for words, cls in _PYTHON_OWN_CLASS if words in text), None)
    return None if bare and found is not None and found[0] == "KeyError" else found


# Lines that mean the engine has finished starting: what follows is serving, not start-up.
# (v1/engine/core.py "init engine (…) took", the API server's "Starting vLLM [API ]server on",
# uvicorn's "Application startup complete", the first periodic stats line, an offline job's progress bar.)
_READY_MARKERS = (
    "init engine (profile, create kv cache, warmup model) took",
    "Starting vLLM server on",
    "Starting vLLM API server",
    "Application startup complete",
    "Avg prompt throughput",
    "Processed prompts:",
)
# The engine core's first line (V1, and V0's wording): from here until a ready marker it initialises
# (loads weights, compiles, sizes the KV cache). The API server's banner alone is not enough: a
# log that starts with it and then jumps to serving says nothing about when the engine was ready.
# A start-up under way: the engine's banner, or its weights loaded (V0's and V1's `Model loading took … GiB`), which a
# paste that begins mid-start still shows.
_START_MARKERS = (
    "Initializing a V1 LLM engine",
    "Initializing a V0 LLM engine",
    "Initializing an LLM engine",
    "Model loading took",
)
# Lines that mean requests are being served: the API server is up, a stats line counts requests, or an offline
# job's progress bar runs (`LLM()` returned before `generate` drew it, so its engine had finished starting).
_SERVING_MARKERS = ("Application startup complete", "Avg prompt throughput", "Processed prompts:")
_FAILURE_KINDS = frozenset((*STARTUP_FAILURE_KINDS, LogEventKind.ENGINE_CORE_FAILED))


# The failures the wording table reads into typed fields whose source line vLLM's catalog also holds: the
# event keeps the catalog entry too, so its evidence names vLLM's file, line and words.
_CATALOGUED_KINDS = _FAILURE_KINDS | {
    LogEventKind.REQUEST_TOO_LONG,
    LogEventKind.V0_PREEMPTION_WARNING,
    LogEventKind.WORKER_EXCEPTION,
}


class LogReadError(UserError):
    """A log that cannot be read, or holds nothing recognisable; names the input and the fix."""


@dataclass(slots=True)
class LogReadResult:
    """Events in log order, and how much of the text was recognisable (for 'sources')."""

    source: str
    events: list[LogEvent] = field(default_factory=list)
    lines_read: int = 0
    vllm_lines: int = 0
    # of the kinds only the newest are kept of (NEWEST_KEPT): how many are in `events`, how many were dropped
    kept: Counter[LogEventKind] = field(default_factory=Counter)
    dropped: Counter[LogEventKind] = field(default_factory=Counter)
    tracebacks: int = 0
    error_bodies: int = 0
    catalog_messages: int = 0  # distinct vLLM messages found in its catalog
    unplaced_lines: int = 0  # error or warning lines neither the wording table nor the catalog knows
    carriers: Counter[str] = field(default_factory=Counter)  # lines each carrier (kubectl, a shipper) was taken off
    server_starts: int = 0  # `vllm serve` starts in the text (its argument lines); only the last one is read
    last_start_line: int | None = None  # where the last of several starts begins
    quoted_metrics: QuotedMetrics = field(default_factory=QuotedMetrics)  # figures a person quoted (not vLLM's lines)
    streamed: StreamedChunks = field(default_factory=StreamedChunks)  # a pasted stream's chunks (server-sent events)
    offline: OfflineOutputs = field(default_factory=OfflineOutputs)  # printed SamplingParams and outputs
    body: AnswerBody = field(default_factory=AnswerBody)  # a pasted non-streamed response body
    switches: EnvSwitches = field(default_factory=EnvSwitches)  # environment switches the text shows set
    # the text ends inside a traceback: frames read, and no exception line after them (a paste cut short)
    ends_in_traceback: bool = False
    cut_traceback_named: bool = False  # that traceback's error was logged in words on the line before it

    @property
    def dropped_stats_events(self) -> int:
        return self.dropped[LogEventKind.STATS_LINE]

    @property
    def dropped_iteration_events(self) -> int:
        return self.dropped[LogEventKind.ITERATION_LINE]

    @property
    def iteration_events(self) -> int:
        """Steps kept in `events` (--enable-logging-iteration-details)."""
        return self.kept[LogEventKind.ITERATION_LINE]

    def describe(self) -> str:
        """What was recognised, for the user: every kind of input the text held, counted."""
        parts = [f"{len(self.events)} events from {self.lines_read} lines ({self.vllm_lines} read as vLLM log"]
        counted = (
            (self.tracebacks, "traceback(s)"),
            (self.error_bodies, "HTTP error bod(ies)"),
            (self.catalog_messages, "vLLM message(s) found in its catalog"),
            (self.unplaced_lines, "error line(s) it could not place"),
            (len(self.quoted_metrics.samples), "metric figure(s) quoted"),
            (self.streamed.chunks, "streamed chunk(s)"),
            (
                len(self.of_kind(LogEventKind.OFFLINE_SAMPLING_PARAMS, LogEventKind.OFFLINE_OUTPUT)),
                "printed vLLM object(s) (SamplingParams, an output)",
            ),
            (len(self.of_kind(LogEventKind.ANSWER_BODY)), "response bod(ies) read as the answer"),
        )
        parts += [f", {count} {what}" for count, what in counted if count]
        if self.carriers:
            taken = ", ".join(f"{name} from {count} line(s)" for name, count in self.carriers.most_common())
            parts.append(f"; taken off before reading: {taken}")
        if self.server_starts > 1:
            parts.append(f"; {self.server_starts} server starts: read the last, from line {self.last_start_line}")
        if self.ends_in_traceback and self.cut_traceback_named:
            parts.append(
                "; the text ends inside a traceback, before its exception line: the line before it names the error"
            )
        elif self.ends_in_traceback:
            parts.append(
                "; the text ends inside a traceback, before its exception line: the lines after it name the error"
            )
        return "".join(parts) + ")"

    def of_kind(self, *kinds: LogEventKind) -> list[LogEvent]:
        return [event for event in self.events if event.kind in kinds]


def read_log(path: str) -> LogReadResult:
    """Read `path` (or stdin for '-') and return its events; see the module docstring."""
    label = "--logs -" if path == "-" else f"--logs {path}"
    if path == "-":
        return parse_lines(stdin_text(), source="stdin", label=label)
    try:
        with open_text(Path(path)) as handle:
            return parse_lines(handle, source=path, label=label)
    except COMPRESSED_READ_ERRORS as exc:  # before OSError: gzip's BadGzipFile is one
        raise LogReadError(
            f"{label}: the gzip file is cut short or corrupt ({exc}); pass the whole file, or what is readable of "
            "it (`zcat FILE > FILE.log`, then --logs FILE.log)"
        ) from None
    except OSError as exc:
        raise LogReadError(f"{label}: cannot read it ({exc.strerror}); pass a vLLM server log file or '-'") from None


def parse_lines(lines: Iterable[str], source: str = "log", label: str | None = None) -> LogReadResult:
    """Events from an iterable of lines; raises `LogReadError` only for empty or binary input."""
    result = LogReadResult(source=source)
    state = _ParseState()
    where = label or source
    for line_no, line in _logical_lines(lines, result):
        if "\x00" in line:
            raise LogReadError(
                f"{where}: line {line_no} holds NUL bytes, so this is not text; pass the server's vLLM log or "
                "the error text itself (a file, or '-' for stdin)"
            )
        result.offline.read(line, line_no, source)  # printed objects are read whole, and as lines too
        result.body.read(line, line_no, source)  # … and so is a response body
        result.switches.read(line, line_no, source)  # a switch is context, read beside what its line says
        if not result.streamed.read(line, line_no):  # a streamed answer's chunk is read with the others, at the end
            _read_piece(unwrap(line), line_no, source, state, result)
    if (streamed := result.streamed.event(source)) is not None:
        result.events.append(streamed)
    result.events += result.offline.events(source)
    if result.body.event is not None:
        result.events.append(result.body.event)
    result.events += result.switches.events()
    for kind, newest in NEWEST_KEPT.items():
        _drop_oldest(result, kind, newest, slack=0)
    if result.lines_read == 0:
        raise LogReadError(f"{where}: the log is empty; pass the server's stdout/stderr log or the error text")
    result.ends_in_traceback = bool(state.frames or state.notebook_error)
    result.cut_traceback_named = bool(state.frames) and _cut_under_its_words(state, result)
    if state.frames and not result.cut_traceback_named:
        result.events.append(_cut_traceback(state, source, result.lines_read))
    elif state.notebook_error is not None and not state.frames:
        result.events.append(_cut_at_header(state.notebook_error, _phase(state), source))
    _keep_the_last_start(result)
    return result


def _keep_the_last_start(result: LogReadResult) -> None:
    """A log holding several server starts (a restart appended to the same file) keeps only the last
    start's events: one server's flags, never a merge of two that no command ran. A start is vLLM's
    argument line (one per `vllm serve`), with the version banner printed just before it."""
    starts = [e for e in result.events if e.kind == LogEventKind.NON_DEFAULT_ARGS and e.line_no is not None]
    result.server_starts = len(starts)
    if len(starts) < 2:
        return
    previous, last = starts[-2].line_no, starts[-1].line_no
    banners = [
        e.line_no for e in result.events if e.kind == LogEventKind.VERSION and previous < (e.line_no or 0) <= last
    ]
    result.last_start_line = min(banners, default=last)
    result.events = [e for e in result.events if e.line_no is None or e.line_no >= result.last_start_line]


def _logical_lines(lines: Iterable[str], result: LogReadResult) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each line, an error message wrapped over several lines joined into one
    (at most `MAX_WRAPPED_LINES`), so a pasted message matches as vLLM printed it."""
    held: tuple[int, str] | None = None
    joined = 0
    for line_no, line in _json_objects(lines, result):
        if held is not None and joined < MAX_WRAPPED_LINES and continues(held[1], line):
            rest = line.strip()
            held, joined = (held[0], f"{held[1].rstrip()}{joiner(held[1].rstrip(), rest)}{rest}"), joined + 1
            continue
        if held is not None:
            yield held
        held, joined = (line_no, line), 0
    if held is not None:
        yield held


# A client's error line that opens the body it prints below (`API Error: 400 {`).
_ERROR_OPENS_JSON = re.compile(r"^[\w .:-]*\b(?:[Ee]rror|ERROR)\b[\w .:-]*\{$")


def _json_objects(lines: Iterable[str], result: LogReadResult) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, a JSON object printed over lines (`{` alone or after a client's error
    words, members, `}`) joined into one at its first line's number, so its error body reads as one. The object
    ends where its braces balance (a nested object's `}` does not end it)."""
    block: list[tuple[int, str, str]] = []  # (line number, the line, the line stripped)
    depth = 0
    for line_no, line in carried_lines(_bounded(lines), result.carriers):
        result.lines_read = line_no
        stripped = line.strip()
        if not block and not (stripped == "{" or _ERROR_OPENS_JSON.match(stripped)):
            yield line_no, line
            continue
        block.append((line_no, line, stripped))
        depth += stripped.count("{") - stripped.count("}")
        if depth <= 0:
            yield block[0][0], " ".join(text for _, _, text in block).rstrip(",")
            block, depth = [], 0
        elif len(block) > MAX_JSON_LINES:  # not an object a person pasted: its lines as they are
            yield from ((number, text) for number, text, _ in block)
            block, depth = [], 0
    yield from ((number, text) for number, text, _ in block)


# Wordings that are also a traceback's exception line: inside a fatal error's traceback they name its cause too.
_ALSO_ROOT_CAUSES = (
    LogEventKind.CUDA_KERNEL_FAULT,
    LogEventKind.GPU_FAULT,
    LogEventKind.DETOKENIZER_UNKNOWN_ID,
    LogEventKind.DECODE_STREAM_FAILED,
)
# Wordings that end a traceback whose frames say what failed: the deepest vLLM frame names the kernel a resource
# was refused to.
_NAMED_BY_FRAMES = (LogEventKind.TRITON_OUT_OF_RESOURCES,)


def _read_piece(piece: Unwrapped, line_no: int, source: str, state: _ParseState, result: LogReadResult) -> None:
    """One unwrapped text: a known wording's event, else vLLM's catalog message or an unplaced error."""
    result.error_bodies += piece.how == "error_body"
    state.pieces += 1
    _note_windows_host(piece.text, line_no, source, state, result)
    event, message = _parse_line(piece.text, line_no, source, state)
    if state.last_was_vllm:
        result.vllm_lines += 1
    elif event is None:  # vLLM's own lines never quote a metric; a person's table or sentence may
        result.quoted_metrics.read(message)
        state.release = release_named(message) or state.release
    _tag_release(event, state)
    if state.fatal is not None and (event is None or event.kind in _ALSO_ROOT_CAUSES):
        _note_root_cause(message, state)
    if event is None:
        event = _error_event(piece, message, line_no, source, state, result)
    elif exception_in(message) is not None:  # a known wording that ends a traceback: no longer inside one
        _name_by_frames(event, state.frames)
        state.frames = []
    if event is not None and event.kind in _CATALOGUED_KINDS:  # vLLM's own wording: say where vLLM raises it
        matches = message_catalog().match(message)
        event.catalog = matches[0].ref(state.release, state.logged_in) if matches else None
    if event is None or _is_repeat(event, message, state) or _joined_to_stats_line(event, result):
        return
    if event.kind in (LogEventKind.FATAL_ERROR, LogEventKind.WORKER_EXCEPTION):
        state.fatal = event  # its traceback follows: the exception it ends with is the root cause
        state.frame = state.code = None
    elif event.kind in (LogEventKind.ENGINE_DEAD, LogEventKind.WORKER_DIED):
        state.fatal = None
    elif event.kind == LogEventKind.ENGINE_CORE_FAILED:
        _raised_while_starting(result.events)
    result.events.append(event)
    newest = NEWEST_KEPT.get(event.kind)
    if newest is not None:
        result.kept[event.kind] += 1
        _drop_oldest(result, event.kind, newest, slack=newest)


def _note_windows_host(text: str, line_no: int, source: str, state: _ParseState, result: LogReadResult) -> None:
    """The first line that shows vLLM run by a Windows Python, as an event beside the line's own (its traceback
    is read as before)."""
    if state.windows_noted:
        return
    path = windows_vllm_path(text) or windows_only_module(text)
    if path is not None:
        state.windows_noted = True
        result.events.append(
            LogEvent(kind=LogEventKind.WINDOWS_HOST, message=path, raw=text, line_no=line_no, source_file=source)
        )


def _drop_oldest(result: LogReadResult, kind: LogEventKind, newest: int, slack: int) -> None:
    """Past `newest + slack` events of `kind`, drop the oldest down to `newest` and count them. While reading, the
    slack makes it a compaction now and then rather than a scan per line, so a long log is read in bounded memory;
    at the end (no slack) exactly the newest are left."""
    surplus = result.kept[kind] - newest
    if surplus <= slack:
        return
    result.dropped[kind] += surplus
    result.kept[kind] = newest
    kept: list[LogEvent] = []
    for event in result.events:
        if surplus and event.kind == kind:
            surplus -= 1
            continue
        kept.append(event)
    result.events = kept


def _raised_while_starting(events: list[LogEvent]) -> None:
    """The engine core failed to start: the errors read before it whose phase nothing told were raised while it
    started (a plugin's kernel in the warm-up, a frame no phase call names)."""
    for event in events:
        if event.kind == LogEventKind.UNPLACED_ERROR and event.phase == "unknown":
            event.phase = "startup"


def _tag_release(event: LogEvent | None, state: _ParseState) -> None:
    """A stats line (or a benchmark's result) carries the vLLM release it came from as far as the text says: the
    server's banner above it, the release a person named before pasting it ("on 0.2.7: …", "on 0.3.2: …"), or
    the result's own label ("v0.4.1: Throughput: …"), so lines from two releases can be compared."""
    if event is None:
        return
    if event.kind == LogEventKind.VERSION and event.version:
        state.release = event.version
    elif event.kind in (LogEventKind.STATS_LINE, LogEventKind.BENCHMARK_THROUGHPUT) and event.version is None:
        event.version = release_named(event.label or "") or state.release


def _error_event(
    piece: Unwrapped, message: str, line_no: int, source: str, state: _ParseState, result: LogReadResult
) -> LogEvent | None:
    """A line no wording knows, if it is an error or a warning: the vLLM message its catalog holds, or the
    exception it names (an unplaced error); None for anything else, and for a message already seen."""
    text = message.strip().replace("\\`", "`")  # a backtick escaped for Markdown (`\\`vllm serve\\``) is one
    _note_pytest(text, state, result)
    if _starts_traceback(text, piece.text, line_no, state, result):
        return None
    if not text or state.level in _QUIET_LEVELS or text.startswith(_QUIET_PREFIXES):
        return None
    frame = frame_in(text)
    if frame is not None:
        state.frames.append(frame)
        state.frame_code = None
        return None
    if state.frames and _notebook_source(text, state):
        return None
    exception = _named_exception(piece, text, state)
    if exception is None and state.frames:
        if not _NOT_SOURCE.match(text) and state.frame_code is None:
            state.frame_code = text
            state.calls.append(text)
        return None  # a traceback's source line: its exception line follows
    calls = state.calls
    if exception is not None:
        state.calls, state.notebook_error = [], None
    frames, state.frames = state.frames, [] if exception is not None else state.frames
    code, state.frame_code = state.frame_code, None if exception is not None else state.frame_code
    phase = _phase(state)
    if phase == "unknown" and frames:  # the log around says nothing: the traceback's own calls may
        phase = phase_of(frames)
    common = {"raw": piece.text, "line_no": line_no, "source_file": source, "level": state.level}
    if exception is not None and _reply_timed_out(exception, frames, state):
        return LogEvent(kind=LogEventKind.RPC_TIMEOUT, message=exception[0], **common)
    matches = _catalog_matches(text, exception, state.logged_in or _header_file(text))
    if matches:
        return _catalog_once(matches[0], text, exception, phase, common, state, result)
    read, event = _read_check(text, exception, frames, code, (phase, common), state, result)
    if read:
        return event
    is_error = exception is not None or state.level in ("ERROR", "CRITICAL", "WARNING", "WARN")
    result.unplaced_lines += is_error
    if exception is None and state.fatal is None and _says_failed(message, state.level):
        return _unplaced_line(text, common, state)
    if exception is None or state.fatal is not None:
        return None  # inside a fatal error's traceback the exception names that event (`_note_root_cause`)
    return _unplaced_once(exception, frames, code, text, phase, {**common, "calls": list(calls)}, state, result)


def _catalog_matches(text: str, exception: tuple[str, str] | None, logged_in: str | None) -> list[CatalogMatch]:
    """The catalog's messages in the line: none for Python's own exceptions or their words (not vLLM's), and an
    assert's words only as that AssertionError's (elsewhere they are someone else's sentence)."""
    matches = [] if exception and _PYTHON_OWN.match(exception[1]) else message_catalog().match(text, logged_in)
    # A line that wraps Python's words under another name (LiteLLM's `VLLMException - No module named 'vllm'`) holds
    # them without their class: the span the entry matched is Python's wording all the same.
    matches = [m for m in matches if not _PYTHON_OWN.match(text[m.span[0] : m.span[1]].strip())]
    if exception is None or exception[0] != "AssertionError":  # or another error quotes that AssertionError's words
        matches = [m for m in matches if m.entry.get("kind") != "assert" or _after_assertion_class(text, m)]
    return matches


# A logger's `[file.py:N]` in a line whose header is not vLLM's whole one (`WARNING [argparse_utils.py:257] …`)
_HEADER_FILE = re.compile(r"\[(?P<file>\w+\.py):\d+\]")


def _header_file(text: str) -> str | None:
    found = _HEADER_FILE.search(text)
    return found["file"] if found else None


def _after_assertion_class(text: str, match: CatalogMatch) -> bool:
    """Whether the words stand as an AssertionError's inside another error: right after `AssertionError:` (a serving
    framework's `load failed …: Internal: AssertionError: Error in memory profiling…`, triton-inference-server/
    vllm_backend PR #39), or quoted by vLLM's executor, which repeats a worker's exception by its words alone
    (`Worker failed with error 'use_fp4_indexer_cache requires Blackwell datacenter GPUs …'`, vllm-project/recipes
    PR #760)."""
    before = text[: match.span[0]].rstrip()
    return before.endswith("AssertionError:") or before.endswith(_WORKER_QUOTES)


# vLLM's executor quoting a worker's exception by its str(), which for an AssertionError is its words alone
# (v1/executor/multiproc_executor.py: `Worker failed with error '{e}', please check the stack trace above …`)
_WORKER_QUOTES = "Worker failed with error '"


def _read_check(
    text: str,
    exception: tuple[str, str] | None,
    frames: list[Frame],
    code: str | None,
    where: tuple[str, dict],
    state: _ParseState,
    result: LogReadResult,
) -> tuple[bool, LogEvent | None]:
    """(whether the line was read as vLLM's wordless check, its event: None for a repeat). The bare AssertionError
    Python prints under the statement is the same error (`_read_from_its_assert`); a traceback that places the same
    statement takes back an earlier reading of it (`_retract_checks`)."""
    checks = _wordless_check(text, exception, frames, state)
    if not checks:
        if exception is not None and exception[0] == "AssertionError" and frames and code:
            _retract_checks(code, result)
        return False, None
    phase, common = where
    event = _catalog_once(checks[0], text, exception, phase, common, state, result)
    state.untraced, state.untraced_piece = event or state.untraced, state.pieces  # a repeat: the first one
    return True, event


def _wordless_check(
    text: str, exception: tuple[str, str] | None, frames: list[Frame], state: _ParseState
) -> list[CatalogMatch]:
    """vLLM's wordless assert, known by its statement, where no traceback places it: the line itself (`assert
    token_lora_mapping.size(0) == M`, a traceback's source line pasted alone) or an AssertionError whose words are
    that statement. Under a traceback the frames say where it ran (an unplaced error read with them); the same
    statement in another package's code is not vLLM's, and one under pytest's location line is a test's."""
    if frames or (exception is not None and exception[0] != "AssertionError"):
        return []
    said = text if exception is None else exception[1]
    found = message_catalog().check(said) if said.startswith("assert ") else None
    if found is not None and state.pytest_piece and state.pytest_piece == state.pieces - 1:
        # pytest's location line says whose file it ran in: vLLM's own keeps the check
        files = {place["file"] for place in found.entry.get("places", ())}
        if not any(state.pytest_path.endswith(file) for file in files):
            return []
    return [found] if found else []


def _retract_checks(code: str, result: LogReadResult) -> None:
    """A traceback whose last frame printed a statement read earlier as vLLM's wordless check (pasted as a title above
    it): its frames say where that statement ran, in vLLM or not, so the earlier reading is dropped."""
    said = check_statement(code)
    _drop_checks(result, lambda event: check_statement(event.catalog.template) == said)


def _note_pytest(text: str, state: _ParseState, result: LogReadResult) -> None:
    """pytest's output around a failing statement: its location line above it (`--tb=short`: `pkg/loader.py:40: in
    load`) and its failure line right under it (`E       AssertionError: …`); the statement is a test's or a
    package's, not vLLM's, so a check read from it is dropped."""
    location = _PYTEST_LOCATION.match(text)
    if location:
        state.pytest_piece, state.pytest_path = state.pieces, location["path"]
        return
    check = state.untraced
    if not _PYTEST_FAILURE.match(text) or check is None or state.untraced_piece != state.pieces - 1:
        return
    if state.pytest_piece and state.pytest_piece == state.untraced_piece - 1:
        return  # read under pytest's location in the vLLM file that holds it (`_wordless_check`): vLLM's
    _drop_checks(result, lambda event: event is check)
    state.untraced = None


def _drop_checks(result: LogReadResult, which: Callable[[LogEvent], bool]) -> None:
    """Take back the wordless-check readings `which` picks, and their count in the read summary."""
    kept = [e for e in result.events if not (e.catalog is not None and e.catalog.kind == "check" and which(e))]
    result.catalog_messages -= len(result.events) - len(kept)
    result.events = kept


_PYTEST_LOCATION = re.compile(r"^(?P<path>[\w./\\-]+\.py):\d+: in \w+$")
_PYTEST_FAILURE = re.compile(r"^E\s{2,}\S")


def _catalog_once(
    match: CatalogMatch,
    text: str,
    exception: tuple[str, str] | None,
    phase: str,
    common: dict,
    state: _ParseState,
    result: LogReadResult,
) -> LogEvent | None:
    """The catalog event of a message, once per template and captured values: a retry loop's repeats are one
    event."""
    ref = match.ref(state.release, state.logged_in)
    key = ("catalog", ref.template, tuple(sorted(ref.captured.items())))
    if key in state.seen_errors:
        return None
    state.seen_errors.add(key)
    result.catalog_messages += 1
    return _catalog_event(ref, text, exception[0] if exception else None, phase, common)


# A source line of a traceback whose indentation the paste lost (an issue's formatting): Python, not words.
_PYTHON_STATEMENT = re.compile(
    r"^(?:raise|return|await|yield|assert|import|async with|with) [\w(]|^from [\w.]+ import "
)
# A repeat of an unplaced line may differ in its ids (hex, UUIDs), addresses and counts.
_NUMBERS = re.compile(r"\b[0-9a-fA-F-]{8,}\b|\d+")
# Distinct unplaced lines kept as events: VC-4 names the first; a log of thousands of distinct ones (each looked up
# in the catalog) is counted in the read summary beyond these.
MAX_UNPLACED_LINES = 20


def _says_failed(message: str, level: str | None) -> bool:
    """Whether an error line no exception names is kept: every line at ERROR or above, a warning only when its
    words say something failed; never a traceback's indented source line or its `^^^^` markers (a paste that
    begins inside a traceback logged at ERROR)."""
    if message[:1].isspace() or _NOT_SOURCE.match(message) or _PYTHON_STATEMENT.match(message):
        return False
    return level in ("ERROR", "CRITICAL") or (level in ("WARNING", "WARN") and bool(FAILURE_WORDS.search(message)))


def _unplaced_line(text: str, common: dict, state: _ParseState) -> LogEvent | None:
    """The first line of its words no wording, catalog message or exception names, with the file its header names;
    a later line with the same words counts as its repeat (UCX prints one line per canceled transfer)."""
    words = _NUMBERS.sub("N", text)
    first = state.unplaced_said.get(words)
    if first is not None:
        first.repeats = (first.repeats or 1) + 1
        return None
    if len(state.unplaced_said) >= MAX_UNPLACED_LINES:
        return None
    event = LogEvent(
        kind=LogEventKind.UNPLACED_LINE,
        message=text,
        code_file=state.logged_in,
        component=state.logger,
        # vLLM's logger may word what its catalog lacks near what it holds; another program's words are its own
        nearest=message_catalog().nearest(text) if state.logger == VLLM_LOGGER else [],
        repeats=1,
        **common,
    )
    state.unplaced_said[words] = event
    return event


def _starts_traceback(text: str, raw: str, line_no: int, state: _ParseState, result: LogReadResult) -> bool:
    """A traceback's first line, Python's `Traceback (most recent call last)` or a notebook's header that names the
    class before the frames (kept until its exception line, for a paste cut before it): frames start afresh."""
    named = notebook_header(text)
    if named is None and not text.startswith(_TRACEBACK_START):
        return False
    result.tracebacks += 1
    state.frames, state.calls, state.traceback_piece = [], [], state.pieces
    if named is not None:
        state.notebook_error = (named, line_no, raw)
    return True


def _unplaced_once(
    exception: tuple[str, str],
    frames: list[Frame],
    code: str | None,
    text: str,
    phase: str,
    common: dict,
    state: _ParseState,
    result: LogReadResult,
) -> LogEvent | None:
    """An unplaced error the first time it is read; read again at the end of its traceback, it completes the
    first reading with where it was raised."""
    cls, said = exception
    key = ("unplaced", cls, said)
    if key in state.seen_errors and frames and _same_error(state.untraced, cls, said):
        _trace_untraced(state, result, frames, code, common["calls"], phase)
    if key in state.seen_errors or not said and cls == "Exception":
        return None
    if not said and not frames and _read_from_its_assert(state, cls):
        return None  # the exception line under an assert read on its own the line before: one error, not two
    state.seen_errors.add(key)
    event = _unplaced_event(cls, said, frames, code, text, phase, common, logged_in=state.logged_in)
    state.untraced, state.untraced_piece = (None if frames else event), state.pieces
    return event


def _read_from_its_assert(state: _ParseState, cls: str) -> bool:
    """A bare AssertionError right under the source line whose failed comparison was read as it (`_FAILED_ASSERT`,
    or vLLM's wordless check that the statement is); one further down is another error."""
    event = state.untraced
    return (
        event is not None
        and state.pieces == state.untraced_piece + 1
        and cls == "AssertionError"
        and event.exception == cls
        and (event.message or "").startswith(("AssertionError: assert ", "assert "))
    )


def _same_error(event: LogEvent | None, cls: str, said: str) -> bool:
    return event is not None and event.exception == cls and event.message == (f"{cls}: {said}" if said else cls)


def _trace_untraced(
    state: _ParseState, result: LogReadResult, frames: list[Frame], code: str | None, calls: list[str], phase: str
) -> bool:
    """An error whose words came before its traceback (V0's `logger.exception(e)`: the words at ERROR, then the
    traceback, sometimes cut before its exception line) takes the traceback's frames: the component, the phase,
    the code that raised it. True when there was such an error to complete."""
    old, state.untraced = state.untraced, None
    if old is None or old not in result.events:
        return False
    said = (old.message or "").removeprefix(f"{old.exception}: ")
    common = {"raw": old.raw, "line_no": old.line_no, "source_file": old.source_file, "level": old.level}
    traced = _unplaced_event(old.exception or "", said, frames, code, said, phase, {**common, "calls": list(calls)})
    result.events[result.events.index(old)] = traced
    return True


def _catalog_event(ref: CatalogRef, text: str, exception: str | None, phase: str, common: dict) -> LogEvent:
    """A message vLLM's catalog holds, with what its interface and catalog say about a name it refused. Words vLLM
    both raises and logs keep one catalog entry, the newest; a line that opens with the exception's class shows
    them raised, whatever that entry is."""
    if exception is not None and ref.exception is None and _opens_with_class(text, exception):
        ref = ref.model_copy(update={"exception": exception, "kind": "raise", "level": None})
    elif exception is None and ref.kind == "raise" and ref.logged_at == "warning" and _warning_line(text, common):
        # words vLLM both raises and logs at warning (it warns, and raises only under a strict check): the line's level
        # says which; words only ever raised stay a raise, whoever logged them
        ref = ref.model_copy(update={"exception": None, "kind": "log", "level": "warning"})
    return LogEvent(
        kind=LogEventKind.VLLM_MESSAGE,
        message=text,
        exception=exception or ref.exception,
        catalog=ref,
        phase=phase if phase != "unknown" else ref.phase,
        known_in_release=refused_names.release_knowing(ref),
        known_releases=refused_names.releases_having(ref),
        absent_from_releases=refused_names.architecture_never_listed(ref),
        accepted_instead=refused_names.accepted_instead(ref),
        **common,
    )


# A line that opens with its level where no full vLLM header was read (`WARNING [envs.py:2057] …`)
_WARNS = re.compile(r"^\W*WARN(?:ING)?\b").match


def _warning_line(text: str, common: dict) -> bool:
    return common.get("level") in ("WARNING", "WARN") or _WARNS(text) is not None


def _opens_with_class(text: str, cls: str) -> bool:
    """Whether the line is `Class: words` (the class maybe dotted), not a logged sentence that quotes an exception
    in one of its fields (`Failed to load x: ValueError: …`)."""
    return re.match(rf"\s*(?:[\w.]+\.)?{re.escape(cls.rsplit('.', 1)[-1])}:", text) is not None


def _reply_timed_out(exception: tuple[str, str], frames: list[Frame], state: _ParseState) -> bool:
    """A bare TimeoutError from the message queue a V1 engine core reads its workers' replies from: the shared-memory
    queue raises it without words when a dequeue outlasts its timeout (distributed/device_communicators/
    shm_broadcast.py), which the multiprocess executor gives a model step as VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS and
    re-raises as `RPC call to execute_model timed out.` (v1/executor/multiproc_executor.py, 0.10.1.1 and 0.15.1): a
    paste of the chain's first exception shows it bare (vllm#23582). Read from its last frame, or, pasted without
    frames, from the engine core's logger (core.py)."""
    if exception[0] != "TimeoutError" or exception[1].strip():
        return False
    if frames:
        return frames[-1].path.replace("\\", "/").endswith("shm_broadcast.py")
    return (state.logged_in or "").startswith("core.py:")


def _named_exception(piece: Unwrapped, text: str, state: _ParseState) -> tuple[str, str] | None:
    """(class, words) of the exception a line names: its own exception line, an error body's message, or
    Python's own words an ERROR line prints without their class; None for anything else."""
    exception = exception_in(text)
    if exception is None and piece.how == "error_body":  # a refused request: the body is the error
        exception = (piece.error_type or HTTP_ERROR_EXCEPTION, text)
    if exception is None and state.level in ("ERROR", "CRITICAL", None) and not state.frames:
        # `logger.exception(e)` prints no class; a line vLLM's logger wrote is a message of its catalog's
        exception = _python_own_error(text, bare=state.level is None, vllms=state.logger == VLLM_LOGGER)
    if exception is None and (header := _V0_WORKER_HEADER.search(text)):  # Python's words in V0's worker header
        exception = _python_own_error(header["words"], bare=True)
    if exception is None and not state.frames and (failed := _FAILED_ASSERT.match(text)):
        exception = ("AssertionError", failed["words"] or failed["condition"])
    if exception is None and not state.frames and _PYTHON_CALL_REFUSAL.match(text):
        exception = ("TypeError", text)  # Python's refusal of a call's arguments, pasted without its class
    if (
        exception is None
        and not state.frames
        and state.level in ("ERROR", "CRITICAL", None)  # a warning may quote a refusal it recovered from
        and "() " in text
        and (inside := _CALL_REFUSAL_INSIDE.search(text))
    ):
        exception = ("TypeError", inside["call"])  # the same at the end of a person's sentence or a status's line
    if (
        exception is None
        and not state.frames
        and "EngineArgs.__init__()" in text  # a cheap test first: the search is unanchored, and runs per line
        and (refusal := _ENGINE_ARGS_REFUSAL.search(text))
    ):
        exception = ("TypeError", refusal.group(0))  # inside a framework's own error line
    if (
        exception is None
        and (wrapped := _PYDANTIC_WRAPPED.match(text))
        and (not wrapped["type2"] or state.level is None)
    ):
        kind = wrapped["type"] or wrapped["type1"] or wrapped["type2"]
        exception = (_PYDANTIC_CLASSES[kind], wrapped["words"] or wrapped["words1"] or wrapped["words2"])
    return _inner_of_wrapped(exception)


def _inner_of_wrapped(exception: tuple[str, str] | None) -> tuple[str, str] | None:
    """A framework's error that wraps another's words after a newline it printed escaped (a UI's `Error: "Error in
    generating model output:\\nLLM.generate() got an unexpected keyword argument …"`, huggingface/smolagents#1794): the
    wrapped exception is the cause, when its last part is an exception line or Python's refusal of a call."""
    if exception is None or "\\n" not in exception[1]:
        return exception
    last = exception[1].split("\\n")[-1].strip().rstrip('"')
    if _PYTHON_CALL_REFUSAL.match(last):
        return ("TypeError", last)
    inner = _EXCEPTION_LINE.match(last)
    return (inner.group(1), inner.group(2) or "") if inner else exception


# V0's multiprocessing worker (executor/multiproc_worker_utils.py, 0.4.2 to 0.6.2) wrote the exception's words into its
# header, before the traceback (`… while processing method load_model: No module named 'einops', Traceback (most recent
# call last):`, vllm PR #7651): where they are Python's own (an import, an attribute), the header names the exception,
# so a paste cut inside the traceback keeps it; other words there (NCCL's, vLLM's own) keep their wordings and catalog
# entries. From 0.6.3 the header ends at the method and the words are the traceback's last line.
_V0_WORKER_HEADER = re.compile(
    r"Exception in worker \S+ while processing method \w+: (?P<words>.+?), Traceback \(most recent call last\):$"
)


# Python's words for a call whose arguments do not fit the function, which only a TypeError carries (vllm#3694's
# title: `NeuronExecutor.__init__() takes 7 positional arguments but 8 were given`).
_CALL = r"[A-Za-z_][\w.]*\(\) "
_TAKES_OR_KEYWORD = (
    r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given"
    r"|got an unexpected keyword argument '\w+(?:-\w+)*'"
)
_MISSING = r"missing \d+ required (?:positional|keyword-only) arguments?: "
_PYTHON_CALL_REFUSAL = re.compile(rf"^{_CALL}(?:{_TAKES_OR_KEYWORD}|{_MISSING}.+)$")
# The same refusal ending a line that holds more before it: a person's sentence quoting it (`… it will raise error:
# "LLM.generate() got an unexpected keyword argument 'prompt_token_ids' "`, openai/openai-cookbook PR #2353) or an
# HTTP status before it (`400 Gemma4ToolParser.__init__() takes 2 positional arguments but 3 were given`, vllm#38837)
# (the missing arguments are named one by one: a line that goes on after them is no refusal of Python's)
# (or quoted as code, `…`, with the sentence going on after it: ray-project/ray#52975's `it fails with
# \`resolve_chat_template_content_format() got an unexpected keyword argument 'trust_remote_code'\` due to …`)
_CALL_REFUSAL_INSIDE = re.compile(
    rf"(?<![\w.])(?P<call>{_CALL}(?:{_TAKES_OR_KEYWORD}|{_MISSING}'\w+'(?:(?:, | and |, and )'\w+')*))"
    r"(?:[\s\"'`.]*$|(?<=')`(?!`))"
)
# vLLM's engine arguments refusing a keyword inside a framework's own error line, after its words (Xinference's
# `Server error: 500 - [address=0.0.0.0:46149, pid=156] AsyncEngineArgs.__init__() got an unexpected keyword
# argument 'tool-call-parser'`, xorbitsai/inference#4196): the class names vLLM, so the words are Python's TypeError
_ENGINE_ARGS_REFUSAL = re.compile(
    r"(?<![\w.])(?:Async)?EngineArgs\.__init__\(\) got an unexpected keyword argument '\w+(?:-\w+)*'$"
)
# pydantic's line for an error a validator raised, under its `N validation error(s) for <Model>` header: vLLM's
# config classes (ModelConfig, VllmConfig …) are pydantic dataclasses, so a ValueError or an assert in their
# `__post_init__` is printed as `Value error, <words> [type=value_error, input_value=ArgsKwargs(…), …]`
# (zai-org/GLM-V#9 with vLLM 0.9; vllm#35967): the words are the exception's, its class pydantic's type. pydantic 1
# printed the words first and the type after them in parentheses (`  Quantization is not supported for <class
# '…BloomForCausalLM'>. (type=value_error)`, vllm#1711: a wrapper's settings model built vLLM's engine). A person may
# quote the line as code, its backticks before it (vllm PR #36734: "``` Assertion failed, In Mamba cache align …").
_PYDANTIC_WRAPPED = re.compile(
    r"^\s*(?:`+\s*)?(?:(?:Value error|Assertion failed), (?P<words>.+?) \[type=(?P<type>value_error|assertion_error), "
    r"input_value=|(?P<words1>\S.*?) \(type=(?P<type1>value_error|assertion_error)\)$"
    # cut before its `[type=…]` (llm-compressor#2805: `Value error, Must use group or tensor_group quantization
    # strategy in order to apply`): pydantic's prefix alone says which, on a line pasted without a log level and
    # with its words starting as a message does (`Value error, please retry` is a sentence)
    r"|(?P<type2>Value error|Assertion failed), (?P<words2>[A-Z`'\"].*?)\s*$)"
)
_PYDANTIC_CLASSES = {
    "value_error": "ValueError",
    "assertion_error": "AssertionError",
    "Value error": "ValueError",
    "Assertion failed": "AssertionError",
}


# A traceback's source line that can only be its last frame's, pasted without the exception line under it: an
# `assert` of a name, an attribute or a comparison of them, with its message (`assert camem_available, "camem
# allocator is not available"`): such a statement calls nothing that could raise deeper, so the assertion failed,
# and Python raises AssertionError with the message it gives.
_FAILED_ASSERT = re.compile(
    r"""^assert [\w.]+(?: (?:[=!<>]=|[<>]|is(?: not)?|(?:not )?in) [\w.]+)?, (?P<q>["'])(?P<words>[^"']+)(?P=q)$"""
    # without a message Python raises a bare AssertionError; the comparison is then all the paste says, so it is
    # kept as the words (`assert num_cache_lines >= batch`, vllm#34094's title), and only a comparison is read
    r"""|^(?P<condition>assert [\w.]+ (?:[=!<>]=|[<>]|is(?: not)?|(?:not )?in) [\w.]+)$"""
)


def _name_by_frames(event: LogEvent, frames: list[Frame]) -> None:
    """Where in vLLM the traceback a wording ends ran, for the kinds whose cause depends on it."""
    deepest = deepest_vllm_frame(frames) if event.kind in _NAMED_BY_FRAMES else None
    if deepest is not None:
        event.component = component_of(frames, "")
        event.function, event.code_file = deepest.function, deepest.path


def _unplaced_event(
    cls: str,
    said: str,
    frames: list[Frame],
    code: str | None,
    text: str,
    phase: str,
    common: dict,
    logged_in: str | None = None,
) -> LogEvent:
    """An exception neither the wording table nor the catalog knows, named with where its traceback ran (or, with
    no traceback, the source its log line's header names, `logged_in`: its component and plugin)."""
    releases = refused_names.argument_releases(cls, said, frames)
    extra = refused_names.extra_installing(cls, said)
    # without frames, the file of vLLM's that the line's own header names (`[hermes_tool_parser.py:148]`) says where
    # it was logged; a plugin's file is named as the plugin's
    own_file = logged_in if logged_in and not frames and plugin_in_path(logged_in) is None else None
    component = component_of(frames, text) or (component_of_path(own_file) if own_file else None)
    return LogEvent(
        kind=LogEventKind.UNPLACED_ERROR,
        message=f"{cls}: {said}" if said else cls,
        exception=cls,
        component=component,
        code=code if frames else None,
        code_file=frames[-1].path if frames else None,
        function=frames[-1].function if frames else None,
        phase="startup" if component == CONFIGURATION else phase,  # vLLM validates its configuration as it starts
        nearest=message_catalog().nearest(said or cls),
        naming_message=message_catalog().naming_in(said),
        caller=refused_names.caller_of_vllm(frames) or releases.builder,
        plugin=plugin_of(frames) if frames else plugin_in_path(logged_in),
        call_site=_site(call_site(frames)),
        known_in_release=releases.known_in_release,
        known_releases=releases.known_releases,
        absent_from_releases=releases.absent_from,
        server_flag=releases.server_flag,
        vllm_extra=extra[0] if extra else None,
        extra_releases=extra[1] if extra else None,
        **common,
    )


def _site(frame: Frame | None) -> str | None:
    return f"{frame.path}:{frame.line} in {frame.function}" if frame is not None else None


def _cut_under_its_words(state: _ParseState, result: LogReadResult) -> bool:
    """The text ends inside a traceback that began on the line after an error's words (V0's `logger.exception`):
    the exception is known, and its traceback, cut or not, says where it was raised."""
    untraced = state.untraced
    if untraced is None or state.traceback_piece != state.untraced_piece + 1:
        return False
    phase = phase_of(state.frames)
    return _trace_untraced(
        state, result, state.frames, state.frame_code, state.calls, phase if phase != "unknown" else _phase(state)
    )


def _cut_traceback(state: _ParseState, source: str, line_no: int) -> LogEvent:
    """The traceback the text ends inside, its exception line never reached: where vLLM was when the paste
    stops (the deepest vLLM frame, its component and the phase its calls say), so the reader knows what
    failed and that the error's own line is what is missing."""
    frames = state.frames
    deepest = deepest_vllm_frame(frames) or frames[-1]
    phase = phase_of(frames)
    return LogEvent(
        kind=LogEventKind.CUT_TRACEBACK,
        message=deepest.call(),
        function=deepest.function,
        code_file=deepest.path,
        code=state.frame_code if deepest is frames[-1] else None,
        component=component_of(frames, ""),
        phase=phase if phase != "unknown" else _phase(state),
        exception=state.notebook_error[0] if state.notebook_error else None,
        raw=f'File "{deepest.path}", line {deepest.line}, in {deepest.function}',
        line_no=line_no,
        source_file=source,
    )


def _cut_at_header(header: tuple[str, int, str], phase: str, source: str) -> LogEvent:
    """A notebook traceback the text ends at, before any frame: only its header's class is known, and where the
    log around it says the engine was (`phase`; after the weights loaded: starting)."""
    named, line_no, raw = header
    return LogEvent(
        kind=LogEventKind.CUT_TRACEBACK,
        message=named,
        exception=named,
        phase=phase,
        raw=raw,
        line_no=line_no,
        source_file=source,
    )


def _phase(state: _ParseState) -> str:
    """Where the engine was when a line was printed, as far as the text shows."""
    if state.serving:
        return "serving"
    return "startup" if state.starting or state.capturing_graphs else "unknown"


@dataclass(slots=True)
class _ParseState:
    """What earlier lines tell about later ones: the clock origin and the startup phase."""

    first_time: datetime | None = None
    capturing_graphs: bool = False
    serving: bool = False
    starting: bool = False  # a start-up was seen and the engine has not finished initialising yet
    last_was_vllm: bool = False
    windows_noted: bool = False  # a line showed vLLM run by a Windows Python (noted once)
    logger: str | None = None  # whose logger wrote the line being read, when its header or prefix tells
    seen_failures: set[tuple[str, str]] = field(default_factory=set)
    fatal: LogEvent | None = None  # the last `EngineCore encountered a fatal error`, until the chain moves on
    frame: str | None = None  # in that traceback: the last `File "…", line N, in f` read, as `file.py:N in f`
    code: str | None = None  # and the source line printed under it
    level: str | None = None  # the level of the line being read (from its header), None without one
    logged_in: str | None = None  # the source its header names (`vllm_omni/engine/…py:1148`), None without one
    release: str | None = None  # the vLLM release the text says the lines from here came from
    frames: list[Frame] = field(default_factory=list)  # the current traceback's frames, outermost first
    # a notebook traceback's header read and its exception line not yet: the class it named, and that header line
    notebook_error: tuple[str, int, str] | None = None
    frame_code: str | None = None  # the source line printed under the last of those frames
    calls: list[str] = field(default_factory=list)  # the source line under each of those frames, outermost first
    seen_errors: set[tuple] = field(default_factory=set)  # catalog messages and unplaced errors already read
    unplaced_said: dict[str, LogEvent] = field(default_factory=dict)  # unplaced lines by their words, numbers aside
    # an error read without a traceback (`logger.exception(e)` prints its words, then the traceback), the logical
    # line it was on, and the one the last traceback began on: the traceback right after it says where it was raised
    untraced: LogEvent | None = None
    untraced_piece: int = 0
    traceback_piece: int = 0
    pytest_piece: int = 0  # the logical line pytest's last location line (`pkg/x.py:40: in f`) was on
    pytest_path: str = ""  # the file that location line names
    pieces: int = 0  # the logical lines read so far (a carrier may split one line in two physical ones)


# The line a Python traceback ends with: `RuntimeError: CUDA error: …`, `torch.OutOfMemoryError: …`,
# or a bare `AssertionError` (a failed `assert` has no message: the source line above it says what failed).
_EXCEPTION_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception))(?:: (.+))?$")
_FRAME_LINE = re.compile(r'^\s*File "(?:[^"]*/)?([^"/]+)", line (\d+), in (\w+)')


def _note_root_cause(message: str, state: _ParseState) -> None:
    """The last exception line of a fatal error's (or a worker's) traceback becomes its message (the chain's
    cause); a message-less exception is named with the source line and the frame it was raised in."""
    fatal = state.fatal
    assert fatal is not None
    frame = _FRAME_LINE.match(message)
    if frame:
        state.frame, state.code = f"{frame.group(1)}:{frame.group(2)} in {frame.group(3)}", None
        return
    match = _EXCEPTION_LINE.match(message)
    if match and match.group(1) != "EngineDeadError":
        fatal.exception = match.group(1)  # the rules ask this, not the message's words, whether a root was read
        if match.group(2):
            fatal.message = f"{match.group(1)}: {match.group(2).strip()}"
        else:
            where = f" ({state.frame})" if state.frame else ""
            fatal.message = f"{match.group(1)}: {state.code}{where}" if state.code else f"{match.group(1)}{where}"
    elif state.frame and state.code is None and message.strip():
        state.code = message.strip()


def _notebook_source(text: str, state: _ParseState) -> bool:
    """A notebook traceback's numbered source line under the last frame: the `-->` one is the frame's code (and its
    line, which IPython 7's frame line lacks), the others context; True when `text` is one of them."""
    context = notebook_context(text)
    if context is None:
        return False
    own, line, code = context
    if own and state.frame_code is None:
        last = state.frames[-1]
        state.frames[-1] = last._replace(line=last.line or line)
        state.frame_code = code
        state.calls.append(code)
    return True


def _bounded(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        yield line[:MAX_LINE_CHARS]


def _parse_line(line: str, line_no: int, source: str, state: _ParseState) -> tuple[LogEvent | None, str]:
    """The event a line holds (or None), and its bare message (prefixes and header removed)."""
    message, process = line, None
    if "[rank" in message and (rank := _TORCHRUN_RANK.search(message)):
        message = message[rank.end() :]
    while True:  # prefixes can nest: (APIServer pid=716) (EngineCore_DP0 pid=1101) ERROR …
        prefix = _PREFIX.match(message)
        if not prefix:
            break
        process, message = prefix.group("proc").strip(), message[prefix.end() :]
    if message.endswith("]") and "across cluster" in message:
        message = _RAY_REPEATED.sub("", message)
    message, timestamp, other = _read_header(message, process, state)
    level = state.level
    _track_phase(message, state)
    if notebook_frame(message) is not None:  # its path or a link in it (`(https://localhost:8080/#)`) is no wording's
        return None, message
    for pattern in candidates(message):
        match = pattern.regex.search(message)
        if match is None:
            continue
        read = pattern.fields(match)
        if read is None:  # the words match, but say something else here (a wording's fields refuse it)
            continue
        fields = dict(read)
        if pattern.kind == LogEventKind.NON_DEFAULT_ARGS:
            fields = {"args": _args_from_text(match.group("args"))}
        if pattern.kind == LogEventKind.CUDA_OOM and "oom_phase" not in fields:
            fields["oom_phase"] = _oom_phase(state)
        if pattern.kind == LogEventKind.SHM_BROADCAST_HANG:
            fields["during_startup"] = state.starting
        if pattern.kind == LogEventKind.SLEEP_FREED:  # whose worker slept: vLLM's, or a platform plugin's
            fields["code_file"] = state.logged_in
        fields.setdefault("process", process)
        return LogEvent(
            kind=pattern.kind,
            raw=line,
            line_no=line_no,
            source_file=source,
            level=level,
            timestamp=timestamp,
            time_s=_seconds_since_start(timestamp, state),
            **fields,
        ), message
    return None, other.group("msg") if other else message


def _read_header(message: str, process: str | None, state: _ParseState) -> tuple[str, str | None, re.Match | None]:
    """The message after vLLM's header (its level and timestamp), else the header of another logger that names a
    level (kept off the message only if no wording matches the whole line, `other`); sets the line's level, the
    file its header names and whose logger wrote it on `state`."""
    header = _HEADER.match(message)
    level = timestamp = None
    if header:
        level, timestamp, message = header.group("level"), header.group("ts"), header.group("msg")
    other, state.logger = (None, None) if header else (_other_logger(message) or (None, None))
    if other:
        named = other.group("level")
        level = _NCCL_LEVELS[named] if state.logger == NCCL_LOG else _OTHER_LEVELS[named[0].upper()]
    state.level = level
    # 0.32's `[file:line]`, V0's `file:line]`, another logger's own
    state.logged_in = (
        header.group("where") or header.group("where_v0")
        if header
        else other.groupdict().get("where")
        if other
        else None
    )
    state.last_was_vllm = header is not None or process is not None
    if header is not None or process is not None and other is None:  # a worker's prefix before NCCL's own line
        state.logger = VLLM_LOGGER
    return message, timestamp, other


def _track_phase(message: str, state: _ParseState) -> None:
    """Whether an OOM happened during CUDA-graph capture or while serving decides its fix; whether
    a shm_broadcast wait came before the engine finished starting tells compilation from a hang."""
    if "Capturing CUDA graph" in message or "Capturing cudagraphs" in message:
        state.capturing_graphs = True
    elif "Graph capturing finished" in message:
        state.capturing_graphs = False
    if any(marker in message for marker in _SERVING_MARKERS):
        state.serving, state.capturing_graphs = True, False
    if any(marker in message for marker in _START_MARKERS):
        state.starting = True
    elif any(marker in message for marker in _READY_MARKERS):
        state.starting = False  # a broadcast wait from now on is not start-up compilation


def _oom_phase(state: _ParseState) -> OomPhase:
    if state.capturing_graphs:
        return OomPhase.CUDAGRAPH_CAPTURE
    return OomPhase.RUNTIME if state.serving else OomPhase.UNKNOWN


def _joined_to_stats_line(event: LogEvent, result: LogReadResult) -> bool:
    """V0's `Prefix cache hit rate: GPU: …` line belongs to the stats line printed just before it: the rate joins
    that interval (one stats event, as V1 prints it) instead of counting as another one. Alone, it stays an event."""
    if event.kind != LogEventKind.STATS_LINE or event.prefix_hit_rate is None:
        return False
    if event.prompt_throughput_tps is not None or event.running is not None:  # a stats line of its own
        return False
    last = result.events[-1] if result.events else None
    if last is None or last.kind != LogEventKind.STATS_LINE or last.prefix_hit_rate is not None:
        return False
    last.prefix_hit_rate = event.prefix_hit_rate
    return True


def _is_repeat(event: LogEvent, message: str, state: _ParseState) -> bool:
    """A startup failure is printed by several processes and again in tracebacks: keep one."""
    if event.kind not in _FAILURE_KINDS:
        return False
    key = (event.kind.value, re.sub(r"^[\w.]*(?:Error|Exception): ", "", message.strip()))
    if key in state.seen_failures:
        return True
    state.seen_failures.add(key)
    return False


def _seconds_since_start(timestamp: str | None, state: _ParseState) -> float | None:
    if timestamp is None:
        return None
    try:  # vLLM prints no year; 2000 is a leap year, so 02-29 parses
        when = datetime.strptime(f"2000-{timestamp}", "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    if state.first_time is None:
        state.first_time = when
    elapsed = (when - state.first_time).total_seconds()
    return elapsed if elapsed >= 0 else elapsed + 366 * 86400  # the log crossed New Year


def _args_from_text(text: str) -> dict[str, str]:
    """`{'max_model_len': 32768, …}` (0.10+) or `Namespace(…)` (≤0.9) → {flag: value text}."""
    if text.startswith("{"):
        value = python_literal(text)
        if value is None:  # not a literal Python can build: the same text, read as pairs
            return args_from_repr(text[1:-1], separator=":")
        if isinstance(value, dict):
            return args_from_repr(", ".join(f"{k}={v!r}" for k, v in value.items()))
    if text.startswith("Namespace("):
        return args_from_repr(text[len("Namespace(") : -1], drop_defaults=True)
    return {}
