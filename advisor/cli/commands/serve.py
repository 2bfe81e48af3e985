"""`servops serve [MODEL] [vLLM flags]`: run the bundled engine, as `vllm serve` would be run.

Why a subprocess: the advisor may not import engine internals (it talks to engines over
HTTP and logs), so this command starts `python -m engine serve …` with the arguments passed
through unchanged, forwards SIGTERM/SIGINT to it (so graceful shutdown behaves as if the
engine had been started directly) and returns its exit code. Flags are the engine's; see
`servops serve --help`, which the engine itself prints.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

ENGINE_COMMAND = (sys.executable, "-m", "engine", "serve")
PROG_ENV = "SERVOPS_PROG"  # the engine names itself `servops serve` in its messages


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "serve",
        help="serve the bundled paged-attention engine (OpenAI API, vLLM flags, metrics and logs)",
        description=(
            "Serve a model with the bundled engine over vLLM's OpenAI-compatible API. "
            "Every argument is passed to `python -m engine serve`; `servops serve --help` "
            "lists the engine's flags (vLLM's names)."
        ),
        add_help=False,  # --help goes to the engine, which owns the flags
        prefix_chars="\x00",  # no option of our own: argparse passes every '-…' argument through
    )
    parser.add_argument(
        "engine_args",
        nargs=argparse.REMAINDER,
        help="MODEL and vLLM-style flags, passed to `python -m engine serve` unchanged",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    return run_engine(list(args.engine_args))


def run_engine(engine_args: list[str]) -> int:
    """Start the engine, forward termination signals to it, return its exit code."""
    env = dict(os.environ)
    env[PROG_ENV] = "servops serve"
    child = subprocess.Popen([*ENGINE_COMMAND, *engine_args], env=env)

    def forward(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        return child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if child.poll() is None:  # we are leaving for another reason: do not orphan the engine
            child.terminate()
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
