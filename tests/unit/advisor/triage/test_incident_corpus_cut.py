"""Every real incident, cut the ways people cut a paste, is still answered (benchmarks/cut_pastes.py).

A cut may take the cause away, so the answer is not judged; what may never happen is an exception out of triage or
non-empty text refused. Each case is cut twice per kind, at places drawn from a seed of its own, so a case's cuts
do not depend on which other cases exist.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.cut_pastes import CUTS, cut, outcome
from benchmarks.incident_corpus import load_cases

CASES = load_cases()
CUTS_PER_KIND = 2


@pytest.mark.parametrize("kind", list(CUTS))
def test_a_cut_paste_is_answered_without_an_exception_or_a_refusal(kind: str) -> None:
    wrong = {}
    for case in CASES:
        rng = random.Random(f"{case.id}/{kind}")
        for _ in range(CUTS_PER_KIND):
            text = cut(case.quoted, kind, rng)
            if text.strip() and (what := outcome(text, case.server_args)) is not None:
                wrong[case.id] = what
    assert not wrong, wrong
