"""The performance model's kept answers (advisor/perf/memo.py): the same question gives the answer a
fresh computation gives, a caller cannot change another's answer, and any difference in the inputs
is a different question."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from advisor.perf import memo
from advisor.perf.forecast import predict_ramp
from advisor.perf.measured import measured_ramp
from advisor.perf.workload import workload_from_ramp
from tests.unit.advisor.perf.test_calibrate_and_predict import CONFIG, TRUE_COST, _limits, _placeholder


class Answer(BaseModel):
    values: list[float]


def _counted():
    calls: list[float] = []

    @memo.kept
    def square(x: float, scale: Answer | None = None) -> Answer:
        calls.append(x)
        return Answer(values=[x * x * (scale.values[0] if scale else 1.0)])

    return square, calls


def test_the_same_question_is_computed_once_and_answered_with_a_copy():
    square, calls = _counted()
    first = square(3.0)
    first.values.append(99.0)  # a caller editing its answer
    assert square(3.0).values == [9.0] and calls == [3.0]


def test_any_difference_in_the_inputs_is_another_question():
    square, calls = _counted()
    square(3.0)
    square(3.0 + 1e-12)
    square(3.0, scale=Answer(values=[2.0]))
    square(3.0, scale=Answer(values=[2.0 + 1e-12]))
    assert len(calls) == 4


def test_only_the_last_answers_are_kept(monkeypatch):
    monkeypatch.setattr(memo, "MAX_KEPT", 2)
    square, calls = _counted()
    for x in (1.0, 2.0, 3.0, 1.0):
        square(x)
    assert calls == [1.0, 2.0, 3.0, 1.0]


def test_an_argument_without_an_exact_text_is_refused_not_guessed():
    square, _ = _counted()
    with pytest.raises(TypeError, match="not a pydantic model"):
        square(object())


def test_a_kept_prediction_is_what_a_fresh_computation_gives():
    """The replay has no state outside its arguments: forgetting and computing again gives the same."""
    ramp = measured_ramp({"kind": "ramp", "config": CONFIG, "steps": [_placeholder(k) for k in (0, 1)]})
    workload = workload_from_ramp(CONFIG, [])
    kept_prediction = predict_ramp(ramp, _limits(2), TRUE_COST, workload, with_bands=False)
    predict_ramp.forget()
    assert predict_ramp(ramp, _limits(2), TRUE_COST, workload, with_bands=False) == kept_prediction
