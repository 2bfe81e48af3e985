"""Linux memory settings for the CPU engine: malloc thresholds and huge pages, switchable off."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from engine.model import cpu_memory


def _run(code: str, **env: str) -> str:
    import os

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, **env}
    )
    return result.stdout.strip()


def _malloc_16mib_is_mmapped(tune: bool) -> str:
    """In a fresh process (the thresholds must not leak into the test runner): tuning result,
    whether a 16 MiB malloc came from mmap, and whether a second tuning call still says True."""
    code = (
        "import ctypes, ctypes.util; from engine.model.cpu_memory import tune_glibc_malloc\n"
        f"ok = tune_glibc_malloc() if {tune} else None\n"
        "libc = ctypes.CDLL(ctypes.util.find_library('c')); libc.malloc.restype = ctypes.c_void_p\n"
        "p = libc.malloc(16 * 1024 * 1024)\n"
        # glibc marks an mmap-served chunk with bit 1 (IS_MMAPPED) of the size word before it
        "size_word = ctypes.c_size_t.from_address(p - ctypes.sizeof(ctypes.c_size_t)).value\n"
        f"print(ok, bool(size_word & 2), tune_glibc_malloc() if {tune} else None)\n"
    )
    return _run(code)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_applies_on_glibc_and_keeps_large_blocks_off_mmap():
    assert _malloc_16mib_is_mmapped(tune=True) == "True False True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_untuned_glibc_serves_the_same_block_by_mmap():
    """The control for the test above: without tuning, a 16 MiB block is mmapped."""
    assert _malloc_16mib_is_mmapped(tune=False) == "None True None"


def test_switch_turns_both_off(monkeypatch):
    monkeypatch.setattr(cpu_memory, "_malloc_tuned", False)
    monkeypatch.setenv(cpu_memory.ENV_SWITCH, "0")
    assert cpu_memory.tune_glibc_malloc() is False
    assert cpu_memory.advise_huge_pages(torch.empty(8 * 1024 * 1024)) is False


def _thp_mode() -> str:
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return "absent"
    return text.split("[", 1)[1].split("]", 1)[0]


@pytest.mark.skipif(_thp_mode() not in ("always", "madvise"), reason="transparent huge pages unavailable")
def test_kv_cache_sized_tensor_gets_huge_pages():
    """Advised before first touch, a 64 MiB tensor is (mostly) backed by 2 MiB pages."""
    code = (
        "import torch; from engine.model.cpu_memory import advise_huge_pages\n"
        "t = torch.empty(16 * 1024 * 1024)\n"  # 64 MiB, float32
        "ok = advise_huge_pages(t); t.fill_(1.0)\n"
        "start, end = t.data_ptr(), t.data_ptr() + t.numel() * 4\n"
        "kb = 0\n"
        "for line in open('/proc/self/smaps').read().split('\\n'):\n"
        "    if '-' in line.split(' ')[0] and not line.startswith(('AnonHuge', 'Size')):\n"
        "        lo, hi = (int(x, 16) for x in line.split(' ')[0].split('-')); inside = lo < end and hi > start\n"
        "    elif line.startswith('AnonHugePages:') and inside:\n"
        "        kb += int(line.split()[1])\n"
        "print(ok, kb >= 32 * 1024)\n"
    )
    assert _run(code) == "True True"


def test_the_hosts_available_memory_is_read_from_meminfo(tmp_path):
    from engine.model import cpu_memory

    assert cpu_memory.host_available_bytes() > 0  # this Linux box
    fake = tmp_path / "meminfo"
    fake.write_text("MemTotal:       24000000 kB\nMemAvailable:    1000 kB\n")
    assert cpu_memory.host_available_bytes(str(fake)) == 1000 * 1024
    fake.write_text("MemTotal:       24000000 kB\n")
    assert cpu_memory.host_available_bytes(str(fake)) is None
    assert cpu_memory.host_available_bytes(str(tmp_path / "absent")) is None
