"""OP-3.6: vLLM 0.4's NCCLCommunicator torn down after a failed start (its 'comm' AttributeError)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op3_pynccl_start
from rules.evaluate import evaluate
from rules.facts import Facts

# vllm#4114, verbatim: eight V100s on two nodes, Ray workers
TEARDOWN = "(RayWorkerVllm pid=14289) AttributeError: 'NCCLCommunicator' object has no attribute 'comm'"


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_teardown_alone_points_at_the_earlier_start_failure_and_nccl_debug():
    top = evaluate(_facts([TEARDOWN])).findings[0]
    assert top.rule == "OP-3.6"
    assert "teardown" in top.title
    assert [(change.flag, change.proposed, change.kind) for change in top.changes] == [("NCCL_DEBUG", "INFO", "env")]


def test_beside_the_nccl_error_that_caused_it_the_nccl_rule_answers():
    # vllm#4062's cause, printed before the teardown: NCCL's internal error under the unique id's broadcast
    cause = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
        "internal error - please report this issue to the NCCL developers, NCCL version 2.19.3"
    )
    facts = _facts([cause, TEARDOWN])
    assert op3_pynccl_start.RULE.evaluate(facts) == []
    assert evaluate(facts).findings[0].rule == "OP-3.5"
