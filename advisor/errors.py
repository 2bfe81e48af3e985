"""One error style for every servops command.

A `UserError` is a problem the user can fix: a bad flag, an unreachable endpoint, a
malformed file, an impossible configuration. The CLI prints its message as one line
(`servops <command>: error: <message>`) and exits with code 2, never a traceback.
Messages name the input and the fix, e.g. "--gpu 'H1000': unknown GPU; choose one of
H100-SXM-80GB, … or pass --gpu-memory-gib".

Other packages keep their own error classes (loadtest and engine may not import advisor);
the CLI treats any exception that carries `user_facing = True` the same way, so
`loadtest.errors.LoadTestError` and friends only need that class attribute.
"""

from __future__ import annotations

EXIT_USAGE = 2
# `servops triage --fail-on SEVERITY` found a finding at or above it (a CI gate's "failed").
EXIT_FINDINGS = 1
# A command stopped by Ctrl-C or SIGTERM (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """An input problem with a one-line, actionable message."""

    user_facing = True


def is_user_facing(exc: BaseException) -> bool:
    """True for exceptions whose message is meant for the user as it is."""
    return bool(getattr(exc, "user_facing", False))
