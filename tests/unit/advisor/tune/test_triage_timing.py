"""The tune loop's triage under load is timed by the ramp plan's clock.

Why these tests: a step's progress line comes only after its last request has returned, so a triage timed
from it scraped a server whose last step had already ended on a busy CI machine (the demo at 6d7b6be). The
trigger now waits for the last step's measured part and fits both scrapes inside it."""

from __future__ import annotations

import time

import pytest

from advisor.tune import measure
from advisor.tune.measure import RampSettings, _TriageTrigger
from loadtest.plan import RampPlan


class _Recorder:
    """Stands in for `run_triage`: notes when it was called and the scrape gap it was asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float | None]] = []

    def __call__(self, request):
        self.calls.append((time.time(), request.metrics_interval_s))
        raise RuntimeError("recorded")  # the trigger keeps an error as the triage's outcome


def _plan(start_ts: float, step_s: float, warmup_s: float) -> RampPlan:
    return RampPlan(
        mode="concurrency",
        levels=[1.0, 4.0],
        step_s=step_s,
        warmup_s=warmup_s,
        cooldown_s=1.0,
        endpoint="http://127.0.0.1:9",
        model="m",
        start_ts=start_ts,
    )


def _trigger(step_s: float, triage_interval_s: float) -> tuple[_TriageTrigger, dict, list[str]]:
    settings = RampSettings(concurrency=[1, 4], step_s=step_s, warmup_s=0.2, triage_interval_s=triage_interval_s)
    box: dict = {}
    lines: list[str] = []
    trigger = _TriageTrigger(
        "http://127.0.0.1:9", measure.Path("engine.log"), "vllm serve m", settings, box, lines.append, "before"
    )
    return trigger, box, lines


@pytest.fixture
def recorder(monkeypatch) -> _Recorder:
    recorder = _Recorder()
    monkeypatch.setattr(measure, "run_triage", recorder)
    return recorder


def test_triage_waits_for_the_last_steps_measured_part(recorder):
    trigger, box, lines = _trigger(step_s=1.5, triage_interval_s=0.5)
    plan = _plan(time.time() + 0.3, step_s=1.5, warmup_s=0.2)
    trigger.schedule(plan)
    time.sleep(max(0.0, plan.step_end(1) - time.time()))  # the ramp runs its two steps
    trigger.finish()
    ((called_at, gap_s),) = recorder.calls
    begin, end = plan.window(1)
    assert begin <= called_at < end
    assert gap_s == 0.5  # room enough: the configured gap
    assert box["error"] == "RuntimeError: recorded" and "during the last step" in lines[0]


def test_a_late_start_shortens_the_gap_so_the_second_scrape_stays_in_the_step(recorder):
    trigger, _, _ = _trigger(step_s=9.0, triage_interval_s=3.0)
    # the last step's measured part began 6.5 s ago and ends in 2.5 s: a 3 s gap would end past it
    plan = _plan(time.time() - 15.5, step_s=9.0, warmup_s=0.2)
    trigger.schedule(plan)
    trigger.finish()
    ((called_at, gap_s),) = recorder.calls
    _, end = plan.window(1)
    assert gap_s is not None and 1.0 <= gap_s < 3.0
    assert called_at + gap_s <= end - measure._SCRAPE_ROOM_S + 0.1


def test_a_ramp_that_stops_early_is_triaged_at_once_not_at_a_step_that_never_comes(recorder):
    trigger, box, _ = _trigger(step_s=60.0, triage_interval_s=4.0)
    plan = _plan(time.time(), step_s=60.0, warmup_s=5.0)  # the last step would begin in 65 s
    trigger.schedule(plan)
    started = time.time()
    trigger.finish()
    ((called_at, gap_s),) = recorder.calls
    assert called_at - started < 5.0 and gap_s == 4.0
    assert "error" in box
