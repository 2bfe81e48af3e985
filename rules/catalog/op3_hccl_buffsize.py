"""OP-3.11: an Ascend MoE all-to-all whose HCCL window is larger than HCCL_BUFFSIZE.

Why a rule of its own: with expert parallelism on Ascend NPUs (vllm-ascend), the MoE dispatch and combine operators
(CANN's MoeDistributeDispatch/Combine) exchange tokens through an HCCL window of HCCL_BUFFSIZE megabytes (200 by
default) on every rank. Their tiling check computes the window a batch needs from the largest batch per rank, the
hidden size, the experts each rank holds and top-k, and refuses a smaller one: `HCCL_BUFFSIZE is too SMALL, maxBs =
512, h = 2048, … NEEDED_HCCL_BUFFSIZE(…) = 1216MB, HCCL_BUFFSIZE=200MB.` (the operators' tiling sources; the log of
vllm-ascend PR #5287, a data-parallel test on A3). The model guides that meet it fix it with the variable itself,
the same on every rank; fewer tokens per step (a lower --max-num-batched-tokens or --max-num-seqs) shrinks maxBs.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

HCCL_BUFFSIZE = "HCCL_BUFFSIZE"
HCCL_BUFFSIZE_DEFAULT_MB = 200  # CANN's default window (the message prints it when the variable is unset)


def _buffsize_finding(_facts: Facts, event: LogEvent, _words: re.Match[str]) -> Finding:
    needed, have = event.resource_required, event.resource_limit
    sizes = (f" ({needed} MB needed" + (f", {have} MB set)" if have else ")")) if needed else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"the MoE all-to-all needs a larger HCCL window than HCCL_BUFFSIZE{sizes}",
        summary="With expert parallelism on Ascend, the MoE dispatch and combine operators move tokens through an "
        "HCCL window of HCCL_BUFFSIZE megabytes on every rank, sized here for the largest batch per rank, the "
        "hidden size, the experts a rank holds and top-k; the operator's tiling check refused the window it has, so "
        "the forward pass (first at warm-up) fails.",
        evidence=[c.log_evidence(event, name="the operator's check", value=f"{needed} MB" if needed else None)],
        changes=[
            ConfigChange(
                flag=HCCL_BUFFSIZE,
                current=str(have) if have else None,
                proposed=str(needed)
                if needed
                else f"<more than now ({HCCL_BUFFSIZE_DEFAULT_MB} MB unless set): the NEEDED size the whole message "
                "states>",
                reason="the window the operator computed for this batch; every rank the same",
                kind="env",
            )
        ],
        actions=[
            "Export HCCL_BUFFSIZE (in MB) at least as large as the message's NEEDED_HCCL_BUFFSIZE on every node and "
            "rank, the same value everywhere, and restart; it is device memory each rank sets aside.",
            "Or make the batch per rank smaller (a lower --max-num-batched-tokens or --max-num-seqs), which shrinks "
            "what the window must hold.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-3.11",
    title="an Ascend MoE all-to-all needs a larger HCCL window than HCCL_BUFFSIZE",
    category=Category.PARALLELISM,
    check=c.on_kind(LogEventKind.HCCL_BUFFER_TOO_SMALL, _buffsize_finding),
    needs=("events",),
    page=RulePage(
        checks="CANN's MoE dispatch/combine tiling check: `HCCL_BUFFSIZE is too SMALL, … NEEDED_HCCL_BUFFSIZE(…) = "
        "N MB, HCCL_BUFFSIZE=M MB.` (or `should larger than N MB`).",
        why="The all-to-all of expert parallelism on Ascend runs in a window of HCCL_BUFFSIZE MB; a batch whose "
        "tokens need more fails the operator.",
        example="`EZ9999 … HCCL_BUFFSIZE is too SMALL, maxBs = 512, h = 2048, epWorldSize = 2, localMoeExpertNum = "
        "64, …` in vllm-ascend's data-parallel test on A3 (vllm-ascend PR #5287).",
        fix="HCCL_BUFFSIZE at least the needed size on every rank; or a smaller batch per rank.",
        limits="A line cut before its sizes gets the direction, not the number.",
        references=["https://github.com/vllm-project/vllm-ascend/pull/5287"],
    ),
)

RULES: list[Rule] = [RULE]
