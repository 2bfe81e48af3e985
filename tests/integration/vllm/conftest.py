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
- `kv_too_small_start` (session, autouse): test_failures_live.py's failed start (a KV space too small
  for --max-model-len), begun in a thread with the session, beside the shared server's start.
  Why: a vLLM start is three processes that each import vLLM and torch one after another, on one
  core at a time (about 15 s each on CI's two cores), so two starts side by side take little longer
  than one; the failed start holds no server afterwards and its KV space is fixed by its flag, so
  it changes nothing the shared server's tests read (its KV space is fixed by VLLM_CPU_KVCACHE_SPACE).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.servers.vllm import vllm_unavailable_reason
from tests.fixtures.vllm_cpu.record import KV_TOO_SMALL_BYTES
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


FAILURES_MODULE = "test_failures_live.py"


@pytest.fixture(scope="session", autouse=True)
def kv_too_small_start(request: pytest.FixtureRequest, vllm_work: Path) -> Iterator[vs.Background | None]:
    """The failed start's (exit code, log text), under way in the background; None when the session
    does not run test_failures_live.py (or the tier skips)."""
    wanted = not _REASON and any(Path(item.fspath).name == FAILURES_MODULE for item in request.session.items)
    start = vs.Background(_kv_too_small_log(vllm_work), "the KV-too-small start") if wanted else None
    yield start
    if start is not None:  # a test that failed before reading it still waits for its processes to end
        with contextlib.suppress(Exception):
            start.result(vs.STARTUP_TIMEOUT_S)


def _kv_too_small_log(vllm_work: Path) -> vs.During:
    """vLLM started with a KV space too small for its --max-model-len (eager: its failure does not depend
    on compilation); returns (exit code, log text), the log at vllm_work/kv-too-small.log."""
    return lambda: vs.failed_start_log(
        vllm_work, "--kv-cache-memory-bytes", KV_TOO_SMALL_BYTES, "--enforce-eager", label="kv-too-small"
    )


@pytest.fixture(scope="session")
def vllm_serving(vllm_work: Path) -> Iterator[vs.VllmServer]:
    with vs.vllm_server(vllm_work, "--enforce-eager", label="serving") as server:
        yield server
