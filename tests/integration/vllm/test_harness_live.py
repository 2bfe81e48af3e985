"""The tier's harness on a real vLLM: the vLLM it starts runs below the processes that judge it
(vs.give_way), on every thread and, where the kernel groups sessions, as a session group."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import machine_state
from tests.helpers import vllm_situations as vs


def test_every_vllm_thread_runs_below_the_tests_own_processes(vllm_serving: vs.VllmServer) -> None:
    leader = vllm_serving.process.pid
    assert leader is not None
    tree = machine_state.process_tree(leader)
    names = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:60] for pid in tree}
    assert len(tree) >= 3, f"vLLM's API server, engine core and worker expected, found {names}"
    above = {
        pid: {tid: nice for tid, nice in machine_state.thread_nices(pid).items() if nice != vs.VLLM_NICE}
        for pid in tree
    }
    assert not any(above.values()), f"vLLM threads not at nice {vs.VLLM_NICE}: {above} ({names})"
    assert os.getpriority(os.PRIO_PROCESS, 0) < vs.VLLM_NICE
    group = Path(f"/proc/{leader}/autogroup")
    if group.exists():  # kernels with CONFIG_SCHED_AUTOGROUP
        assert group.read_text().strip().endswith(f"nice {vs.VLLM_NICE}"), group.read_text()
