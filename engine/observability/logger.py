"""vLLM-style log lines: `(EngineCore pid=N) INFO 11-21 23:40:01 [file.py:123] message`.

vLLM 0.33 puts the process name into the logging format; log collectors (ours and other
people's) match on the message text after it. The process name defaults to `EngineCore`;
the API server calls `set_process_name("APIServer")`. Output goes to stdout, as vLLM's does.
The level comes from `SERVOPS_LOGGING_LEVEL` (or vLLM's `VLLM_LOGGING_LEVEL`), default INFO.
"""

from __future__ import annotations

import logging
import os
import sys

LOG_FORMAT = "(%(process_name)s pid=%(process)d) %(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"
DATE_FORMAT = "%m-%d %H:%M:%S"
ROOT_LOGGER_NAME = "engine"

_process_name = "EngineCore"


class _ProcessNameFilter(logging.Filter):
    """Stamps every record with the current process name (read at emit time)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.process_name = _process_name
        return True


class _StdoutHandler(logging.StreamHandler):
    """Writes to whatever sys.stdout is at emit time (so redirection and capture work)."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, _value) -> None:
        pass


def set_process_name(name: str) -> None:
    """Name shown in the `(<name> pid=N)` prefix, e.g. `EngineCore` or `APIServer`."""
    global _process_name
    _process_name = name


def _configure_root() -> logging.Logger:
    root = logging.getLogger(ROOT_LOGGER_NAME)
    if not getattr(root, "_servops_configured", False):
        handler = _StdoutHandler()
        handler.setFormatter(logging.Formatter(LOG_FORMAT, datefmt=DATE_FORMAT))
        handler.addFilter(_ProcessNameFilter())
        root.addHandler(handler)
        level = os.environ.get("SERVOPS_LOGGING_LEVEL") or os.environ.get("VLLM_LOGGING_LEVEL") or "INFO"
        root.setLevel(level.upper())
        root.propagate = False
        root._servops_configured = True  # type: ignore[attr-defined]
    return root


def init_logger(name: str) -> logging.Logger:
    """A logger under the `engine` hierarchy with the vLLM format (pass `__name__`)."""
    _configure_root()
    if not name.startswith(ROOT_LOGGER_NAME):
        name = f"{ROOT_LOGGER_NAME}.{name}"
    return logging.getLogger(name)


def format_gib(num_bytes: float) -> float:
    """Bytes → GiB as vLLM 0.14+ prints them: `round(x, 2)` (so `24.0`, `3.18`)."""
    return round(num_bytes / (1 << 30), 2)
