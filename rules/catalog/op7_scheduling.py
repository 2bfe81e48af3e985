"""OP-7.31: Kubernetes placing the server's pod on no node (the scheduler's FailedScheduling).

Why a rule: a vLLM deployment that never starts leaves no vLLM log at all; what an on-call engineer has is
`kubectl describe pod`'s event `0/4 nodes are available: 4 Insufficient nvidia.com/gpu. …`. The scheduler gives
each GPU (an extended resource such as nvidia.com/gpu) whole to one pod and places a pod only on a node with as
many free as it requests, and a node's taint keeps off every pod without a matching toleration (Kubernetes'
documentation: scheduling GPUs, taints and tolerations). A Deployment's default update strategy, RollingUpdate
with maxSurge 25% (one pod, rounded up) and maxUnavailable 25% (none, rounded down), starts the new pod before
the old one frees its GPUs, so a server using every GPU it may have cannot roll out (Kubernetes' Deployment
documentation). vLLM uses tensor-parallel-size × pipeline-parallel-size GPUs per server, on one node unless it
runs across nodes. When the cluster autoscaler is there to add a node, its own event (`pod didn't trigger scale-up:
…`, NotTriggerScaleUp) says per node group why it added none: a group at its maximum size, one in backoff after a
scale-up that failed (no quota or capacity for the GPU type), a machine type without the GPUs requested, a group
whose nodes do not match the pod's selector (the autoscaler's FAQ).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

AUTOSCALER = "cluster-autoscaler"
# What the cluster autoscaler says of its node groups when it adds none for the pod, and what each asks for.
_SCALE_UP_REASONS = (
    (
        "max node group size reached",
        "a node group it could grow is at its maximum size",
        "Raise that node group's maximum size (and the cloud account's GPU quota for its machine type).",
    ),
    (
        "in backoff after failed scale-up",
        "a scale-up it tried failed, and it is waiting before the next (the cloud had no capacity or quota for "
        "the GPU machine type, most often)",
        "See why the last scale-up failed: `kubectl -n kube-system describe configmap cluster-autoscaler-status` and "
        "the cloud's events for the node group (quota, or no capacity for that GPU type in the zone).",
    ),
    (
        "Insufficient",
        "no node group's machine type has what the pod requests (Insufficient {resource} on a new node too)",
        "Give the pod a request one machine of a node group can satisfy (its {resource} limit is "
        "tensor-parallel-size × pipeline-parallel-size), or add a node group of a machine type with that many.",
    ),
    (
        "node affinity/selector",
        "no node group's nodes match the pod's nodeSelector or affinity",
        "Match the pod's nodeSelector or affinity to the labels the GPU node group's nodes get.",
    ),
)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.POD_UNSCHEDULABLE)
    scheduler = [e for e in events if e.component != AUTOSCALER]
    autoscaler = [e for e in events if e.component == AUTOSCALER]
    if scheduler:
        return [_finding(scheduler[-1], autoscaler[-1] if autoscaler else None)]
    return [_autoscaler_finding(autoscaler[-1])] if autoscaler else []


def _scale_up(event: LogEvent) -> tuple[list[str], list[str]]:
    """What the autoscaler's reasons mean and what each asks for, in the table's order: a limit the team can raise
    first."""
    said, resource = event.message or "", (event.insufficient or ["nvidia.com/gpu"])[0]
    found = [(why, fix) for words, why, fix in _SCALE_UP_REASONS if words in said]
    return [why.format(resource=resource) for why, _ in found], [fix.format(resource=resource) for _, fix in found]


def _autoscaler_finding(event: LogEvent) -> Finding:
    whys, fixes = _scale_up(event)
    return RULE.finding(
        Severity.CRITICAL,
        "the cluster autoscaler will not add a node for the server's pod: "
        + (whys[0] if whys else f"its reasons: {event.message}" if event.message else "its event gives no reason"),
        summary="The pod waits Pending until a node can take it, and the cluster autoscaler, which would add one, "
        f"found no node group that could: it said `{event.message or ''}` (a count of node groups per reason). "
        "vLLM never starts, so there is no vLLM log.",
        evidence=[c.log_evidence(event, name="the autoscaler's reasons", value=event.message)],
        actions=fixes or ["`kubectl -n kube-system describe configmap cluster-autoscaler-status` says per node group."],
        confidence=0.8,
    )


def _gpu_resources(event: LogEvent) -> list[str]:
    return [resource for resource in event.insufficient if "gpu" in resource.lower()]


def _finding(event: LogEvent, autoscaler: LogEvent | None) -> Finding:
    gpus, others = _gpu_resources(event), [r for r in event.insufficient if "gpu" not in r.lower()]
    nodes = f"none of its {event.nodes_total} nodes" if event.nodes_total else "no node"
    if gpus:
        why = f"none has the GPUs it requests free (Insufficient {gpus[0]})"
    elif event.taints:
        why = f"their taints keep it off ({{{event.taints[0]}}} is not tolerated)"
    elif others:
        why = f"none has the {' and '.join(others)} it requests free"
    else:
        why = f"the scheduler's reasons: {event.message}"
    scale_whys, scale_fixes = _scale_up(autoscaler) if autoscaler is not None else ([], [])
    actions = (
        scale_fixes
        + (_gpu_actions(gpus[0]) if gpus else [])
        + (_taint_actions(event.taints) if event.taints else [])
        + (_request_actions(others) if others else [])
    )
    scaled = f" The cluster autoscaler will not add a node either: {'; '.join(scale_whys)}." if scale_whys else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"Kubernetes can place the server's pod on {nodes}: {why}",
        summary="The pod waits Pending and vLLM never starts, so there is no vLLM log to read: the scheduler's "
        f"event is the whole story. It said: {event.message}.{scaled}",
        evidence=[c.log_evidence(event, name="the scheduler's reasons", value=event.message)]
        + (
            [c.log_evidence(autoscaler, name="the autoscaler's reasons", value=autoscaler.message)]
            if autoscaler
            else []
        ),
        actions=actions or ["Read the pod's spec against the nodes: its nodeSelector and affinity, its requests."],
        confidence=0.85,
    )


def _gpu_actions(resource: str) -> list[str]:
    return [
        f"See who holds the GPUs: `kubectl describe nodes` (Allocated resources: {resource}) and the pods on "
        "them. Often it is the server's own previous pod during a rollout: a Deployment's default RollingUpdate "
        "starts the new pod before the old one frees its GPUs, so give it strategy Recreate, or RollingUpdate with "
        "maxSurge 0 and maxUnavailable 1.",
        f"Request what one node can give: the pod's {resource} limit is what vLLM uses, tensor-parallel-size × "
        "pipeline-parallel-size; more than any node has never schedules (lower the tensor parallelism, or run "
        "across nodes).",
        "Or add GPU capacity (the cluster autoscaler's GPU node group, or free GPUs held by idle pods).",
    ]


def _taint_actions(taints: list[str]) -> list[str]:
    shown = ", ".join(f"{{{taint}}}" for taint in taints)
    return [
        f"Give the pod a toleration for the taint its nodes carry ({shown}) if those are the nodes meant for it "
        "(GPU nodes are usually tainted so that only GPU pods land there), or a nodeSelector for the untainted GPU "
        "nodes."
    ]


def _request_actions(resources: list[str]) -> list[str]:
    return [
        f"Lower the pod's {' and '.join(resources)} requests to what a GPU node has free (`kubectl describe nodes`: "
        "Allocatable and Allocated resources); vLLM's host memory is its weights as they load plus its buffers."
    ]


RULE = Rule(
    code="OP-7.31",
    title="Kubernetes can place the server's pod on no node",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Kubernetes' scheduler: `0/N nodes are available: … Insufficient nvidia.com/gpu …` (FailedScheduling, "
        "`kubectl describe pod`), with the resources nodes lacked and the taints the pod does not tolerate; the "
        "cluster autoscaler's `pod didn't trigger scale-up: …` (NotTriggerScaleUp: a node group at its maximum "
        "size, in backoff after a failed scale-up, of a machine type without the GPUs requested, or not matching "
        "the pod's selector).",
        why="A server that never starts leaves no vLLM log; the scheduler's event names what is missing, and a GPU "
        "deployment's rollout is the usual case (its old pod still holds the GPUs).",
        example="`0/4 nodes are available: 4 Insufficient nvidia.com/gpu` while the previous pod of a one-replica "
        "Deployment still ran on the only GPU node.",
        fix="Strategy Recreate (or maxSurge 0) for a deployment using every GPU; a GPU request one node can give; a "
        "toleration for the GPU nodes' taint; lower CPU or memory requests; for the autoscaler, a larger maximum "
        "size or quota for the GPU node group, or a machine type with the GPUs the pod requests.",
        limits="Reads the scheduler's words, not the cluster: how many GPUs each node has free is `kubectl describe "
        "nodes`.",
        references=[
            "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/",
            "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment",
            "https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/",
            "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md",
        ],
    ),
)

RULES: list[Rule] = [RULE]
