"""The one error a load-test user can fix themselves.

loadtest may not import advisor, so it keeps its own class; the CLI treats any exception
with `user_facing = True` as a one-line error with exit code 2 (see advisor/errors.py).
"""

from __future__ import annotations


class LoadTestError(Exception):
    """A bad flag, an unreachable endpoint, an unreadable prompt file: one actionable line."""

    user_facing = True


# `python -m loadtest.locust_main worker` exits with this when no master answered in time.
EXIT_NO_MASTER = 3


class RampInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a ramp, carrying what was measured until then (a RampResult with
    the finished steps and the partial one) so `servops ramp` can still write it. A KeyboardInterrupt,
    so every other caller (tune, demo) stops exactly as it did on a plain Ctrl-C."""

    def __init__(self, result: object) -> None:
        super().__init__("ramp interrupted")
        self.result = result
