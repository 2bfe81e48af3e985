"""The one output boundary: every result servops writes and every line it prints leaves through here.

Why one place: a secret reaches output by many roads (a key in `--server-args`, a password in a URL,
an engine's log quoted in an error) and a result can be lost on the way out (a full disk, a reader
of stdout that went away). Here, once:

- a document is redacted as values (`advisor.redact.redact_document`) and then serialized, never
  the other way round: a pattern run over serialized JSON could eat the backslash before a quoted
  key (`--api-key "k1"`) and leave invalid JSON;
- a file is written atomically (a temporary file in the same folder, then a rename), so a reader
  never sees half of it, and before anything is printed about it; if the write fails, the document
  is saved in the temporary folder and the error names both paths (`output_paths.write_or_rescue`);
- text for the terminal is redacted and loses every escape sequence (CSI and OSC, as log lines and
  engine output can carry them), and a closed stdout ends the printing, never the command's result.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

from advisor.cli.output_paths import write_or_rescue
from advisor.errors import UserError
from advisor.redact import redact, redact_document

__all__ = ["print_json", "result_json", "say", "strip_escapes", "write_result"]

# CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), other two-character escapes, and the C1 controls
# (0x80-0x9f, which some terminals also obey); tabs and newlines stay.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|[\x80-\x9f]|\x1b")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def result_json(
    result: BaseModel | Mapping[str, Any] | list, *, exclude: set[str] | None = None, indent: int = 2
) -> str:
    """The result as JSON text ending in a newline, every secret masked in its values first.

    A pydantic model is dumped as pydantic serializes it (NaN and infinities become null), read
    back as plain values, redacted, and written again."""
    if isinstance(result, BaseModel):
        data = json.loads(result.model_dump_json(exclude=exclude))
    else:  # plain JSON-ready values (a window as a ramp document): a copy, so the caller's stays as it was
        data = json.loads(json.dumps(result, default=str))
    return json.dumps(redact_document(data), indent=indent, ensure_ascii=False) + "\n"


def write_result(
    path: str | Path,
    result: BaseModel | Mapping[str, Any] | list,
    flag: str,
    *,
    exclude: set[str] | None = None,
    indent: int = 2,
) -> Path:
    """Write the redacted result to `path` atomically; rescued to the temporary folder (UserError naming
    both) when that fails. Returns the path written."""
    return write_or_rescue(path, result_json(result, exclude=exclude, indent=indent), flag)


def strip_escapes(text: str) -> str:
    """`text` without terminal escape sequences or control characters (tabs and newlines kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def say(text: str, stream: TextIO | None = None, *, end: str = "\n") -> None:
    """Print `text` for a person: secrets masked, escape sequences gone. A reader that went away
    (`servops … | head -1`) ends the printing quietly; whatever was written to files stays."""
    _write(stream, strip_escapes(redact(text)) + end)


def print_json(text: str, stream: TextIO | None = None) -> None:
    """Print JSON from `result_json` as it is: redacted as values already, and a second pass over the
    serialized text is what must never happen (JSON escapes control characters itself)."""
    _write(stream, text)


def _write(stream: TextIO | None, text: str) -> None:
    out = stream if stream is not None else sys.stdout
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        _silence(out)
    except OSError as exc:  # a full disk or a closed descriptor behind a redirect: say so once, on stderr
        _silence(out)
        if out is sys.stdout:
            raise UserError(
                f"cannot write the output to stdout: {exc.strerror or exc}; free space where it is redirected, "
                "or write the result to a file with --json where the command has it"
            ) from None


def _silence(stream: TextIO) -> None:
    """After a broken pipe, point the stream's descriptor at /dev/null so the interpreter's own final
    flush does not raise again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
