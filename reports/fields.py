"""Tolerant field access for result documents written by other parts of servops.

Why: a report file may be years old, or written by a newer servops with extra fields.
Rendering must show what is there and leave gaps for what is not, instead of failing on
a renamed optional key. Required structure (a document's "kind") is checked in render.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["pick", "number"]


def pick(mapping: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """The value of the first key present and not None."""
    for key in keys:
        value = mapping.get(key)
        if value is not None:
            return value
    return default


def number(value: Any) -> float | None:
    """A finite float, or None for missing, non-numeric, NaN or infinite values."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):  # an integer beyond float range is no figure either
        return None
    return result if math.isfinite(result) else None
