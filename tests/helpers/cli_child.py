"""The real CLI (`python -m advisor …`) as a child process whose every wait is bounded.

Why not `subprocess.run(timeout=…)`: after its timeout it kills the child and then waits for it
without a bound, and reads pipes until every holder closes them. Twice on the CI box the live
triages beside a 32-stream vLLM load outlived their 240 s bound although each `run` had a 110 s
timeout, which only an unbounded wait explains. Here output goes to files (no pipe to drain), every
wait has a deadline, and an overrun first sends SIGABRT: `-X faulthandler` makes the child print
each thread's Python stack, which the failure carries with the machine's state (machine_state).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import machine_state

# How long a child may take to print its stack after SIGABRT, and to be reaped after SIGKILL.
SIGNAL_GRACE_S = 10.0


@dataclass
class CliChild:
    """One started `servops` child: its arguments, process and output files."""

    args: tuple[str, ...]
    process: subprocess.Popen
    folder: Path
    started: float = field(default_factory=time.monotonic)

    def finish(self, timeout_s: float) -> subprocess.CompletedProcess:
        """Its exit code and output once it ends; a TimeoutError with its stack and the machine's
        state when it outlives timeout_s (counted from its start)."""
        remaining = max(0.0, timeout_s - (time.monotonic() - self.started))
        try:
            code = self.process.wait(remaining)
        except subprocess.TimeoutExpired:
            raise TimeoutError(self._overrun(timeout_s)) from None
        else:
            return subprocess.CompletedProcess(self.process.args, code, self._read("stdout"), self._read("stderr"))
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def close(self) -> None:
        """Kill it if it still runs (a sibling failed first) and remove its output; idempotent."""
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(SIGNAL_GRACE_S)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _overrun(self, timeout_s: float) -> str:
        state = machine_state.snapshot()  # before the signals change it
        where_time_went = machine_state.starvation(self.process.pid)
        self.process.send_signal(signal.SIGABRT)
        fate = "printed its stack on SIGABRT"
        try:
            self.process.wait(SIGNAL_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            fate = "did not answer SIGABRT; killed"
            try:
                self.process.wait(SIGNAL_GRACE_S)
            except subprocess.TimeoutExpired:
                fate = "could not be reaped even after SIGKILL (stuck in the kernel)"
        # The verdict comes last: a CI log is often read from its tail.
        return (
            f"servops {self.args[0]} still running after {timeout_s:g} s; it {fate}; its stderr:\n"
            f"{self._read('stderr')[-3000:]}\n{state}\nthe overrunning child, {where_time_went}"
        )

    def _read(self, name: str) -> str:
        return (self.folder / name).read_text(errors="replace")


def start(*args: str) -> CliChild:
    """`python -X faulthandler -m advisor ARGS`, started now, output into a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="servops-child-"))
    argv = [sys.executable, "-X", "faulthandler", "-m", "advisor", *args]
    with open(folder / "stdout", "w") as stdout, open(folder / "stderr", "w") as stderr:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
    return CliChild(args=args, process=process, folder=folder)


def run(*args: str, timeout_s: float) -> subprocess.CompletedProcess:
    """Start and finish one child."""
    return start(*args).finish(timeout_s)
