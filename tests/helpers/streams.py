"""A stdout whose reader went away (`servops … | head -1`), for the tests of the output boundary."""

from __future__ import annotations

import io
import os


class ClosedPipe(io.StringIO):
    """Every write raises BrokenPipeError, as a pipe whose reader left; `fileno` is a real descriptor (to
    /dev/null) so the boundary can silence it the way it silences the real stdout."""

    def write(self, text: str) -> int:
        raise BrokenPipeError

    def fileno(self) -> int:
        return os.open(os.devnull, os.O_WRONLY)
