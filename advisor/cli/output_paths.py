"""Output paths checked before the work starts, and finished results never dropped.

Why: a ramp or a demo measures for minutes; finding out only at the end that `--json` points
into a missing or read-only folder threw the whole measurement away. Every command that
writes files calls `check_output_file` / `check_output_dir` on its flags before it starts
anything, and writes its final document with `write_or_rescue`, which, if the path broke
meanwhile, saves the document in the temporary folder and says where in the error line.

The checks really write (and remove) a probe file: permission bits say little for root, on
read-only mounts or full disks.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from advisor.errors import UserError

__all__ = ["check_output_dir", "check_output_file", "write_or_rescue"]

PROBE_NAME = ".servops-write-check"


def check_output_file(path: str | Path | None, flag: str) -> None:
    """Raise UserError unless a file can be written at `path` (its folder is created if missing)."""
    if path is None or str(path) == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{flag} {target}: is a folder; pass a file path such as {target / 'result.json'}")
    _refuse_file_in_the_way(target.parent, flag, target)
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UserError(
            f"{flag} {target}: cannot write there ({exc.strerror or exc}); pass a path in a writable folder"
        ) from None
    if not existed:
        target.unlink(missing_ok=True)


def check_output_dir(path: str | Path | None, flag: str) -> None:
    """Raise UserError unless `path` is (or can become) a folder that files can be written in."""
    if path is None:
        return
    folder = Path(path)
    _refuse_file_in_the_way(folder, flag, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / PROBE_NAME
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        raise UserError(
            f"{flag} {folder}: cannot write there ({exc.strerror or exc}); pass a writable folder"
        ) from None


def _refuse_file_in_the_way(folder: Path, flag: str, given: Path) -> None:
    """A file where a folder of the path should be is the usual typo; name it."""
    for ancestor in (folder, *folder.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise UserError(f"{flag} {given}: {ancestor} is a file, not a folder; pass a path in a writable folder")
            return


def write_or_rescue(path: str | Path, text: str, flag: str) -> Path:
    """Write `text` to `path` atomically (a temporary file beside it, then a rename: a reader never
    sees half a document), or straight through a device, pipe or link (`/dev/stdout`, a FIFO), which a
    rename would replace; if that fails, save it in the temp folder and raise a UserError naming
    both, so a finished measurement is never lost."""
    target = Path(path)
    try:
        if target.is_symlink() or (target.exists() and not target.is_file()):
            target.write_text(text, encoding="utf-8")  # a device, a pipe, a link: write through it, never replace it
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.chmod(partial, mode)  # as a plain write would have left it (mkstemp makes it 0600)
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
        return target
    except OSError as exc:
        reason = exc.strerror or str(exc)
    handle, rescue = tempfile.mkstemp(prefix="servops-", suffix=target.suffix or ".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    raise UserError(f"{flag} {target}: cannot write it ({reason}); the result was saved to {rescue} instead")


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    current = os.umask(0)
    os.umask(current)
    return current
