"""RampConfig states every ramp default and bound once; nothing downstream restates or clamps them."""

from __future__ import annotations

import inspect
import io
import json
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from loadtest import knee, runner, stats
from loadtest.config import DEFAULT_WARMUP_SHARE, RampConfig, RampSchedule, ramp_default
from loadtest.plan import RampPlan
from loadtest.runner import ChildRun, _drive_child
from loadtest.workload import WORKLOAD_KINDS, LengthSpec, WorkloadKind, WorkloadSpec

BASE = {"endpoint": "http://127.0.0.1:1", "mode": "concurrency", "levels": [1.0]}


def test_the_plan_has_the_very_schedule_defaults_of_the_config():
    config = RampConfig(**BASE)
    plan = RampPlan(**BASE, model="m")
    for name in RampSchedule.model_fields:
        assert getattr(plan, name) == getattr(config, name), name
    assert plan.cooldown_s == config.cooldown_s == 10.0  # once 5 s in the plan and 10 s elsewhere


def test_the_cooldown_default_says_why_it_is_what_it_is():
    description = RampConfig.model_fields["cooldown_s"].description or ""
    assert "10 s" in description and "cancelled" in description


def test_the_warm_up_defaults_to_a_share_of_the_step():
    assert RampConfig(**BASE, step_s=30).warmup_s == pytest.approx(DEFAULT_WARMUP_SHARE * 30)
    assert RampConfig(**BASE, step_s=30, warmup_s=0).warmup_s == 0


def test_statistics_knee_and_locust_process_read_their_defaults_from_the_config():
    defaults = inspect.signature(stats.step_stats).parameters
    assert defaults["max_client_cpu_percent"].default == ramp_default("max_client_cpu_percent")
    assert defaults["max_send_lateness_s"].default == ramp_default("max_send_lateness_s")
    assert knee.DEFAULT_FACTOR == ramp_default("knee_factor")
    # locust_main is read as text: importing it here would gevent-patch the test session
    body = (Path(runner.__file__).parent / "locust_main.py").read_text(encoding="utf-8")
    for name in ("master_host", "master_port", "master_bind_host", "master_timeout_s"):
        assert f'ramp_default("{name}")' in body


@pytest.mark.parametrize(
    "overrides",
    [
        {"step_s": 5, "warmup_s": 5},
        {"step_s": 5, "warmup_s": 9},
        {"levels": [0, 1]},
        {"levels": [1, -2]},
        {"levels": [1.5]},
        {"levels": [float("nan")]},
        {"levels": []},
        {"cooldown_s": -1},
        {"step_s": 0},
        {"step_s": float("inf")},
        {"request_timeout_s": 0},
        {"workers": -1},
        {"expect_workers": 0},
        {"master_port": 70000},
        {"knee_factor": 1},
        {"max_client_cpu_percent": 150},
        {"max_client_cpu_percent": 0},
        {"max_send_lateness_s": 0},
        {"max_ttft_s": -1},
        {"master_timeout_s": 0},
        {"workload": {"groups": 0}},
        {"workload": {"share": 1.5}},
        {"workload": {"share": -0.1}},
        {"workload": {"prefix_len": -4}},
        {"workload": {"kind": "shared-prefix", "groups": 0}},
        {"workload": {"input_len": {"mean": 0}}},
        {"workload": {"kind": "nope"}},
        {"workload": {"input_len": {"distribution": "uniform", "mean": 128, "spread": 200}}},
    ],
)
def test_a_value_out_of_bounds_is_refused_not_clamped(overrides):
    with pytest.raises(ValidationError):
        RampConfig(**{**BASE, **overrides})


def test_a_rate_ramp_may_use_fractional_levels():
    assert RampConfig(**{**BASE, "mode": "rate", "levels": [0.5, 1.5]}).levels == [0.5, 1.5]


def test_workload_kinds_are_the_literals_own_values():
    assert WORKLOAD_KINDS == get_args(WorkloadKind) == ("random", "shared-prefix", "file")


def test_only_the_shared_prefix_workload_carries_a_prefix():
    assert WorkloadSpec(kind="shared-prefix").prefix_len == 256
    assert WorkloadSpec().prefix_len == 0  # the echo never claims a prefix no request carried
    with pytest.raises(ValidationError, match="shared-prefix"):
        WorkloadSpec(kind="random", prefix_len=64)


def test_results_written_before_the_defaults_moved_still_read():
    """Older ramp files echo a random workload with groups 1 and prefix_len 0; they must stay readable."""
    old = {
        "kind": "random",
        "api": "chat",
        "input_len": {"distribution": "fixed", "mean": 24, "spread": 0.0},
        "output_len": {"distribution": "fixed", "mean": 12, "spread": 0.0},
        "force_output_len": True,
        "prefix_len": 0,
        "groups": 1,
        "share": 1.0,
        "unique_prefix_per_step": False,
        "path": None,
        "seed": 0,
        "temperature": 0.0,
    }
    assert WorkloadSpec.model_validate(old).model_dump() == old


def test_a_length_reads_and_writes_its_command_line_form():
    for text in ("128", "uniform:128:64", "normal:100:10"):
        assert LengthSpec(**LengthSpec.fields_from_text(text)).text == text
    with pytest.raises(ValueError, match="uniform:MEAN:SPREAD"):
        LengthSpec.fields_from_text("wide:1")


class _FakeChild:
    """A Locust process that starts, closes step 0 and finishes, as JSON lines on its stdout."""

    def __init__(self, *args, **kwargs) -> None:
        lines = [
            {"type": "started", "start_ts": 1234.5, "workers": 1},
            {"type": "step_closed", "step": 0, "worker": 0, "records": [], "cpu_percent": 3.0},
            {"type": "done", "worker": 0, "records": []},
        ]
        self.stdout = io.StringIO("".join(json.dumps(line) + "\n" for line in lines))

    def wait(self, timeout=None) -> int:
        return 0

    def poll(self) -> int:
        return 0


def test_driving_the_load_process_leaves_the_plan_it_was_given_alone(monkeypatch, tmp_path):
    monkeypatch.setattr(runner.subprocess, "Popen", _FakeChild)
    config = RampConfig(**BASE, step_s=1, warmup_s=0)
    plan = RampPlan(**BASE, model="m", step_s=1, warmup_s=0)
    before = plan.model_dump()
    run = _drive_child(config, plan, tmp_path / "plan.json", tmp_path, [], lambda line: None)
    assert plan.model_dump() == before  # not mutated
    assert isinstance(run, ChildRun)
    assert run.plan.start_ts == 1234.5 and run.plan.workers == 1
    assert list(run.closed) == [0] and run.closed[0] == [3.0]
    assert run.records == [] and run.stopped_early is None
