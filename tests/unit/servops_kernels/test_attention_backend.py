"""Backend choice: what servops_kernels.attention runs, and the errors when it cannot."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from servops_kernels import attention, cpu_attention, torch_ref
from servops_kernels.errors import AttentionBackendError
from tests.unit.servops_kernels.paged_inputs import REL_TOL, random_paged_cache, relative_error


def test_cpu_defaults_to_the_native_backend_where_it_builds(monkeypatch):
    monkeypatch.delenv(attention.BACKEND_ENV, raising=False)
    assert attention.backend_for("cpu") == ("cpu" if cpu_attention.available() else "torch")


def _in_a_fresh_process(script: str, **env_overrides: str) -> str:
    env = dict(os.environ, **env_overrides)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip() + "\n" + proc.stderr.strip()


def test_without_a_compiler_cpu_falls_back_to_the_torch_twin_with_one_warning(tmp_path):
    script = (
        "import logging; logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s')\n"
        "from servops_kernels import attention\n"
        "print(attention.backend_for('cpu'), attention.backend_for('cpu'))\n"
    )
    out = _in_a_fresh_process(
        script, CXX="no-such-compiler", SERVOPS_KERNEL_CACHE=str(tmp_path), SERVOPS_ATTENTION_BACKEND=""
    )
    assert out.startswith("torch torch")
    warnings = [line for line in out.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "no-such-compiler" in warnings[0] and "PyTorch twin" in warnings[0]


def test_forcing_cpu_where_the_kernel_cannot_build_names_the_fix(tmp_path):
    script = (
        "from servops_kernels import attention\n"
        "try:\n"
        "    attention.backend_for('cpu')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, getattr(exc, 'user_facing', False), exc)\n"
    )
    out = _in_a_fresh_process(
        script, CXX="no-such-compiler", SERVOPS_KERNEL_CACHE=str(tmp_path), SERVOPS_ATTENTION_BACKEND="cpu"
    )
    line = out.splitlines()[0]
    assert line.startswith("AttentionBackendError True")
    assert "no-such-compiler" in line and "SERVOPS_ATTENTION_BACKEND=torch" in line


def test_forcing_cpu_on_a_gpu_device_is_a_user_error(monkeypatch):
    monkeypatch.setenv(attention.BACKEND_ENV, "cpu")
    with pytest.raises(AttentionBackendError, match="runs on the CPU only, not on cuda"):
        attention.backend_for("cuda")


@pytest.mark.parametrize("name", ["torch", "triton", " Triton "])
def test_environment_forces_a_backend(monkeypatch, name):
    monkeypatch.setenv(attention.BACKEND_ENV, name)
    assert attention.backend_for("cpu") == name.strip().lower()


def test_unknown_backend_is_a_one_line_user_error(monkeypatch):
    monkeypatch.setenv(attention.BACKEND_ENV, "cuda-graphs")
    with pytest.raises(AttentionBackendError) as err:
        attention.backend_for("cpu")
    assert AttentionBackendError.user_facing is True
    message = str(err.value)
    assert "\n" not in message
    assert "SERVOPS_ATTENTION_BACKEND='cuda-graphs'" in message and "cpu, torch, triton" in message


def test_forced_triton_runs_write_decode_and_prefill_like_torch(monkeypatch, device):
    """Through the engine's entry points: write a chunk, prefill over it, then decode."""
    gen = torch.Generator().manual_seed(0)
    cache = random_paged_cache(
        [20, 9], num_kv_heads=2, head_dim=16, block_size=16, dtype=torch.float32, device=device, generator=gen
    )
    q_lens = [4, 9]  # sequence 0 has a 16-token cached prefix; sequence 1 is a fresh prompt
    slots = torch.cat(
        [
            cache.block_tables[b, pos // 16].long() * 16 + pos % 16
            for b, (q_len, ctx) in enumerate(zip(q_lens, [20, 9], strict=False))
            for pos in [torch.arange(ctx - q_len, ctx, device=device)]
        ]
    )
    keys = torch.randn(13, 2, 16, generator=gen).to(device)
    values = torch.randn(13, 2, 16, generator=gen).to(device)
    query = torch.randn(13, 4, 16, generator=gen).to(device)
    cu_seqlens = torch.tensor([0, 4, 13], dtype=torch.int32, device=device)

    results = {}
    for backend in ("torch", "triton"):
        monkeypatch.setenv(attention.BACKEND_ENV, backend)
        k_cache, v_cache = cache.k_cache.clone(), cache.v_cache.clone()
        attention.reshape_and_cache(keys, values, k_cache, v_cache, slots)
        prefill = attention.paged_prefill_attention(
            query, k_cache, v_cache, cache.block_tables, cu_seqlens, cache.context_lens, 0.25
        )
        decode = attention.paged_decode_attention(
            query[[3, 12]], k_cache, v_cache, cache.block_tables, cache.context_lens, 0.25
        )
        results[backend] = (k_cache, prefill, decode)
    assert torch.equal(results["torch"][0], results["triton"][0])
    assert relative_error(results["triton"][1], results["torch"][1]) <= REL_TOL[torch.float32]
    assert relative_error(results["triton"][2], results["torch"][2]) <= REL_TOL[torch.float32]
    # the last token of each prefill chunk is that sequence's decode query
    assert relative_error(results["torch"][1][[3, 12]], results["torch"][2]) <= REL_TOL[torch.float32]


def test_torch_twin_decode_of_an_empty_batch_is_empty():
    cache = random_paged_cache(
        [4], num_kv_heads=1, head_dim=16, block_size=16, dtype=torch.float32, device=torch.device("cpu")
    )
    out = torch_ref.paged_decode_attention(
        torch.empty(0, 2, 16), cache.k_cache, cache.v_cache, cache.block_tables[:0], cache.context_lens[:0], 0.25
    )
    assert out.shape == (0, 2, 16)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the interpreter requirement is for CPU only")
def test_triton_on_cpu_without_the_interpreter_names_the_fix():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env[attention.BACKEND_ENV] = "triton"
    script = (
        "import torch\n"
        "from servops_kernels import attention\n"
        "q = torch.randn(1, 2, 16); cache = torch.randn(1, 16, 1, 16)\n"
        "try:\n"
        "    attention.paged_decode_attention(q, cache, cache, torch.zeros(1, 1, dtype=torch.int32),\n"
        "                                     torch.ones(1, dtype=torch.int32), 0.25)\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, getattr(exc, 'user_facing', False), exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert line.startswith("AttentionBackendError True")
    assert "TRITON_INTERPRET=1" in line and "SERVOPS_ATTENTION_BACKEND=torch" in line


def test_a_pinned_backend_holds_for_its_block_its_device_type_and_its_thread(monkeypatch):
    """The runner pins the backend once per forward pass: inside the block a changed variable is not
    read again, another device type is still asked the usual way, other threads are unaffected, and
    the next block reads the variable afresh."""
    import threading

    monkeypatch.setenv(attention.BACKEND_ENV, "torch")
    with attention.pinned_backend("cpu") as pinned:
        assert pinned == "torch"
        monkeypatch.setenv(attention.BACKEND_ENV, "triton")
        assert attention.backend_for(torch.device("cpu")) == "torch"
        assert attention.backend_for("meta") == "triton"  # not the pinned device type: read again
        seen: list[str] = []
        worker = threading.Thread(target=lambda: seen.append(attention.backend_for("cpu")))
        worker.start()
        worker.join()
        assert seen == ["triton"]
    assert attention.backend_for("cpu") == "triton"
