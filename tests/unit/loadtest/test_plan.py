"""The ramp plan's absolute schedule: arrivals, sharing among processes, windows."""

import pytest

from loadtest.plan import RampPlan
from loadtest.workload import WorkloadSpec


def _plan(**kw) -> RampPlan:
    base = dict(
        endpoint="http://127.0.0.1:1", model="m", mode="rate", levels=[4, 10], step_s=5.0, warmup_s=1.0, start_ts=1000.0
    )
    base.update(kw)
    return RampPlan(**base)


def test_constant_arrivals_are_evenly_spaced_and_fill_the_step():
    offsets = _plan().arrival_offsets(1)
    assert len(offsets) == 50
    assert offsets[:3] == [0.0, 0.1, 0.2]


def test_poisson_arrivals_are_reproducible_and_near_the_rate():
    plan = _plan(arrival="poisson", levels=[50], step_s=20.0)
    first, again = plan.arrival_offsets(0), plan.arrival_offsets(0)
    assert first == again
    assert 850 < len(first) < 1150
    other_seed = _plan(arrival="poisson", levels=[50], step_s=20.0, workload=WorkloadSpec(seed=1))
    assert other_seed.arrival_offsets(0) != first


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_every_arrival_goes_to_exactly_one_process(workers):
    plan = _plan(workers=workers)
    shares = [plan.my_arrivals(1, w) for w in range(workers)]
    indices = sorted(i for share in shares for i, _ in share)
    assert indices == list(range(50))
    assert all(1005.0 <= ts < 1010.0 for share in shares for _, ts in share)


def test_concurrency_shares_sum_to_the_level():
    plan = _plan(mode="concurrency", levels=[1, 5, 8], workers=3)
    for step, level in enumerate(plan.levels):
        assert sum(plan.my_concurrency(step, w) for w in range(3)) == level
    assert plan.users_per_worker() == 3


def test_measured_window_excludes_warmup_and_step_at_maps_times():
    plan = _plan()
    assert plan.window(1) == (1006.0, 1010.0)
    assert plan.step_at(999.0) is None and plan.step_at(1004.99) == 0 and plan.step_at(1010.0) is None
