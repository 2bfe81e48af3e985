"""Fixtures for the server tests: real `python -m engine serve` processes on 127.0.0.1.

One tiny-model server is shared by the whole package (a server start costs 10-30 s on a
busy 2-core box). Tests marked `kills_shared_server` (the dead-engine-loop test) break it
for good, so collection moves them after every other test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.core.async_engine import FAULT_ENV
from tests.helpers.server_process import (
    TINY_SERVER_FLAGS,
    ServerHandle,
    running_server,
    tiny_model_dir,  # noqa: F401 - a session fixture
)

KILLS_SHARED_SERVER = "kills_shared_server"
SHARED_SERVER_BLOCKS = 64


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{KILLS_SHARED_SERVER}: kills the shared server's engine loop; runs last")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the marked tests after this package's other tests (not after the whole session,
    which would tear the package-scoped server down and start a second one for them)."""
    here = Path(__file__).parent
    last = [item for item in items if item.get_closest_marker(KILLS_SHARED_SERVER)]
    if not last:
        return
    rest = [item for item in items if item not in last]
    ours = [index for index, item in enumerate(rest) if here in Path(str(item.path)).parents]
    insert_at = ours[-1] + 1 if ours else len(rest)
    items[:] = rest[:insert_at] + last + rest[insert_at:]


@pytest.fixture(scope="package")
def fault_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Creating this file makes the shared server's next engine step raise (test-only hook)."""
    return tmp_path_factory.mktemp("fault") / "kill-engine-loop"


@pytest.fixture(scope="package")
def server(tiny_model_dir: Path, fault_file: Path) -> Iterator[ServerHandle]:  # noqa: F811
    env = {"VLLM_LOG_STATS_INTERVAL": "1", FAULT_ENV: str(fault_file)}
    # 64 blocks x 16 tokens: room for 4 full-length requests, so a burst of long ones preempts.
    flags = (*TINY_SERVER_FLAGS, "--max-model-len", "256", "--num-gpu-blocks-override", str(SHARED_SERVER_BLOCKS))
    with running_server(tiny_model_dir, *flags, env=env) as handle:
        yield handle


@pytest.fixture(scope="package")
def tokenizer(tiny_model_dir: Path):  # noqa: F811
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model_dir))
