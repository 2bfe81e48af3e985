"""OP-7.60: Ray cannot place a Ray Serve replica of the server, or vLLM's own placement group: the cluster has fewer
GPUs free than one needs.

Why a rule of its own: served through Ray Serve (Ray Serve LLM, or a deployment of one's own wrapping vLLM), a
replica starts only once Ray can reserve what it asks for, a vLLM engine's GPUs among it (one bundle per tensor-
and pipeline-parallel worker in its placement group). Until then the replica waits, vLLM never starts and no vLLM
log exists; Serve's controller says so every 30 s: `Deployment '…' has 1 replicas that have taken more than 30s to
be scheduled. … Resources required for each replica: [{"CPU": 1.0, "GPU": 1.0}], total resources available: {…}`
(ray/serve/_private/deployment_state.py). Ray listing no GPU at all is a cluster whose nodes were started without
them (a container without `--gpus`, a KubeRay worker group without an nvidia.com/gpu limit), or one whose
autoscaler has not added a GPU node yet; a few but not enough are held by other replicas or actors.
Sources: Ray Serve's controller warning as KubeRay's RayService troubleshooting documents it ("Deployment … has 1
replicas that have taken more than 30s to be scheduled", in KubeRay's RayService troubleshooting guide);
Ray's documentation on GPU resources (`ray start --num-gpus`, autodetection from CUDA_VISIBLE_DEVICES).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import FRAMEWORK_GPU_REQUEST, VLLM_PLACEMENT_GROUP, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.RAY_REPLICA_UNPLACED)
    return [_finding(events[-1])] if events else []


def _gpus(amount: float) -> str:
    return f"{amount:g} GPU" + ("" if amount == 1 else "s")


def _vllm_waiting(event: LogEvent) -> Finding:
    """vLLM's Ray executor waiting for its own placement group: one GPU bundle per tensor- and pipeline-parallel
    worker, which the cluster cannot reserve (kuberay#3414: a worker pod stuck in Init, its GPUs never joined)."""
    wanted = event.gpus_required
    waited = f" for {event.elapsed_s:g} s" if event.elapsed_s else ""
    asks = f"{_gpus(wanted)} (one per worker)" if wanted else "its GPU bundles"
    return RULE.finding(
        Severity.CRITICAL,
        f"Ray cannot reserve vLLM's placement group of {asks}: vLLM has waited{waited} and starts no worker until "
        "it can",
        summary="With the Ray executor vLLM reserves a placement group of one GPU bundle per tensor- and "
        "pipeline-parallel worker before it starts them, and logs that it is still waiting until it gives up "
        "('Cannot provide a placement group …'). The cluster has fewer GPUs free than the group asks for: a worker "
        "node that never joined (a pod stuck pending or in Init, a node without its GPUs), GPUs held by other actors, "
        "or more GPUs asked for than the cluster has. vLLM's own words add one more: the IP addresses Ray uses must "
        "match VLLM_HOST_IP on each node.",
        evidence=[
            c.log_evidence(event, name="GPUs the placement group asks for", value=wanted, unit="GPU")
            if wanted
            else c.log_evidence(event, name=f"{event.component or 'Ray'}'s unplaced bundle")
        ],
        actions=[
            "`ray status` on the head: the cluster's GPU total must reach the group's; each worker node listed. On "
            "Kubernetes, `kubectl get pods` for the RayCluster: a worker pod pending or in Init never gave its GPUs.",
            "Ask for what the cluster has: --tensor-parallel-size × --pipeline-parallel-size no larger than the GPUs "
            "Ray lists; or add the missing GPU nodes.",
            "With several network interfaces, set VLLM_HOST_IP on every node to the address Ray registered it with "
            "(`ray status` / `ray list nodes`).",
        ],
        confidence=0.8,
    )


def _framework_short(event: LogEvent) -> Finding:
    """A framework that runs vLLM on Ray (NeMo-RL's RayVirtualCluster) counted the cluster's GPUs against what its
    configuration asks for before it made any placement group, and retries until they are there (NVIDIA-NeMo/RL PR
    #271's message)."""
    wanted, have = event.gpus_required or 0.0, event.gpus_available or 0.0
    return RULE.finding(
        Severity.CRITICAL,
        f"the job asks Ray for {_gpus(wanted)}, and the cluster has {_gpus(have)}: nothing starts until they are there",
        summary="The framework sizes its Ray cluster from its configuration (nodes × GPUs per node, or the training "
        "and generation workers' parallel sizes) and checks that Ray has that many GPUs before it places any worker, "
        "vLLM's among them; it waits and retries while the cluster is short. Either nodes are missing from the "
        "cluster (not started, or started without their GPUs), or the configuration asks for more than the cluster "
        "will ever have.",
        evidence=[c.log_evidence(event, name="GPUs in the cluster", value=have, unit="GPU")],
        actions=[
            "`ray status` on the head: every node listed with its GPUs; a node missing or showing 0 GPU never joined "
            "with them (`ray start --address … --num-gpus=N` on it, or its container given the GPUs).",
            f"Or ask for {_gpus(have)} at most: the job's node count × GPUs per node, and its generation's tensor-, "
            "pipeline- and data-parallel sizes, within what the cluster has.",
        ],
        confidence=0.85,
    )


def _finding(event: LogEvent) -> Finding:
    if event.message == VLLM_PLACEMENT_GROUP:
        return _vllm_waiting(event)
    if event.message == FRAMEWORK_GPU_REQUEST:
        return _framework_short(event)
    name = event.message or "the deployment"
    wanted, free = event.gpus_required, event.gpus_available or 0.0
    short_of_gpus = wanted is not None and free < wanted
    if short_of_gpus:
        why = f"one needs {_gpus(wanted or 0)}, the cluster has {_gpus(free)} free"
    elif event.component:
        why = f"the cluster has less {event.component} free than one needs"
    else:
        why = "the resources it asks for are not free"
    none_at_all = short_of_gpus and free == 0
    return RULE.finding(
        Severity.CRITICAL,
        f"Ray cannot place a replica of Serve deployment {name}: {why}",
        summary="Ray Serve starts a replica only once Ray can reserve what it asks for (a vLLM engine's placement "
        "group: one GPU per tensor- and pipeline-parallel worker), so the replica waits and vLLM never starts. "
        + (
            "Ray lists no GPU free at all: its nodes were started without GPUs, or the autoscaler has not added a "
            "GPU node yet."
            if none_at_all
            else "Other replicas or actors hold what it needs, or the cluster is smaller than one replica."
        ),
        evidence=[c.log_evidence(event, name="GPUs free for a replica", value=free, unit="GPU")],
        actions=_actions(none_at_all),
        confidence=0.85 if short_of_gpus else 0.7,
    )


def _actions(none_at_all: bool) -> list[str]:
    see = "`ray status` lists each node's resources and what is in use; `ray list placement-groups` the ones waiting."
    if none_at_all:
        return [
            see,
            "Give Ray's nodes their GPUs: the worker containers started with them (`docker run --gpus all`; a "
            "KubeRay worker group with an nvidia.com/gpu limit), `ray start --num-gpus=N` where Ray cannot detect "
            "them; with an autoscaler, a GPU worker group it can scale to.",
        ]
    return [
        see,
        "Ask for what the cluster can give: a smaller tensor_parallel_size × pipeline_parallel_size in the "
        "deployment's engine config, or fewer replicas (num_replicas, the autoscaling config's max); or add GPU nodes.",
    ]


RULE = Rule(
    code="OP-7.60",
    title="Ray cannot place the server's GPUs: a Ray Serve replica, or vLLM's own placement group",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Ray Serve's `Deployment '…' has N replicas that have taken more than 30s to be scheduled. … Resources "
        "required for each replica: …, total resources available: {…}`: a replica's GPUs summed over its bundles "
        "against the GPUs Ray has free; vLLM's own `Waiting for creating a placement group of specs for N seconds. "
        "specs=[{'GPU': 1.0, …}, …]` (its Ray executor, one bundle per worker); NeMo-RL's `Not enough GPUs "
        "available. Requested N GPUs, but only M are available in the cluster.`",
        why="A replica Ray cannot reserve resources for never starts vLLM, so no vLLM log tells why; the controller's "
        "warning holds both numbers.",
        example='`Resources required for each replica: [{"CPU": 1.0, "GPU": 1.0}], total resources available: '
        "{}` for Ray Serve LLM's LLMServer on a kind cluster whose Docker nodes had no GPU configured.",
        fix="Ray's nodes started with their GPUs (or a GPU worker group the autoscaler can add); or a replica that "
        "asks for fewer GPUs, fewer replicas, more GPU nodes.",
        limits="Reads what the controller printed at one moment; `ray status` says what holds the GPUs now.",
        references=[
            "https://docs.ray.io/en/latest/cluster/kubernetes/troubleshooting/rayservice-troubleshooting.html",
            "https://docs.ray.io/en/latest/ray-core/scheduling/accelerators.html",
            "https://github.com/ray-project/kuberay/issues/3414",
        ],
    ),
)

RULES: list[Rule] = [RULE]
