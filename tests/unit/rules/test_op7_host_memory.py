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
