"""The live-vLLM tier: every test here starts or talks to a real vLLM from .venv-vllm.

Marked `vllm` (and `integration`) automatically. It runs in `make test` whenever
scripts/install.sh built the vLLM environment; on a machine that cannot run vLLM the whole
tier skips with the one-line reason (printed by pytest's -ra summary), never silently.

Fixtures:
- `vllm_serving` (session): vLLM with its defaults on the embedded SmolLM2 (served as 'smol',
  KV space 1 GiB) but `--enforce-eager`, shared by the advise, triage, ramp and report tests.
  Why eager: on CI's two cores vLLM's torch.compile of the model takes about two minutes of the
  suite's 25, and nothing here depends on it (metric names, log lines, the KV size and the flags
  vLLM reads back are the same compiled or not); the compiled default start is the one the 0.32
  recordings in tests/fixtures/vllm_cpu were made from (record.py's idle to overload server).
- `vllm_work` (session): a folder for logs and JSON of the whole tier.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.servers.vllm import vllm_unavailable_reason
from tests.helpers import vllm_situations as vs

_REASON = vllm_unavailable_reason()
# pytest's per-test limit for this tier, fixture setup included: a module fixture here may start
# vLLM (STARTUP_TIMEOUT_S) or hold a load (vs.STEADY_STATE_MAX_S + vs.DURING_MAX_S + vs.STOP_GRACE_S);
# each of those fails on its own with vLLM's log first, so this limit is only the last resort.
TIER_TIMEOUT_S = 900


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.vllm)
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.timeout(TIER_TIMEOUT_S))  # a test's own timeout mark still wins
            if _REASON:
                item.add_marker(pytest.mark.skip(reason=f"live vLLM tier: {_REASON}"))


@pytest.fixture(scope="session")
def vllm_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vllm-tier")


@pytest.fixture(scope="session")
def vllm_serving(vllm_work: Path) -> Iterator[vs.VllmServer]:
    with vs.vllm_server(vllm_work, "--enforce-eager", label="serving") as server:
        yield server
