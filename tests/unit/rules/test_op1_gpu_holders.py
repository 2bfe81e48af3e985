"""OP-1.3 with nvidia-smi's process table beside vLLM's refusal: the processes holding the GPU are named, the
largest first, and vLLM's own titled processes (VLLM::EngineCore …) are told apart."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op1_free_memory import RULE_FREE_MEMORY
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts

REFUSED = (
    "(EngineCore_DP0 pid=2211) ERROR 12-01 10:00:05 [core.py:708] ValueError: Free memory on device (9.42/79.19 GiB) "
    "on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or "
    "reduce GPU memory used by other processes."
)
TABLE = [
    "+-----------------------------------------------------------------------------------------+",
    "| Processes:                                                                              |",
    "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
    "|        ID   ID                                                               Usage      |",
    "|=========================================================================================|",
    "|    0   N/A  N/A     20422      C   python3                                       512MiB |",
    "|    0   N/A  N/A     18811      C   VLLM::EngineCore                            69632MiB |",
    "+-----------------------------------------------------------------------------------------+",
]


def test_nvidia_smis_process_rows_are_read_in_both_layouts():
    rows = [e for e in parse_lines(TABLE).events if e.kind == K.GPU_PROCESS]
    assert [(e.gpu_index, e.pid, e.component, e.memory_gib) for e in rows] == [
        (0, 20422, "python3", 0.5),
        (0, 18811, "VLLM::EngineCore", 68.0),
    ]
    [old] = parse_lines(["|    1     4242      C   /usr/bin/python3                  40960MiB |"]).events
    assert (old.gpu_index, old.pid, old.component, old.memory_gib) == (1, 4242, "/usr/bin/python3", 40.0)


def test_the_refusal_names_what_holds_the_gpu_largest_first():
    [finding] = RULE_FREE_MEMORY.evaluate(Facts(events=parse_lines([REFUSED, *TABLE]).events))
    assert finding.summary.endswith(
        "nvidia-smi lists PID 18811 (VLLM::EngineCore, 68 GiB on GPU 0), PID 20422 (python3, 0.5 GiB on GPU 0)."
    )
    assert "A name that starts with VLLM:: is a vLLM engine or worker" in finding.actions[0]


def test_without_the_table_the_answer_is_as_before():
    [finding] = RULE_FREE_MEMORY.evaluate(Facts(events=parse_lines([REFUSED]).events))
    assert finding.actions == [
        "Find and stop other processes on the GPU (nvidia-smi), or give this instance its own GPU."
    ]


def test_the_table_alone_is_no_finding():
    """A running server holds most of its GPU by design: the table says nothing wrong without a failure."""
    assert evaluate(Facts(events=parse_lines(TABLE).events)).findings == []
