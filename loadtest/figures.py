"""The figures a measurement document may hold, as pydantic types, declared once.

Why: a ramp, a host profile or a history line is read back from a file a person may have edited,
truncated or fuzzed, and what servops computes from it (floors, predictions, reports) would carry
a NaN, an infinity, a negative latency or a zero window into every figure after it ("the decode
floor is -15.31 ms"). Typing the fields with these makes the model itself refuse such a document
at the boundary, in one line naming the field, while servops's own measurements, which are never
negative or infinite, pass unchanged. advisor uses the same types for its own documents.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# A count beyond any real one (requests, tokens, cores); JSON integers beyond it are refused.
MAX_COUNT = 2**53

Finite = Annotated[float, Field(allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
PositiveCount = Annotated[int, Field(ge=1, le=MAX_COUNT)]
