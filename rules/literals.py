"""Values people and logs write as Python or JSON literals: a mapping printed by `repr`, a flag's JSON.

Why one module: a paste holds text that looks like a literal and is not one a program can build. Python parses
`{[1, 1]}` (torch's `CUDABoolType{[1, 1]}`) as a set of lists and then raises TypeError building it; JSON nested
fifty thousand deep raises RecursionError. Every reader that turns such text into a value failed the same way until
each caught it (vllm-omni#5348 made two of them raise), so the reading and what it survives are written once here.
"""

from __future__ import annotations

import ast
import json
from typing import Any

# What building a literal from pasted text can raise besides a parse error: a set of lists or a dict keyed by one
# (TypeError), a literal too deep or too large for the interpreter
_UNBUILDABLE = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def python_literal(text: str) -> Any | None:
    """The value of a Python literal (`{'model': 'm', 'seed': 0}`), or None when the text is not one it can build."""
    try:
        return ast.literal_eval(text)
    except _UNBUILDABLE:
        return None


def mapping_of(text: str) -> dict[str, Any] | None:
    """A JSON object, or a Python dict's repr (what `openai` prints in `Error code: 404 - {...}`, what vLLM's
    `non-default args` line prints); None for anything else."""
    try:
        value = json.loads(text)
    except _UNBUILDABLE:
        value = python_literal(text)
    return value if isinstance(value, dict) else None
