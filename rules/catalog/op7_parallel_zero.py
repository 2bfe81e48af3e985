"""OP-7.95: a parallel size of 0 reached vLLM's arithmetic: the GPUs it was sized from were not visible.

Why a rule of its own: vLLM divides by its parallel sizes while it checks a launch (`total_num_attention_heads %
tensor_parallel_size` in ModelConfig's verify_with_parallel_config, the world size, the per-rank shares), so a size of
0 ends in Python's `ZeroDivisionError: integer division or modulo by zero` (`integer modulo by zero` on Python 3.12)
instead of a message. Nobody types `--tensor-parallel-size 0` on purpose (vllm-project/vllm#54657 and #54665 report
that vLLM does not refuse it cleanly); it arrives from a launcher that sizes tensor parallelism from the GPUs it
counts. Xinference sets it to the CUDA device count, which is 0 on a CPU host or a container without the GPUs
(xorbitsai/inference#2552, a maintainer agreeing it should fall back to 1; #2303 shows the frame);
opendatahub-io/vllm-tgis-adapter#83 is `--num-gpus 0`. The finding is read from the failing line's code, which
names the size it divided by.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The sizes vLLM divides by, as its code names them on the failing line.
_SIZE = re.compile(
    r"\b(?P<size>(?:tensor|pipeline|data|decode_context|prefill_context|expert)_parallel_size|tp_size|pp_size"
    r"|world_size|num_gpus)\b"
)
_FLAGS = {
    "tensor_parallel_size": "--tensor-parallel-size",
    "tp_size": "--tensor-parallel-size",
    "pipeline_parallel_size": "--pipeline-parallel-size",
    "pp_size": "--pipeline-parallel-size",
    "data_parallel_size": "--data-parallel-size",
    "decode_context_parallel_size": "--decode-context-parallel-size",
}


def _check_parallel_zero(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        if event.exception != "ZeroDivisionError":
            continue
        found = _SIZE.search(event.code or "")
        if found is not None:
            return [_finding(event, found["size"])]
    return []


def _finding(event: LogEvent, size: str) -> Finding:
    flag = _FLAGS.get(size, "--tensor-parallel-size")
    return RULE_PARALLEL_ZERO.finding(
        Severity.CRITICAL,
        f"vLLM divided by {size} and it was 0: the launch was sized from GPUs that were not visible, or was given a "
        "parallel size of 0",
        summary=f"The failing line is `{event.code}`. A size of 0 comes from a launcher that counts the GPUs it sees "
        "(Xinference, a wrapper, a script using torch.cuda.device_count()) on a host or container where CUDA sees "
        "none, or from a size written as 0.",
        evidence=[c.log_evidence(event, name="the division by zero", value=event.code)],
        actions=[
            "Check that the process sees its GPUs: `python -c 'import torch; print(torch.cuda.device_count())'` in "
            "the same container or environment. In Kubernetes, request them (`nvidia.com/gpu` in the container's "
            "limits) on a node with the NVIDIA device plugin; in Docker, `--gpus all`; and CUDA_VISIBLE_DEVICES must "
            "name GPUs that exist.",
            f"Set {flag} (or the launcher's GPU count, e.g. Xinference's n_gpu) to a number of at least 1 instead of "
            "letting it be counted; on a CPU-only host, 1 with vLLM's CPU build.",
        ],
        confidence=0.75,
    )


RULE_PARALLEL_ZERO = Rule(
    code="OP-7.95",
    title="a parallel size of 0 reached vLLM's arithmetic",
    category=Category.PARALLELISM,
    check=_check_parallel_zero,
    needs=("events",),
    page=RulePage(
        checks="A `ZeroDivisionError` whose failing line divides by a parallel size "
        "(`total_num_attention_heads % tensor_parallel_size`, a world size, a GPU count).",
        why="Launchers size tensor parallelism from the GPUs they count; with none visible the size is 0 and vLLM's "
        "checks divide by it.",
        example="Xinference on a CPU host: `if total_num_attention_heads % tensor_parallel_size != 0:` then "
        "`ZeroDivisionError: integer modulo by zero` (xorbitsai/inference#2552).",
        fix="Make the GPUs visible to the process, or set the size (or the launcher's GPU count) to at least 1.",
        limits="Needs the failing line's code in the text; the exception line alone names no size.",
        references=[
            "https://github.com/xorbitsai/inference/issues/2552",
            "https://github.com/xorbitsai/inference/issues/2303",
            "https://github.com/opendatahub-io/vllm-tgis-adapter/issues/83",
            "https://github.com/vllm-project/vllm/issues/54657",
        ],
    ),
)

RULES: list[Rule] = [RULE_PARALLEL_ZERO]
