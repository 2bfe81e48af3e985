"""OP-7.31: Kubernetes' scheduler placing the server's pod on no node, read from `kubectl describe pod`."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_scheduling
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_no_free_gpu_names_the_rollout_that_holds_them_and_the_request_one_node_can_give():
    line = (
        "  Warning  FailedScheduling  3m (x12 over 58m)  default-scheduler  0/4 nodes are available: 4 Insufficient "
        "nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    )
    top = evaluate(_facts(line)).findings[0]
    assert top.rule == "OP-7.31" and top.title == (
        "Kubernetes can place the server's pod on none of its 4 nodes: none has the GPUs it requests free "
        "(Insufficient nvidia.com/gpu)"
    )
    assert "strategy Recreate, or RollingUpdate with maxSurge 0" in top.actions[0]
    assert "tensor-parallel-size × pipeline-parallel-size" in top.actions[1]


def test_a_taint_and_other_resources_each_get_their_fix():
    [finding] = op7_scheduling.RULE.evaluate(
        _facts(
            "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
            "2 Insufficient memory, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available"
        )
    )
    assert "Insufficient nvidia.com/gpu" in finding.title
    assert any(
        "toleration for the taint its nodes carry ({node-role.kubernetes.io/control-plane:})" in a
        for a in finding.actions
    )
    assert any(a.startswith("Lower the pod's memory requests") for a in finding.actions)
    [tainted] = op7_scheduling.RULE.evaluate(
        _facts("0/2 nodes are available: 2 node(s) had taint {nvidia.com/gpu: true}, that the pod didn't tolerate.")
    )
    assert tainted.title.endswith("their taints keep it off ({nvidia.com/gpu: true} is not tolerated)")


AUTOSCALER_MAX = (
    "  Normal   NotTriggerScaleUp  2m  cluster-autoscaler  pod didn't trigger scale-up: 2 Insufficient nvidia.com/gpu, "
    "1 max node group size reached"
)


def test_the_autoscalers_refusal_alone_names_the_group_at_its_maximum_first():
    [finding] = op7_scheduling.RULE.evaluate(Facts(events=parse_lines([AUTOSCALER_MAX]).events))
    assert finding.title == (
        "the cluster autoscaler will not add a node for the server's pod: a node group it could grow is at its "
        "maximum size"
    )
    assert finding.actions[0].startswith("Raise that node group's maximum size")
    assert finding.actions[1].startswith("Give the pod a request one machine of a node group can satisfy")


def test_beside_the_schedulers_event_the_autoscalers_reasons_join_its_finding():
    lines = [
        "  Warning  FailedScheduling   5m  default-scheduler   0/3 nodes are available: 3 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        "  Normal   NotTriggerScaleUp  2m  cluster-autoscaler  pod didn't trigger scale-up: 1 in backoff after failed "
        "scale-up",
    ]
    [finding] = op7_scheduling.RULE.evaluate(Facts(events=parse_lines(lines).events))
    assert finding.title.startswith("Kubernetes can place the server's pod on none of its 3 nodes")
    assert "The cluster autoscaler will not add a node either: a scale-up it tried failed" in finding.summary
    assert "cluster-autoscaler-status" in finding.actions[0] and len(finding.evidence) == 2
