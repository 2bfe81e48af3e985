"""The field names of vLLM's OpenAI-compatible requests (vllm_request_fields.json), for naming a misspelt one.

Why: a client's misspelt field (`stream_otpions`) is refused with "Extra inputs are not permitted" by releases
whose request models forbid unknown fields, and silently ignored by later ones; either way the person needs the
name vLLM knows. The JSON is generated from vLLM's source by scripts/extract_request_fields.py.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources

# How alike a refused name and a known one must be (difflib's ratio) to be called a misspelling of it:
# `stream_otpions` -> `stream_options` is 0.93, `max_token` -> `max_tokens` 0.95; unrelated names stay below.
CLOSE = 0.8


@cache
def request_fields() -> frozenset[str]:
    """Every field name vLLM's request models have, with the guided-decoding ones later releases removed."""
    document = json.loads(resources.files("advisor.catalog").joinpath("vllm_request_fields.json").read_text("utf-8"))
    return frozenset(document["fields"]) | frozenset(document["removed"])


def nearest_field(name: str) -> str | None:
    """The known field `name` misspells, None when it is one or is like none."""
    fields = request_fields()
    if name in fields:
        return None
    close = difflib.get_close_matches(name, sorted(fields), n=1, cutoff=CLOSE)
    return close[0] if close else None
