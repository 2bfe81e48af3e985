"""`servops ramp --master` with a separately started `servops ramp --worker`, as across machines."""

import subprocess
import sys

import pytest

from loadtest.runner import RampConfig, run_ramp
from loadtest.workload import LengthSpec, WorkloadSpec
from tests.helpers.fake_openai_server import FakeServer
from tests.helpers.server_process import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_master_waits_for_remote_style_workers_and_merges_their_records():
    port = free_port()
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "advisor",
                "ramp",
                "--worker",
                "--master-host",
                "127.0.0.1",
                "--master-port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    try:
        with FakeServer("--ttft", "0.05", "--gap", "0.01", "--tokens", "8") as server:
            config = RampConfig(
                endpoint=server.url,
                mode="concurrency",
                levels=[2, 6],
                step_s=3.0,
                warmup_s=1.0,
                cooldown_s=3.0,
                master=True,
                expect_workers=2,
                master_bind_host="127.0.0.1",
                master_port=port,
                workload=WorkloadSpec(input_len=LengthSpec(mean=8), output_len=LengthSpec(mean=8)),
            )
            result = run_ramp(config)
    finally:
        for proc in workers:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    assert [s.offered for s in result.steps] == [2, 6]
    assert all(s.client.load_processes == 2 and s.errors == {} and s.requests > 0 for s in result.steps)
    assert all(proc.returncode == 0 for proc in workers)  # they quit when the master did


def test_master_without_workers_is_a_clear_error_not_a_hang():
    with FakeServer("--ttft", "0.01", "--gap", "0.01", "--tokens", "2") as server:
        config = RampConfig(
            endpoint=server.url,
            mode="rate",
            levels=[1],
            step_s=1.0,
            warmup_s=0.0,
            master=True,
            expect_workers=1,
            master_bind_host="127.0.0.1",
            master_port=free_port(),
        )
        with pytest.raises(Exception) as err:
            run_ramp(config)
    assert getattr(err.value, "user_facing", False) and "servops ramp --worker" in str(err.value)
