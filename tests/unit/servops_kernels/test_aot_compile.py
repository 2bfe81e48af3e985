"""The Triton kernels compile for Ampere and Hopper, without spilling, on a machine with no GPU.

The interpreter tests check what the kernels compute; this checks what only the real
compiler can: that every launched variant (fp16 and fp32, each tile size the wrappers pick)
lowers to a cubin for sm_80 and sm_90 and fits in registers (no stack bytes: a spill would
cost bandwidth in a memory-bound kernel). A fresh process without TRITON_INTERPRET, since this session's kernels
are decorated for the interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_every_kernel_variant_compiles_for_sm80_and_sm90_without_spilling():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.unit.servops_kernels.aot_compile_worker", "80", "90"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(records) == 2 * 16, proc.stdout  # per arch: 8 decode, 2 reduce, 4 prefill, 2 cache-write
    failed = [f"sm_{r['arch']} {r['variant']}: {r['error']}" for r in records if not r["ok"]]
    assert not failed, "\n".join(failed)
    spilled = [
        f"sm_{r['arch']} {r['variant']}: {r['stack_bytes']} stack bytes" for r in records if r.get("stack_bytes")
    ]
    assert not spilled, "\n".join(spilled)
