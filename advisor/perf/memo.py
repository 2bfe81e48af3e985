"""The performance model's two expensive answers kept for the process, keyed by their inputs.

Why: a calibration and a predicted ramp are pure functions of pydantic inputs (the replay has no
clock, no randomness and no state outside its arguments), and one process asks for the same one
several times: triage calibrates on its window for the findings' forecasts and again for the
search over a flag's values; `tune` predicts the change it then measures; a `servops predict`
run in the same process as the triage that printed it replays exactly what triage replayed.
Profiled on the suite's slowest file, 58 % of the replay time went into such repeats. What comes
back is a deep copy, so a caller that edits its result cannot change the next caller's.

The key is a digest of every argument's JSON (pydantic's exact float text), so any difference
in the inputs, however small, is a different question. Bounded: the last MAX_KEPT answers of each
function (a predicted ramp is a few kB, a calibration less). Module constants are not in the key:
they do not change in a running servops, and a test that patches one calls `forget_all()` (the
suite forgets before every test, so no answer outlives the test that computed it).
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

MAX_KEPT = 256

Result = TypeVar("Result", bound=BaseModel)

_FORGETTERS: list[Callable[[], None]] = []


def forget_all() -> None:
    """Drop every kept answer (after changing a constant the answers depend on)."""
    for forget in _FORGETTERS:
        forget()


def kept(function: Callable[..., Result]) -> Callable[..., Result]:
    """`function` answered from the last MAX_KEPT answers when its arguments are the same."""
    answers: OrderedDict[str, Result] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(function)
    def answer(*args: Any, **kwargs: Any) -> Result:
        key = _key(args, kwargs)
        with lock:
            if key in answers:
                answers.move_to_end(key)
                return answers[key].model_copy(deep=True)
        result = function(*args, **kwargs)
        with lock:
            answers[key] = result.model_copy(deep=True)
            while len(answers) > MAX_KEPT:
                answers.popitem(last=False)
        return result

    answer.forget = answers.clear  # type: ignore[attr-defined]  # tests compare a fresh computation
    _FORGETTERS.append(answers.clear)
    return answer


def _key(args: tuple, kwargs: dict) -> str:
    digest = hashlib.sha256()
    parts = [_text(value) for value in args] + [f"{name}={_text(value)}" for name, value in sorted(kwargs.items())]
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def _text(value: Any) -> str:
    if isinstance(value, BaseModel):
        return type(value).__qualname__ + value.model_dump_json()
    if isinstance(value, (str, int, float, bool, type(None))):
        return repr(value)
    raise TypeError(f"memo key: {type(value).__name__} is not a pydantic model or a plain value")
