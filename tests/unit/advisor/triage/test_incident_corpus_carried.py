"""Every real incident keeps its answer however its log was carried (benchmarks/carried_corpus.py).

On call the paste comes through kubectl, a node's containerd files, the journal, compose, stern or a log
shipper's JSON; the carrier may not change what triage says. Each carrier re-writes every physical line of
every case, and each case must keep the top finding (rule and title) its bare paste gets, right or wrong.
"""

from __future__ import annotations

import pytest

from benchmarks.carried_corpus import CARRIERS, answer, carried
from benchmarks.incident_corpus import load_cases

CASES = load_cases()


@pytest.fixture(scope="module")
def bare_answers() -> dict[str, tuple[str, str] | None]:
    return {case.id: answer(case) for case in CASES}


@pytest.mark.parametrize("name", list(CARRIERS))
def test_a_carrier_changes_no_cases_answer(name: str, bare_answers: dict) -> None:
    changed = {
        case.id: (bare_answers[case.id], got)
        for case in CASES
        if (got := answer(case, carried(case, CARRIERS[name]))) != bare_answers[case.id]
    }
    assert not changed, changed
