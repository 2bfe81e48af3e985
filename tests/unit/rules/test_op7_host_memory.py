"""OP-7.30: the host killing the server for memory, in Kubernetes', Docker's and the kernel's words."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op7_host_memory
from rules.evaluate import evaluate
from rules.facts import Facts

DESCRIBE = """\
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Restart Count:  6
    Limits:
      memory:          32Gi
      nvidia.com/gpu:  1"""


def _facts(text: str) -> Facts:
    return Facts(events=parse_lines(text.splitlines()).events)


def test_kubectl_describes_oomkilled_and_triage_names_host_memory_not_the_gpu():
    top = evaluate(_facts(DESCRIBE)).findings[0]
    assert top.rule == "OP-7.30" and top.title.startswith("Kubernetes killed the server for host memory (OOMKilled)")
    assert "GPU memory flags change nothing" in top.summary and not top.changes
    assert top.actions[0].startswith("Raise the container's memory limit (resources.limits.memory")
    assert "--mm-processor-cache-gb 0" in top.actions[1]


@pytest.mark.parametrize(
    ("line", "component", "rss"),
    [
        ("vllm-7c9d8-x2k4q   0/1     OOMKilled   3 (45s ago)   5m", "Kubernetes", None),
        ('            "OOMKilled": true,', "Docker", None),
        (
            "[81234.5] Memory cgroup out of memory: Killed process 4172 (python3) total-vm:61234567kB, "
            "anon-rss:31457280kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:70000kB oom_score_adj:999",
            "the kernel (a memory cgroup's limit)",
            30.0,
        ),
        ("Out of memory: Killed process 99 (vllm) total-vm:1kB", "the kernel", None),
    ],
    ids=["kubectl-get-pods", "docker-inspect", "cgroup-kill", "node-kill"],
)
def test_each_reporters_words_are_read(line, component, rss):
    [finding] = op7_host_memory.RULE.evaluate(_facts(line))
    assert finding.title.startswith(f"{component} killed the server for host memory")
    if rss is not None:
        assert f"holding {rss:.1f} GiB" in finding.title


def test_a_gpu_out_of_memory_is_not_a_host_kill():
    assert not op7_host_memory.RULE.evaluate(
        _facts("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB")
    )


def test_the_shells_killed_is_sigkill_most_often_the_oom_killer_and_asks_to_confirm_it():
    for line in ("Killed", "[1]+  Killed                  vllm serve Qwen/Qwen3-8B"):
        [finding] = op7_host_memory.RULE.evaluate(Facts(events=parse_lines([line]).events))
        assert finding.title.startswith("the server was killed with SIGKILL (the shell's `Killed`)")
        assert finding.confidence == op7_host_memory.SHELL_CONFIDENCE
        assert "dmesg -T" in finding.actions[0] and "kill -9" in finding.actions[0]
    # the word inside a sentence or the kernel's line is not the shell's report
    assert not parse_lines(["Killed requests are retried by the router"]).events


# Ray's memory monitor's words as ray.get raises them (the node's figures on the line under the exception) and as
# the raylet logs them; the figures are Ray's documentation's example
RAY_OOM = [
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "Memory on the node (IP: 10.0.62.231, ID: e5d953ef) where the task (task ID: 4353, name=allocate_memory, "
    "pid=11362, memory used=1.25GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the memory usage "
    "threshold of 0.95. Ray killed this worker (ID: 6f2ec5c8) because it was the most recently scheduled task",
]
RAYLET = (
    "(raylet) [2025-03-01 10:12:01,123 E 1234 1234] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed "
    "due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 9f1e, IP: 10.0.0.12) over the "
    "last time period."
)


def test_rays_memory_monitor_names_the_node_its_threshold_and_the_knob_after_the_real_fixes():
    top = evaluate(_facts("\n".join(RAY_OOM))).findings[0]
    assert top.rule == "OP-7.30"
    assert top.title == (
        "Ray's memory monitor killed a worker for the node's host memory (27.71 of 28.8 GB, past its threshold "
        "0.95): host RAM, not the GPU's"
    )
    assert top.evidence[0].value == "the worker held 1.25 GB"
    assert top.actions[0].startswith("See what held the memory") and "--mm-processor-cache-gb 0" in top.actions[1]
    assert "(this node's was 0.95)" in top.actions[2] and "RAY_memory_monitor_refresh_ms=0" in top.actions[2]
    # a GPU sharing the node's memory counts against the threshold (MiaAI-Lab/GLM-5.3-Flash-NVFP4-Dual-DGX-Spark PR #2)
    assert "DGX Spark" in top.actions[2] and "disables the monitor" in top.actions[2]


def test_the_raylets_count_of_killed_workers_is_rays_monitor_too_and_the_kernels_kill_wins_beside_it():
    top = evaluate(_facts(RAYLET)).findings[0]
    assert top.rule == "OP-7.30" and top.title.startswith("Ray's memory monitor killed a worker")
    assert "(0.95 unless set)" in top.actions[2]
    beside = evaluate(_facts(RAYLET + "\n" + DESCRIBE)).findings[0]
    assert beside.title.startswith("Kubernetes killed the server for host memory")


# --- OP-7.54 the host refused an allocation ---------------------------------------------------------------------------


def test_pytorchs_cpu_allocator_says_how_much_it_asked_and_points_at_overcommit():
    [finding] = op7_host_memory.RULE_REFUSED.evaluate(
        Facts(
            events=parse_lines(
                [
                    "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate "
                    "memory: you tried to allocate 8589934592 bytes. Error code 12 (Cannot allocate memory)"
                ]
            ).events
        )
    )
    assert finding.title == (
        "the host refused an allocation of 8.0 GiB of host memory (ENOMEM): host RAM or its limits, not the GPU's"
    )
    assert "/proc/sys/vm/overcommit_memory" in finding.actions[0] and "ulimit -v" in finding.actions[0]
    assert "safetensors" in finding.actions[2]


def test_the_allocators_other_wording_is_the_same_refusal():
    # PyTorch's allocator says "not enough memory" where it has no posix_memalign (the wording users of Windows
    # builds quote); the size it asked for is read the same way.
    line = (
        "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: "
        "you tried to allocate 4294967296 bytes."
    )
    [finding] = op7_host_memory.RULE_REFUSED.evaluate(Facts(events=parse_lines([line]).events))
    assert "allocation of 4.0 GiB of host memory" in finding.title


def test_a_kill_for_memory_in_the_same_text_is_op_7_30s():
    lines = ["OSError: [Errno 12] Cannot allocate memory", "    Reason:       OOMKilled"]
    assert op7_host_memory.RULE_REFUSED.evaluate(Facts(events=parse_lines(lines).events)) == []
    assert op7_host_memory.RULE.evaluate(Facts(events=parse_lines(lines).events))


def test_systemds_oom_kill_of_a_service_names_the_unit_and_its_memory_limit():
    journal = (
        "Dec 01 10:00:00 gpu-01 systemd[1]: vllm.service: A process of this unit has been killed by the OOM killer.\n"
        "Dec 01 10:00:00 gpu-01 systemd[1]: vllm.service: Main process exited, code=killed, status=9/KILL\n"
        "Dec 01 10:00:00 gpu-01 systemd[1]: vllm.service: Failed with result 'oom-kill'."
    )
    top = evaluate(_facts(journal)).findings[0]
    assert top.rule == "OP-7.30"
    assert top.title.startswith("the OOM killer killed the server of systemd's unit vllm.service for host memory:")
    assert "systemctl show vllm.service -p MemoryMax" in top.actions[0] and not top.changes
    # beside the kernel's line, the unit still leads, with what the process held
    kernel = (
        "kernel: Out of memory: Killed process 4242 (python3) total-vm:123456789kB, anon-rss:98765432kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:200000kB oom_score_adj:0"
    )
    both = evaluate(_facts(kernel + "\nsystemd[1]: vllm-qwen@0.service: Failed with result 'oom-kill'.")).findings[0]
    assert both.title.startswith(
        "the OOM killer killed the server of systemd's unit vllm-qwen@0.service for host memory, holding 94.2 GiB"
    )
