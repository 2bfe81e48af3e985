"""OP-7.125: NCCL refuses CUDA graph capture: the NCCL library was built for a CUDA runtime before 11.3, or the driver
is older than R465.

Why a rule of its own: vLLM captures its decode steps, all-reduces included, in CUDA graphs unless --enforce-eager
is set, so with tensor parallelism every step goes through NCCL inside a graph. NCCL checks at capture that it can
be captured and warns in its own words (`NCCL WARN NCCL cannot be captured in a graph if either it wasn't built
with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.`); one GPU never calls NCCL, which is why a
single-GPU launch works. In vllm#3069 (vLLM 0.3.2, CUDA 11.6, TP 2) the reporter found that installing xformers
from PyTorch's cu118 index had pulled torch 2.2.0+cu118 with NCCL 2.19.3 built for CUDA 11.0; a fresh environment
with xformers 0.0.23 (NCCL 2.18.6+cuda11.8) served on two GPUs.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_nccl_graph(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.NCCL_GRAPH_UNSUPPORTED)
    if not seen:
        return []
    event = seen[0]
    eager = c.eager_mode(
        "no CUDA graphs, so NCCL is never captured: a way to serve until the libraries fit",
        cost="slower decode at small batches (kernel launches instead of graph replays)",
    )
    return [
        RULE.finding(
            Severity.CRITICAL,
            "NCCL cannot be captured in vLLM's CUDA graphs: the NCCL library was built for a CUDA runtime before "
            "11.3, or the NVIDIA driver is older than R465",
            summary="With tensor parallelism vLLM captures its all-reduces in CUDA graphs; NCCL refuses capture when "
            "its own build or the driver is too old for it, so multi-GPU serving fails where one GPU works.",
            evidence=[c.log_evidence(event, name="NCCL's requirement", value=event.message)],
            alternatives=[] if facts.config is not None and facts.config.enforce_eager else [eager],
            actions=[
                'Check which NCCL PyTorch loads: `python -c "import torch; print(torch.__version__, '
                'torch.cuda.nccl.version())"` and `pip list | grep nccl`. An NCCL built for CUDA 11.0 came with a '
                "torch wheel another package pulled in (vllm#3069: xformers installed from the cu118 index brought "
                "torch 2.2.0+cu118 with NCCL 2.19.3+cuda11.0); reinstall vLLM in a fresh environment so that torch, "
                "xformers and nvidia-nccl are the versions vLLM pins.",
                "Check the driver: `nvidia-smi` shows its version; below R465, upgrade it.",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-7.125",
    title="NCCL too old for CUDA graph capture",
    category=Category.PARALLELISM,
    check=_check_nccl_graph,
    needs=("events",),
    page=RulePage(
        checks="NCCL's `NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if "
        "the installed CUDA driver < R465`.",
        why="vLLM captures its all-reduces in CUDA graphs under tensor parallelism; an NCCL built for an older CUDA "
        "runtime, or an old driver, cannot be captured, so TP fails where one GPU works.",
        example="vLLM 0.3.2 with --tensor-parallel-size 2 on CUDA 11.6, with torch 2.2.0+cu118 and NCCL "
        "2.19.3+cuda11.0 (vllm#3069).",
        fix="The torch, xformers and NCCL vLLM pins, in a fresh environment; a driver of R465 or later; "
        "--enforce-eager until then.",
        limits="Which of the two (NCCL's build, the driver) is the cause is not in the warning.",
        references=["https://github.com/vllm-project/vllm/issues/3069"],
    ),
)

RULES: list[Rule] = [RULE]
