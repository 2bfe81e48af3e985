"""The live tier's overrun reports: a CLI child that outlives its bound says where it was stuck,
and the machine snapshot names memory, pressure, CPUs and the children it found.

These guard the failure messages of the vLLM tier, which only a slow CI box ever shows."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import cli_child, machine_state


def test_a_child_past_its_bound_reports_its_python_stack_and_the_machine() -> None:
    # A server that accepts the connection and never answers: triage's first scrape waits on it.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(TimeoutError) as raised:
            # triage would give up on its own after --timeout; the child's bound comes first
            cli_child.run("triage", "--endpoint", endpoint, "--timeout", "300", timeout_s=20)
    message = str(raised.value)
    assert message.startswith("servops triage still running after 20 s; it printed its stack on SIGABRT")
    assert "in scrape" in message  # the frame it was stuck in, from faulthandler
    assert "memory: MemTotal" in message and "children of the test process:" in message


def test_a_child_that_ends_hands_back_its_code_and_output() -> None:
    done = cli_child.run("rules", "list", timeout_s=60)
    assert done.returncode == 0 and "OP-1.1" in done.stdout
    assert isinstance(done, subprocess.CompletedProcess)


def test_snapshot_lists_a_running_child_and_where_a_thread_waits() -> None:
    release = threading.Event()
    waiter = threading.Thread(target=release.wait, name="waiter", daemon=True)
    waiter.start()
    child = subprocess.Popen(["sleep", "30"])
    cmdline = Path(f"/proc/{child.pid}/cmdline")
    deadline = time.monotonic() + 10
    while b"sleep" not in cmdline.read_bytes() and time.monotonic() < deadline:  # until it has exec'd
        time.sleep(0.01)
    try:
        text = machine_state.snapshot(waiter)
    finally:
        child.kill()
        child.wait(10)
        release.set()
    assert f"pid {child.pid} sleeping" in text and "sleep 30" in text
    assert "where 'waiter' is now:" in text and ", in wait" in text
    assert "pressure (some/full avg10 %)" in text and "CPUs" in text


def test_close_ends_a_child_still_running_and_removes_its_output() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        child = cli_child.start("triage", "--endpoint", f"http://127.0.0.1:{silent.getsockname()[1]}")
        child.close()
        child.close()  # idempotent
    assert child.process.returncode is not None and not child.folder.exists()
