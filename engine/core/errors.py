"""Errors of the engine that a user can act on.

Both classes carry `user_facing = True`: the CLI (and the HTTP server) print the one-line
message and exit 2 / answer 400 instead of showing a traceback. They subclass ValueError
because vLLM raises ValueError for the same conditions, so code written against vLLM
catches them too.
"""

from __future__ import annotations


class EngineStartupError(ValueError):
    """The engine cannot start with this configuration (bad flag, model, or memory budget)."""

    user_facing = True


class RequestValidationError(ValueError):
    """One request is invalid (too long, bad sampling parameters); the engine keeps running.

    `parameter` and `value`, when set, name the offending request field as vLLM's
    VLLMValidationError does; the server then answers with vLLM's
    `… (parameter=NAME, value=VALUE)` text and `"param": NAME`.
    """

    user_facing = True

    def __init__(self, message: str, parameter: str | None = None, value: object = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value
