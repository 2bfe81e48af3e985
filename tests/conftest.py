"""What every test of the suite shares."""

from __future__ import annotations

import pytest

from advisor.perf import memo


@pytest.fixture(autouse=True)
def _no_kept_answers_between_tests() -> None:
    """The performance model keeps its answers for the process (advisor/perf/memo.py); a test that
    patches a constant must not hand a later test an answer made under the patch, so every test
    starts with none. Within a test, repeated questions are still answered once."""
    memo.forget_all()
