"""Errors a user can act on when choosing or running an attention backend.

servops_kernels imports nothing else of the project, so it carries its own error class; it
follows the house contract (`user_facing = True`, one line naming the input and the fix)
so the CLI and the engine print it without a traceback.
"""

from __future__ import annotations


class AttentionBackendError(ValueError):
    """The requested attention backend cannot run here (bad name, no Triton, no interpreter)."""

    user_facing = True
