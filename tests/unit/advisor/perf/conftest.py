"""Fixtures the performance-model tests share."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.unit.advisor.perf.recorded_queue import FIXTURES, triage_window


class WindowTriage(NamedTuple):
    document: dict  # the triage's --json
    window: Path  # the window it saved as a ramp (--save-window)
    printed: str  # what it printed


@pytest.fixture(scope="session")
def preempting_triage(tmp_path_factory: pytest.TempPathFactory) -> WindowTriage:
    """`servops triage` of the recorded preempting vLLM's log and 8 s window with `--save-window`, once.

    Why shared: calibrating on the window and replaying every searched cap and KV size takes about
    17 s here, and three test modules read the same result."""
    folder = tmp_path_factory.mktemp("preempting")
    window = folder / "window.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        document = triage_window(
            FIXTURES / "vllm_cpu" / "preempting", folder / "triage.json", "--save-window", str(window)
        )
    return WindowTriage(document, window, printed.getvalue())
