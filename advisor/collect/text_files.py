"""A text file a person saved, opened in the Unicode encoding it was written in.

Why: a log saved on Windows is often not UTF-8. PowerShell 5's `kubectl logs pod > vllm.log` (and `Out-File`)
writes UTF-16 with a byte-order mark, Notepad may add a UTF-8 byte-order mark, and read as UTF-8 every other
byte of UTF-16 is a NUL, which is what a binary file looks like. The encoding is told from the first bytes: a
byte-order mark (UTF-8, UTF-16 or UTF-32, either byte order), else UTF-16 without one when nearly every other
byte of a mostly-ASCII text is NUL, else UTF-8 (a stray byte of another encoding becomes U+FFFD, never an
error). A gzip-compressed file (a rotated log) is read through gzip. A file that is binary still is: the reader
refuses it by its NULs.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from pathlib import Path
from typing import TextIO

# Byte-order marks, the longest first (UTF-32 LE's begins with UTF-16 LE's).
_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
_SNIFF_BYTES = 4096
_GZIP_MAGIC = b"\x1f\x8b"
# What reading a gzip file that is cut short or corrupt raises, at its start or anywhere in it.
COMPRESSED_READ_ERRORS: tuple[type[Exception], ...] = (EOFError, zlib.error, gzip.BadGzipFile)
_UTF16_NUL_SHARE = 0.9  # of the bytes on one side of each pair: ASCII text in UTF-16 has a NUL on that side


def encoding_of(head: bytes) -> str:
    """The encoding the text starting with `head` was written in (see the module docstring)."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    pairs = len(head) // 2
    if pairs >= 2:
        even_nul = sum(1 for byte in head[0 : 2 * pairs : 2] if byte == 0) / pairs
        odd_nul = sum(1 for byte in head[1 : 2 * pairs : 2] if byte == 0) / pairs
        if odd_nul >= _UTF16_NUL_SHARE and even_nul == 0:
            return "utf-16-le"
        if even_nul >= _UTF16_NUL_SHARE and odd_nul == 0:
            return "utf-16-be"
    return "utf-8"


def open_text(path: str | Path) -> TextIO:
    """`path` opened for reading as text in its own encoding, through gzip when it is compressed (a node rotates
    container logs to `0.log.<date>.gz`, logrotate to `.gz`); raises OSError as `open` does, and one of
    COMPRESSED_READ_ERRORS for a gzip cut short or corrupt (while it is read, too)."""
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if head.startswith(_GZIP_MAGIC):
        with gzip.open(path, "rb") as compressed:
            inner = compressed.read(_SNIFF_BYTES)
        return gzip.open(path, "rt", encoding=encoding_of(inner), errors="replace", newline=None)
    return open(path, encoding=encoding_of(head), errors="replace", newline=None)  # noqa: SIM115 - the caller closes it


def read_text(path: str | Path) -> str:
    with open_text(path) as handle:
        return handle.read()


def stdin_text() -> TextIO:
    """Standard input as text in its own encoding (a pipe from PowerShell is UTF-16 too); the encoding is told
    from the bytes already waiting, without consuming them."""
    buffer = getattr(sys.stdin, "buffer", None)
    if not isinstance(buffer, io.BufferedReader):  # a test's StringIO, or a stream with no bytes under it
        return sys.stdin
    return io.TextIOWrapper(buffer, encoding=encoding_of(buffer.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]), errors="replace")
