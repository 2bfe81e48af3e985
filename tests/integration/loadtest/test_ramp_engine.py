"""A ramp end to end against the bundled engine (`python -m engine serve`), as against vLLM.

Slow (server start plus a three-step ramp is about a minute on a 2-core box). The engine is
started with --max-num-seqs 4, so the 8-stream step must queue: its server signals show
waiting requests and its TTFT grows, while every request still streams its forced length.
"""

import pytest

from loadtest.runner import RampConfig, run_ramp
from loadtest.workload import LengthSpec, WorkloadSpec
from tests.helpers.server_process import TINY_SERVER_FLAGS, running_server, tiny_model_dir  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_concurrency_ramp_on_the_engine_reports_server_signals_per_step(tiny_model_dir):  # noqa: F811
    with running_server(tiny_model_dir, *TINY_SERVER_FLAGS, "--max-num-seqs", "4") as server:
        config = RampConfig(
            endpoint=server.base_url,
            mode="concurrency",
            levels=[1, 4, 8],
            step_s=4.0,
            warmup_s=1.0,
            cooldown_s=10.0,
            workload=WorkloadSpec(input_len=LengthSpec(mean=32), output_len=LengthSpec(mean=16)),
        )
        result = run_ramp(config)
    assert result.config["model"] == server.model
    assert [s.offered for s in result.steps] == [1, 4, 8]
    for step in result.steps:
        assert step.valid, step.invalid_reason
        assert step.errors == {} and step.ok_requests > 0
        assert step.output_tokens == 16 * step.ok_requests  # usage from the server, length forced
        assert step.server is not None and step.server.samples >= 1
        assert step.server.kv_metric == "vllm:kv_cache_usage_perc"
        assert step.server.kv_cache_usage_max is not None and step.server.preemptions_per_s is not None
        assert step.server.running_max <= 4
    one, _, eight = result.steps
    assert eight.server.waiting_max >= 1
    assert eight.ttft_s.p50 > one.ttft_s.p50
