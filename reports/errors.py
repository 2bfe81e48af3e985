"""The one error reports raises: a result document it cannot render.

reports may not import advisor, so it carries its own class; the CLI treats any exception
with `user_facing = True` as a one-line user error (exit 2), as for advisor.errors.UserError.
"""

from __future__ import annotations


class ReportInputError(ValueError):
    """A result document that is not a servops result (wrong kind, not an object)."""

    user_facing = True
