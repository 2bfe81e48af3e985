"""OP-3.7: a step of Ray's compiled graph did not finish within RAY_CGRAPH_get_timeout.

Why a rule of its own: with the Ray executor, vLLM runs each step (the model's forward on every worker and the tensors
passed between them) as a Ray compiled graph, and the engine core waits for its result at most RAY_CGRAPH_get_timeout
seconds. Ray's default is 10 s, which vLLM 0.8.4 still ran with (vllm#16692); vLLM 0.32's ray_executor.py sets 300 s
unless the environment sets it, and only before ray.dag is imported (vllm#19703: a value set later is not seen). When
a step takes longer, Ray raises `RayChannelTimeoutError` (`… increase RAY_CGRAPH_get_timeout which is currently N
seconds. Otherwise, this may indicate that the execution is hanging.`, or `Timed out waiting for object available to
read`) and the engine dies. Either the step is legitimately long (large batches of long sequences, tensor parallelism
across nodes whose every layer waits on the network) or a worker hung. In vllm#15102 (DeepSeek-V3 at TP 16 over two
H20 nodes, vLLM 0.8.0) vLLM's Ray maintainer advised a larger RAY_CGRAPH_get_timeout and RAY_CGRAPH_submit_timeout,
or tensor parallelism within a node and pipeline parallelism across nodes; the reporter confirmed TP 8 with PP 2 ran.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

TIMED_OUT = re.compile(
    r"RayChannelTimeoutError|increase RAY_CGRAPH_get_timeout|Timed out waiting for object available to read"
)
CURRENT = re.compile(r"RAY_CGRAPH_get_timeout which is currently (?P<seconds>\d+) seconds")
GET_TIMEOUT = "RAY_CGRAPH_get_timeout"
VLLM_DEFAULT_S = 300  # what vLLM 0.32 sets when the environment does not (Ray's own default: 10 s)


def _timed_out(facts: Facts) -> LogEvent | None:
    return next((e for e in facts.events_of(*c.RELAYED_TOO) if TIMED_OUT.search(e.message or e.raw or "")), None)


def _check_ray_cgraph(facts: Facts) -> list[Finding]:
    event = _timed_out(facts)
    if event is None:
        return []
    current = CURRENT.search(event.message or event.raw or "")
    seconds = int(current["seconds"]) if current else None
    short = seconds is not None and seconds < VLLM_DEFAULT_S
    limit = f"{seconds} s" if seconds is not None else "its limit"
    change = ConfigChange(
        flag=GET_TIMEOUT,
        current=str(seconds) if seconds is not None else None,
        proposed=str(VLLM_DEFAULT_S if short else max(2 * (seconds or VLLM_DEFAULT_S), VLLM_DEFAULT_S)),
        reason="the longest a step may take before the engine gives up; set in the server's environment before it "
        "starts (vLLM reads it only before importing ray.dag), with RAY_CGRAPH_submit_timeout beside it",
        cost="a worker that really hangs is noticed that much later",
        kind="env",
    )
    return [
        RULE.finding(
            Severity.HIGH,
            f"a step of Ray's compiled graph took longer than {GET_TIMEOUT} ({limit}): "
            + ("the timeout is Ray's short default" if short else "a worker stalled, or the step outgrew the timeout"),
            summary="With the Ray executor each engine step is a Ray compiled graph; the engine waits for it at most "
            f"{GET_TIMEOUT} seconds and dies when that passes. "
            + (
                f"{seconds} s is Ray's own default, which older vLLM releases did not raise: a long prefill or a "
                f"large batch can take longer (vLLM 0.32 sets {VLLM_DEFAULT_S} s)."
                if short
                else "A step longer than that is a worker that hung (a collective waiting on a peer, a worker that "
                "died) or tensor parallelism across nodes, where every layer waits on the network."
            ),
            evidence=[c.log_evidence(event, name="Ray's channel timeout", value=limit)],
            changes=[change] if short else [],
            alternatives=[] if short else [change],
            actions=[
                "Read the Ray workers' own logs at that time (`ray logs`, or the driver's `(RayWorkerWrapper …)` "
                "lines): a worker's error or an NCCL timeout there is the cause, and no timeout fixes it.",
                "If tensor parallelism spans nodes, keep it within a node and go across nodes with pipeline "
                "parallelism (vllm#15102: --tensor-parallel-size 8 --pipeline-parallel-size 2 on two 8-GPU nodes "
                "ran where TP 16 timed out); or use the multiprocessing backend on one node.",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-3.7",
    title="Ray's compiled graph timed out waiting for a step",
    category=Category.PARALLELISM,
    check=_check_ray_cgraph,
    needs=("events",),
    page=RulePage(
        checks="Ray's `RayChannelTimeoutError` (`… increase RAY_CGRAPH_get_timeout which is currently N seconds`, "
        "`Timed out waiting for object available to read`) in the engine's log.",
        why="The engine dies when a step of the Ray executor's compiled graph outlasts RAY_CGRAPH_get_timeout: "
        "Ray's 10 s default under older vLLM, or a worker that hung.",
        example="`ray.exceptions.RayChannelTimeoutError: System error: If the execution is expected to take a long "
        "time, increase RAY_CGRAPH_get_timeout which is currently 10 seconds.` (vllm#16692, vLLM 0.8.4, TP 16 "
        "over two nodes).",
        fix="RAY_CGRAPH_get_timeout=300 in the server's environment where it was Ray's 10 s; otherwise the workers' "
        "logs, and tensor parallelism within a node with pipeline parallelism across nodes.",
        limits="Whether a worker hung or the step is only slow is in the workers' logs, not in this line.",
        references=[
            "https://github.com/vllm-project/vllm/issues/15102",
            "https://github.com/vllm-project/vllm/issues/16692",
            "https://github.com/vllm-project/vllm/issues/19703",
        ],
    ),
)

RULES: list[Rule] = [RULE]
