"""Start and stop an engine as a process, the way an operator starts `vllm serve`.

Why a process and not an import: the advisor must treat the bundled engine exactly like
vLLM (DESIGN.md: across HTTP, never across imports), so demo and tune launch
`python -m engine serve …` (or a `vllm serve …` command where vLLM is installed), wait
for `/health` with a bounded deadline, read its log file, and always stop it, even on
Ctrl-C or an exception, by its own process group.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from advisor.collect.server_args import ServeCommand, parse_command
from advisor.errors import UserError
from advisor.servers.vllm import is_vllm_command, offline_env, resolve_vllm_words

__all__ = [
    "EngineProcess",
    "EngineStartError",
    "bundled_command",
    "display_command",
    "free_port",
    "launch_env",
    "launch_words",
    "startup_note",
]

log = logging.getLogger("servops.launch")
Progress = Callable[[str], None]

# What the bundled engine is called in commands shown to users and given to triage.
BUNDLED_PROGRAM = ("python", "-m", "engine", "serve")
# Flags the launcher owns: they change per run and are not configuration worth diffing.
_LAUNCHER_FLAGS = ("--host", "--port")
# Said while waiting for a compiled vLLM: its torch.compile start is silent for long stretches,
# and the CPU build recompiles at every start (docs/vllm.md).
VLLM_COMPILE_NOTE = "vLLM compiles the model at start, about a minute or two"


class EngineStartError(UserError):
    """The engine exited or never became healthy; the message carries its last log line."""


def bundled_command(flags: Sequence[str], model: str | None = None) -> ServeCommand:
    """The bundled engine's command (`python -m engine serve [MODEL] FLAGS…`) as a ServeCommand."""
    words = [*BUNDLED_PROGRAM, *([model] if model else []), *flags]
    return parse_command(shlex.join(words), origin="server-args")


def launch_words(command: ServeCommand) -> list[str]:
    """argv for a ServeCommand (its env assignments left out: `launch_env` carries them).

    The bundled engine runs under this interpreter; `vllm serve` runs through the vLLM
    interpreter servops knows (advisor.servers.vllm) when no `vllm` program is on PATH, since
    the CPU wheel's `vllm` script cannot start; anything else runs as given.
    """
    words = shlex.split(ServeCommand(program=command.program, model=command.model, flags=command.flags).render())
    if tuple(words[:4]) == BUNDLED_PROGRAM:
        return [sys.executable, *words[1:]]
    return resolve_vllm_words(words)


def launch_env(command: ServeCommand) -> dict[str, str]:
    """The environment a command runs in: ours, its own `NAME=value` assignments, and for a
    vLLM command the offline switches (advisor.servers.vllm.VLLM_OFFLINE_ENV)."""
    extra = offline_env() if is_vllm_command(command) else {}
    return {**os.environ, "PYTHONUNBUFFERED": "1", **extra, **command.env}


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the engine binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class EngineProcess:
    """One engine process on 127.0.0.1; a context manager that always stops what it started."""

    def __init__(
        self,
        command: ServeCommand,
        log_path: Path,
        *,
        host: str = "127.0.0.1",
        startup_timeout_s: float = 600.0,
        progress: Progress = lambda line: None,
    ) -> None:
        self.command = command
        self.log_path = log_path
        self.host = host
        self.port = free_port(host)
        self.startup_timeout_s = startup_timeout_s
        self.progress = progress
        self.startup_note = startup_note(command)
        self._proc: subprocess.Popen | None = None
        self._log_file = None
        self.pid: int | None = None  # of the last process started (kept after stop, for checks)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> EngineProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Launch and wait until /health answers 200, or raise EngineStartError (after stopping it)."""
        argv = [*launch_words(self.command), "--host", self.host, "--port", str(self.port)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = open(self.log_path, "w", encoding="utf-8")
        log.debug("launching %s", shlex.join(argv))
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=launch_env(self.command),
            )
        except OSError as exc:
            self._close_log()
            raise EngineStartError(f"cannot run {argv[0]!r} ({exc.strerror}); check the server command") from None
        self.pid = self._proc.pid
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def stop(self, grace_s: float = 20.0) -> None:
        """SIGTERM the engine's process group, then SIGKILL after `grace_s`; idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait(timeout=30)
        self._close_log()

    def log_tail(self, lines: int = 3) -> list[str]:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        # Skip traceback underline rows (^^^^ / ~~~~): they say nothing on one line.
        return [line.strip() for line in text.strip().splitlines() if line.strip() and line.strip().strip("^~ ")][
            -lines:
        ]

    def _wait_healthy(self) -> None:
        started = time.monotonic()
        deadline = started + self.startup_timeout_s
        next_note = started + 15.0
        while time.monotonic() < deadline:
            assert self._proc is not None
            code = self._proc.poll()
            if code is not None:
                tail = " / ".join(self.log_tail(2)) or "no output"
                raise EngineStartError(f"engine exited with code {code} during startup ({tail}); see {self.log_path}")
            if _healthy(self.base_url):
                self.progress(f"engine ready at {self.base_url} after {time.monotonic() - started:.0f} s")
                return
            if time.monotonic() >= next_note:
                last = self.log_tail(1)
                message = last[0].split("] ", 1)[-1][:120] if last else "no log yet"
                note = f"; {self.startup_note}" if self.startup_note else ""
                self.progress(f"waiting for engine ({time.monotonic() - started:.0f} s{note}): {message}")
                next_note += 15.0
            time.sleep(0.5)
        raise EngineStartError(
            f"engine not healthy after {self.startup_timeout_s:.0f} s; see {self.log_path} or raise --startup-timeout"
        )

    def _signal(self, proc: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)  # its own session: reaches children, never our process
        except (ProcessLookupError, PermissionError):
            pass

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


def startup_note(command: ServeCommand) -> str | None:
    """What the wait is for, said in each waiting line: a vLLM start without --enforce-eager compiles
    for a minute or two, which looks like a hang without it."""
    if is_vllm_command(command) and "--enforce-eager" not in command.flags:
        return VLLM_COMPILE_NOTE
    return None


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def display_command(command: ServeCommand) -> str:
    """The command as shown in reports and given to triage (launcher-owned flags left out)."""
    flags = {k: v for k, v in command.flags.items() if k not in _LAUNCHER_FLAGS}
    return ServeCommand(env=dict(command.env), program=list(command.program), model=command.model, flags=flags).render()
