"""OP-3.10: a request routed to a data-parallel rank the API server that took it does not hold.

Why a rule of its own: with data parallelism vLLM's front end keeps a list of the engines it talks to and sends each
request to the least busy one, unless the request names a rank (the `X-data-parallel-rank` header, or a router that
passes `data_parallel_rank` to the engine client): then it indexes its list with that rank
(`vllm/v1/engine/core_client.py`, `get_core_engine_for_request`: `self.core_engines[eng_index]`). A rank outside the
list fails the request with a bare `IndexError: list index out of range` and names nothing of the deployment.
ai-dynamo/dynamo#5001 met it on a two-node DeepSeek-R1 deployment (--data-parallel-size 16,
--data-parallel-size-local 8): the operator passed `--data-parallel-start-rank 0` to both nodes, so both held ranks
0-7 and the router's ranks 8-15 matched no engine of the node it chose.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# vLLM's front-end method that picks the engine for a request, and Python's words for the rank past its list
ROUTER = "get_core_engine_for_request"
_OUT_OF_RANGE = re.compile(r"IndexError\b|list index out of range")


def _check_rank_route(facts: Facts) -> list[Finding]:
    for event in facts.events_of(*c.UNPLACED):
        words = event.message or event.raw or ""
        # the frame's line, when pasted, must be the index by the rank (the load-balancing path indexes its stats)
        by_rank = not event.code or "core_engines[" in event.code
        if _OUT_OF_RANGE.search(words) and (event.function == ROUTER or ROUTER in words) and by_rank:
            return [_rank_route(event)]
    return []


def _rank_route(event: LogEvent) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        "a request named a data-parallel rank this API server holds no engine for",
        summary="vLLM's front end indexes the engines it talks to by the rank a request names (the "
        "X-data-parallel-rank header, or a router's data_parallel_rank), and the rank was past its list. Each node "
        "holds the ranks from its --data-parallel-start-rank up, --data-parallel-size-local of them; a node given "
        "another node's start rank (both 0), or a router that sends a rank to a node that does not hold it, fails "
        "those requests with this IndexError (ai-dynamo/dynamo#5001: both nodes started at rank 0, so ranks 8-15 "
        "matched nothing).",
        evidence=[c.log_evidence(event, name="routing error", value=ROUTER)],
        changes=[
            ConfigChange(
                flag="--data-parallel-start-rank",
                proposed="<this node's index × --data-parallel-size-local>",
                reason="each node starts where the previous one's ranks end (0 on the first, 8 on the second with 8 "
                "local ranks)",
            )
        ],
        actions=[
            "Check each node's --data-parallel-start-rank and --data-parallel-size-local: the ranks they cover must "
            "not overlap and together make --data-parallel-size (an operator or a launch script that writes the "
            "same start rank on every pod is the usual cause).",
            "Check what sends the rank: a router or client setting X-data-parallel-rank must send a node only ranks "
            "that node holds, or leave the header out and let vLLM balance.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-3.10",
    title="a request routed to a data-parallel rank the API server does not hold",
    category=Category.PARALLELISM,
    check=_check_rank_route,
    needs=("events",),
    page=RulePage(
        checks="Python's `IndexError: list index out of range` raised in vLLM's `get_core_engine_for_request` (the "
        "traceback's last frame, or the method named beside the error).",
        why="With data parallelism a request that names a rank is sent to the engine at that index of the front "
        "end's list; a rank the node does not hold fails the request with a bare IndexError.",
        example="`IndexError: list index out of range` in `vllm/v1/engine/core_client.py:get_core_engine_for_request` "
        "on a 2-node, DP 16 deployment whose operator gave both nodes --data-parallel-start-rank 0 "
        "(ai-dynamo/dynamo#5001).",
        fix="Per node, --data-parallel-start-rank = node index × --data-parallel-size-local; a router sends each node "
        "only the ranks it holds.",
        limits="The rank asked for and the node's list are not in the error; which of the two is wrong is the "
        "deployment's to check.",
        references=["https://github.com/ai-dynamo/dynamo/issues/5001"],
    ),
)

RULES: list[Rule] = [RULE]
