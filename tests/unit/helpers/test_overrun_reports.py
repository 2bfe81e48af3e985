"""The live tier's overrun reports: a CLI child that outlives its bound says where it was stuck,
and the machine snapshot names memory, pressure, CPUs and the children it found.

These guard the failure messages of the vLLM tier, which only a slow CI box ever shows."""

from __future__ import annotations

import os
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
            cli_child.run("triage", "--endpoint", endpoint, "--timeout", "300", timeout_s=12)
    message = str(raised.value)
    assert message.startswith("servops triage still running after 12 s; it printed its stack on SIGABRT")
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
    stat = Path(f"/proc/{child.pid}/stat")
    deadline = time.monotonic() + 10
    # until it sleeps in its nanosleep: right after exec its cmdline already reads "sleep 30" while
    # the loader still runs it (state R), which made this test fail about one run in ten
    while stat.read_text().rsplit(")", 1)[-1].split()[0] != "S" and time.monotonic() < deadline:
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


def _fake_proc(root: Path, pid: int, *, age_s: float, cpu_s: float, waited_s: float | None) -> None:
    """A /proc with one process `age_s` old that used `cpu_s` and waited `waited_s` for a CPU."""
    ticks = os.sysconf("SC_CLK_TCK")
    (root / "uptime").write_text("1000.00 1900.00\n")
    task = root / str(pid) / "task" / str(pid)
    task.mkdir(parents=True)
    # stat after "(comm)": state, then fields 4..22; utime is index 11, nice 16, starttime 19
    fields = ["R", *["0"] * 19]
    fields[11] = str(round(cpu_s * ticks))
    fields[16] = "0"
    fields[19] = str(round((1000.0 - age_s) * ticks))
    (root / str(pid) / "stat").write_text(f"{pid} (python) {' '.join(fields)}\n")
    if waited_s is not None:
        (task / "schedstat").write_text(f"{round(cpu_s * 1e9)} {round(waited_s * 1e9)} 42\n")


@pytest.mark.parametrize(
    ("waited_s", "verdict"),
    [
        (170.0, "mostly waiting for a CPU: starved"),
        (0.2, "mostly asleep or blocked"),
        (None, "no schedstats"),
    ],
)
def test_starvation_tells_a_process_kept_from_the_cpu_from_one_asleep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, waited_s: float | None, verdict: str
) -> None:
    # CI's overrun: a triage child 180 s old with 0.3 CPU seconds, in state R when looked at
    _fake_proc(tmp_path, 4070, age_s=180.0, cpu_s=0.3, waited_s=waited_s)
    monkeypatch.setattr(machine_state, "_PROC", tmp_path)
    line = machine_state.starvation(4070)
    assert verdict in line and "pid 4070" in line and "180 s" in line
    if waited_s is not None:
        assert f"waiting for a CPU {waited_s:.1f} s" in line


def test_this_process_reports_its_cpu_wait_priority_and_threads() -> None:
    waited = machine_state.cpu_wait_s(os.getpid())
    assert waited is None or waited >= 0.0  # None only on a kernel without schedstats
    assert machine_state.priority(os.getpid()).startswith(f"nice {os.getpriority(os.PRIO_PROCESS, 0)}")
    nices = machine_state.thread_nices(os.getpid())
    assert threading.get_native_id() in nices
    assert os.getpid() in machine_state.process_tree(os.getpid())
