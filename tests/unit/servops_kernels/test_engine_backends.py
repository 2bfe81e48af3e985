"""The engine's greedy output is the same with every attention backend (tiny model, CPU).

Each backend runs in its own process with TRITON_INTERPRET=1 (Triton must see it before its
first import), so the Triton run goes through the interpreted kernels end to end: cache
writes, chunked prefill, prefix-cache hits and decode batched with prefill.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from tests.helpers.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("kernels-tiny-llama"))


def _greedy(model_dir: Path, backend: str) -> dict:
    env = dict(os.environ, SERVOPS_ATTENTION_BACKEND=backend, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [sys.executable, "-m", "tests.unit.servops_kernels.greedy_worker", str(model_dir)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_greedy_tokens_identical_with_torch_and_interpreted_triton(tiny_model):
    torch_run = _greedy(tiny_model, "torch")
    triton_run = _greedy(tiny_model, "triton")
    assert torch_run["backend"] == "torch" and not torch_run["triton_interpreted"]
    assert triton_run["backend"] == "triton" and triton_run["triton_interpreted"]
    assert triton_run["cached_tokens"][-1] > 0, "the second round should hit the prefix cache"
    assert all(len(tokens) == 5 for tokens in torch_run["tokens"])
    assert triton_run["tokens"] == torch_run["tokens"]


def test_greedy_tokens_identical_with_torch_and_the_native_cpu_kernel(tiny_model):
    from servops_kernels import cpu_attention

    if not cpu_attention.available():
        pytest.skip(f"native CPU kernel not built here: {cpu_attention.unavailable_reason()}")
    torch_run = _greedy(tiny_model, "torch")
    native_run = _greedy(tiny_model, "cpu")
    assert native_run["backend"] == "cpu"
    assert native_run["cached_tokens"][-1] > 0, "the second round should hit the prefix cache"
    assert native_run["tokens"] == torch_run["tokens"]
