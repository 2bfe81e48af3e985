"""Starting and stopping engine processes: bounded waits, one-line errors, nothing left running."""

from __future__ import annotations

import os
import sys

import pytest

from advisor.collect.server_args import parse_command
from advisor.servers.process import EngineProcess, EngineStartError, bundled_command, display_command, launch_words


def test_bundled_command_runs_under_this_interpreter_and_shows_as_python_m_engine():
    command = bundled_command(["--max-num-seqs", "1"], "/models/tiny")
    assert launch_words(command)[:4] == [sys.executable, "-m", "engine", "serve"]
    assert display_command(command) == "python -m engine serve /models/tiny --max-num-seqs 1"


def test_display_command_leaves_out_host_and_port():
    command = parse_command("vllm serve m --port 8000 --host 0.0.0.0 --max-num-seqs 4")
    assert display_command(command) == "vllm serve m --max-num-seqs 4"


def test_engine_that_exits_during_startup_is_one_line_error_with_its_last_log_line(tmp_path):
    command = parse_command("sh -c 'echo boom: no such model; exit 3' serve")
    engine = EngineProcess(command, tmp_path / "engine.log", startup_timeout_s=30)
    with pytest.raises(EngineStartError) as info:
        engine.start()
    message = str(info.value)
    assert "code 3" in message and "boom: no such model" in message and "\n" not in message
    assert info.value.user_facing is True


def test_engine_that_never_gets_healthy_is_stopped_after_the_deadline(tmp_path):
    command = parse_command("sh -c 'exec sleep 60' serve")
    engine = EngineProcess(command, tmp_path / "engine.log", startup_timeout_s=1.5)
    with pytest.raises(EngineStartError, match="not healthy after 2 s"):
        engine.start()
    assert engine.pid is not None
    with pytest.raises(ProcessLookupError):  # stopped and reaped: the pid is gone
        os.kill(engine.pid, 0)
