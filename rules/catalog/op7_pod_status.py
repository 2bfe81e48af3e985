"""OP-7.35: Kubernetes says the server's container is not running: what its status means, and where the cause is.

Why a rule of its own: on call, the first thing a person sees of a vLLM deployment on Kubernetes is often
`kubectl get pods`, and the first thing they paste is its STATUS column or `kubectl describe pod`'s events. Each
status is the kubelet's, not vLLM's, and says where to look next: CrashLoopBackOff is a container that keeps
exiting (its previous run's log and exit code hold why: 137 is a kill, the OOM killer or a liveness probe that gave
up while the model loaded); ImagePullBackOff and ErrImagePull are an image that cannot be pulled (a tag that does
not exist, a private registry without a pull secret, a node without a route to the registry); a
CreateContainerConfigError names a Secret or ConfigMap the pod references (the Hugging Face token, most often)
that does not exist; a Pod stuck Pending was placed on no node (OP-7.31 reads the scheduler's reasons); an Evicted
pod was stopped by the kubelet to save its node's disk or memory (pkg/kubelet/eviction/helpers.go words it): a vLLM
pod most often for the model's weights downloaded into its own ephemeral storage. It is a
fallback: a finding that names the cause of the container's exits (OP-7.30's OOM kill, a probe killing a loading
server, vLLM's own error) is at least as severe and takes its place.
The page often comes before any of that: kube-prometheus-stack's alerts from the Kubernetes monitoring mixin
(KubePodCrashLooping, KubeContainerWaiting, KubePodNotReady; kubernetes-monitoring/kubernetes-mixin,
alerts/apps_alerts.libsonnet) state the same statuses from kube-state-metrics, with the pod's namespace and container,
so the notification reads as the status and the commands name that pod. KubePodNotReady fires for a pod Pending or
Unknown, or Running and not Ready, for 15 minutes: for vLLM, a pod not scheduled or not started, or a server whose
/health does not answer (still loading, or its engine dead).
Sources: the kubelet's waiting reasons in Kubernetes' source (pkg/kubelet/images/types.go: ErrImagePull,
ImagePullBackOff, InvalidImageName; pkg/kubelet/container/sync_result.go: CrashLoopBackOff, RunContainerError;
pkg/kubelet/kuberuntime/kuberuntime_container.go: CreateContainerConfigError, CreateContainerError), and the
Kubernetes documentation's "Debug Running Pods" (`kubectl logs --previous`).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_CRASH = ("CrashLoopBackOff", "RunContainerError", "CreateContainerError", "Terminated")
_EXITED = ("Exited",)  # Docker Compose's word for a service's container that stopped
_IMAGE = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName")
_CONFIG = ("CreateContainerConfigError",)
_MOUNT = ("FailedMount",)
_WAITING = ("Pending", "ContainerCreating", "Waiting")
_NOT_READY = ("NotReady",)
_EVICTED = ("Evicted",)
# What an image pull's error says went wrong, in the registry's or the runtime's words.
_PULL_REASONS = (
    (
        ("toomanyrequests", "pull rate limit", "429 Too Many Requests"),
        "the registry's pull rate limit was reached (Docker Hub limits unauthenticated and free accounts' pulls)",
    ),
    (("repository does not exist",), "no repository of that name, or a private one the client is not logged in to"),
    (("not found", "manifest unknown", "NotFound"), "the tag does not exist in that repository"),
    (("unauthorized", "denied", "authentication required", "forbidden"), "the registry refused the node's credentials"),
    (
        ("i/o timeout", "dial tcp", "no such host", "connection refused", "TLS handshake"),
        "the node cannot reach the registry",
    ),
)


def _check_pod_status(facts: Facts) -> list[Finding]:
    statuses = facts.events_of(LogEventKind.POD_STATUS)
    if not statuses:
        return []
    # the status that says most: a crash or a pull before a pod still waiting
    order = (*_EVICTED, *_CRASH, *_EXITED, *_IMAGE, *_CONFIG, *_MOUNT, *_WAITING, *_NOT_READY)
    shown = min(statuses, key=lambda e: order.index(_bare(e)) if _bare(e) in order else len(order))
    status = _bare(shown)
    if status in _EVICTED:
        return [_evicted_finding(shown, [e for e in statuses if _bare(e) in _EVICTED])]
    if status in _IMAGE:
        return [_image_finding(shown, [e for e in statuses if e.image or e.message])]
    if status in _CONFIG:
        return [_config_finding(shown, [e for e in statuses if e.message])]
    if status in _MOUNT:
        return [_mount_finding(shown)]
    if status in _WAITING:
        return [_waiting_finding(shown, status)]
    if status in _NOT_READY:
        return [_not_ready_finding(shown)]
    if status in _EXITED:
        return [_exited_finding(shown)]
    return [_crash_finding(shown, max((e.restarts or 0) for e in statuses))]


def _bare(event: LogEvent) -> str:
    return (event.pod_status or "").removeprefix("Init:")


def _who(event: LogEvent) -> str:
    where = f"{event.namespace}/" if event.namespace else ""
    return f"pod {where}{event.pod}" if event.pod else "the pod"


def _pod_args(event: LogEvent) -> str:
    """The pod as kubectl takes it: its name, and its namespace where the text named one."""
    return f"{event.pod or '<pod>'}" + (f" -n {event.namespace}" if event.namespace else "")


def _alerted(event: LogEvent) -> str:
    """Where the status came from an alert rather than kubectl: a sentence saying which, for the summary."""
    return (
        f" (The alert {event.component} states it; kube-state-metrics reads it from the pod.)"
        if _is_alert(event)
        else ""
    )


def _is_alert(event: LogEvent) -> bool:
    return (event.component or "").startswith("Kube")


def _vllm_tag(image: str | None) -> str:
    """vLLM's own image with a release tag written without its `v` (`vllm/vllm-openai:0.11.0`): the tag it has."""
    repository, _, tag = (image or "").rpartition(":")
    if repository.endswith("vllm/vllm-openai") and tag[:1].isdigit():
        return f" (vLLM's images are tagged v{tag}, not {tag}: {repository}:v{tag})"
    return ""


def _crash_finding(shown: LogEvent, restarts: int) -> Finding:
    pod = _pod_args(shown)
    container = f" -c {shown.container}" if shown.container else ""
    several = "" if shown.container else " (add `-c <container>` for a pod of several containers)"
    times = f", {restarts} restarts" if restarts else ""
    once = shown.pod_status == "Terminated"  # a tool's word for one stop with a code: no restart claimed
    title = (
        f"{_who(shown)}'s container exited with an error code: why is in its log"
        if once
        else f"{_who(shown)}'s container keeps exiting and Kubernetes keeps restarting it ({shown.pod_status}{times}): "
        "why it exits is in its last run's log"
    )
    summary = (
        "The container stopped with a code other than 0; the words that say so do not say why. vLLM printed the "
        "cause before it exited, and `kubectl describe pod` shows how it ended (State or Last State: Terminated, "
        "its Reason and Exit Code)."
        if once
        else "CrashLoopBackOff is the kubelet waiting longer and longer before starting a container that exited "
        "again; it says nothing of why. The container's previous run printed the cause before it exited, and "
        "`kubectl describe pod` shows how it ended (Last State: Terminated, its Reason and Exit Code)."
    )
    read = (
        f"Read its log: `kubectl logs {pod}{container} | servops triage --logs -` (with `--previous` once it has "
        f"restarted){several}."
        if once
        else f"Read the previous run's log: `kubectl logs {pod}{container} --previous | servops triage --logs -`"
        f"{several}."
    )
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        title,
        summary=summary + _alerted(shown),
        evidence=[c.log_evidence(shown, name="the pod's status", value=shown.pod_status)],
        actions=[
            read,
            f"`kubectl describe pod {pod} | servops triage --logs -`: Exit Code 137 is a kill (Reason OOMKilled: the "
            "container's memory limit; otherwise a liveness probe that gave up while the model was loading: a "
            "startupProbe covers the load), 1 an error the log ends with.",
        ],
        confidence=0.6,
    )


def _exited_finding(shown: LogEvent) -> Finding:
    """Docker Compose says a service's container stopped and with which code; the container's log says why."""
    name = shown.container or "<container>"
    code = shown.message
    meaning = {
        "137": "137 is a kill (SIGKILL): out of memory when `docker inspect` says OOMKilled (the host's, or a "
        "--memory limit), otherwise a stop that timed out",
        "139": "139 is a crash in native code (SIGSEGV)",
        "1": "1 is an error the log ends with (a traceback, a refused flag)",
    }.get(code or "", "0 is a clean exit, 1 an error the log ends with, 137 a kill (OOMKilled in `docker inspect`)")
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        f"Docker's container {shown.container or ''}".rstrip()
        + " exited"
        + (f" with code {code}" if code else "")
        + ": why is in its log",
        summary="Docker Compose reports that the service's container stopped; it does not say why. vLLM printed "
        "the cause before it exited, and a service that depends on it (`depends_on`) was never started. "
        f"The exit code says which kind of stop it was: {meaning}.",
        evidence=[c.log_evidence(shown, name="the container's exit", value=code or shown.pod_status)],
        actions=[
            f"Read its log: `docker logs {name} 2>&1 | servops triage --logs -` (or `docker compose logs "
            "<service>`); the last lines before the exit name the cause.",
            f"`docker inspect -f '{{{{.State.ExitCode}}}} {{{{.State.OOMKilled}}}}' {name}`: OOMKilled true is the "
            "container's memory limit or the host's RAM, not the GPU's.",
        ],
        confidence=0.6,
    )


def _image_finding(shown: LogEvent, pulls: list[LogEvent]) -> Finding:
    image = next((e.image for e in pulls if e.image), None)
    said = next((e.message for e in pulls if e.message), "")
    reason = next((why for words, why in _PULL_REASONS if any(w.lower() in said.lower() for w in words)), None)
    docker = shown.component == "Docker"  # `docker run`/`docker pull` on a host, not a pod's kubelet
    actions = [
        f"Check that the image exists as written: `docker pull {image or '<image>'}` from a machine that can; vLLM's "
        f"own images are vllm/vllm-openai with a release tag that starts with v (v0.11.0), latest or nightly"
        f"{_vllm_tag(image)}.",
        "For a private registry, or Docker Hub's pull rate limit (an account's is higher), log in first: `docker "
        "login <registry>`."
        if docker
        else "For a private registry, or Docker Hub's pull rate limit (an account's is higher), give the pod an "
        "imagePullSecret for it (`kubectl create secret docker-registry …`, then `imagePullSecrets:` in the pod's "
        "spec).",
        "If the node cannot reach the registry (an air-gapped cluster, a proxy), or keeps meeting its rate limit, "
        "mirror the image into a registry it can reach (or pull through a registry cache).",
    ]
    started = "The container" if docker else _who(shown).capitalize()
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        f"{'Docker' if docker else 'Kubernetes'} cannot pull the server's image {image or ''}".rstrip()
        + (f": {reason}" if reason else f" ({shown.pod_status})"),
        summary=f"{started} has not started: its image could not be pulled, so vLLM never ran "
        + (
            f"(the {'daemon' if docker else 'runtime'} said: {said[:300]})."
            if said
            else f"({shown.pod_status}: the kubelet retries, waiting longer each time)."
        ),
        evidence=[c.log_evidence(e, name="the image pull", value=e.image or e.pod_status) for e in pulls[:2]]
        or [c.log_evidence(shown, name="the pod's status", value=shown.pod_status)],
        actions=actions,
        confidence=0.85 if reason else 0.7,
    )


def _config_finding(shown: LogEvent, missing: list[LogEvent]) -> Finding:
    what = missing[0].message if missing else None
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        f"the pod references {what}, which does not exist in its namespace"
        if what
        else "the pod references a Secret or ConfigMap that does not exist",
        summary=f"{_who(shown).capitalize()}'s container was never created (CreateContainerConfigError): its spec "
        "takes an "
        "environment variable or a volume from a Secret or ConfigMap that is not in the pod's namespace (the "
        "Hugging Face token's Secret, most often).",
        evidence=[c.log_evidence(e, name="the missing object", value=e.message) for e in missing[:1]]
        or [c.log_evidence(shown, name="the pod's status", value=shown.pod_status)],
        actions=[
            "Create it in the pod's namespace under the name the spec uses (`kubectl create secret generic <name> "
            "--from-literal=<key>=<value> -n <namespace>`), or correct the name or key in the spec.",
        ],
        confidence=0.85 if what else 0.7,
    )


# What the kubelet's volume events say, by the word the reader put first: (what happened, where to look).
_MOUNTS: dict[str, tuple[str, str]] = {
    "missing": (
        "the PersistentVolumeClaim it mounts does not exist in its namespace",
        "Create the claim (the model cache's, most often) in the pod's namespace under the name the spec uses, or "
        "correct the claim's name in the spec: `kubectl get pvc -n <namespace>`.",
    ),
    "attached elsewhere": (
        "its volume is attached to another node (ReadWriteOnce)",
        "A ReadWriteOnce volume attaches to one node at a time: during a rollout the old pod on another node still "
        "holds it. Use the Deployment's Recreate strategy (or a StatefulSet) for a single-writer model cache, or a "
        "ReadWriteMany volume, or keep the new pod on the same node.",
    ),
    "failed": (
        "the node could not mount one of its volumes",
        "The kubelet's words in the parentheses say why: an NFS server that refused or did not answer (`mount "
        "failed: exit status 32`, the node's `dmesg`), a CSI driver failing on the node (its node pod's log, `kubectl "
        "describe pvc <claim>`); the pod stays ContainerCreating while the kubelet retries.",
    ),
    "timed out": (
        "its volumes were not attached and mounted in time",
        "`kubectl describe pvc <claim>` and `kubectl get volumeattachment`: a claim still Pending (no volume bound, "
        "a StorageClass that cannot provision), a volume in another zone than the node, or a CSI driver failing on "
        "the node (its pods' logs).",
    ),
}


def _mount_finding(shown: LogEvent) -> Finding:
    said = shown.message or ""
    key, _, what = said.partition(": ")
    happened, look = _MOUNTS.get(key, _MOUNTS["timed out"])
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        f"{_who(shown)} cannot start: {happened} ({what})" if what else f"{_who(shown)} cannot start: {happened}",
        summary="The kubelet mounts a pod's volumes before it starts the container, so vLLM never ran; the pod stays "
        "ContainerCreating while the kubelet retries.",
        evidence=[c.log_evidence(shown, name="the volume", value=what or said)],
        actions=[look],
        confidence=0.8,
    )


# What the kubelet evicts for, by the resource's kind: (why a vLLM pod, actions).
_EVICTIONS: dict[str, tuple[str, list[str]]] = {
    "storage": (
        "A container's writable layer and its emptyDir volumes are the pod's local ephemeral storage. A vLLM "
        "server writes the model's weights there when its Hugging Face cache (HF_HOME; /root/.cache/huggingface in "
        "vLLM's image) is not a volume of its own, and vLLM's compile cache (VLLM_CACHE_ROOT, ~/.cache/vllm) beside "
        "them: tens of gigabytes no request declared, so the kubelet evicts it first when the node's disk runs low, "
        "and the pod that replaces it downloads everything again.",
        [
            "Put the model cache on a volume: a PersistentVolumeClaim (or a hostPath the node's servers share) "
            "mounted at /root/.cache/huggingface, or wherever HF_HOME points; the weights are then downloaded once "
            "and no longer count as the pod's ephemeral storage.",
            "If the cache stays on the node's disk (an emptyDir), declare it: resources.requests.ephemeral-storage of "
            "the container at least the model's size on disk plus its compile cache, so the scheduler places the pod "
            "on a node with that much room, and a limit and an emptyDir sizeLimit above it (`kubectl describe node "
            "<node>` shows what the node can give).",
        ],
    ),
    "memory": (
        "When the node's memory runs low the kubelet evicts pods, first those using more than they requested. A "
        "vLLM server's host memory (its API server and engine processes, weights staged through CPU memory while "
        "loading, pinned buffers, any CPU offload of weights or KV cache) is often far above a request written for "
        "a small service.",
        [
            "Give the container a memory request equal to its limit, at least the server's peak host memory "
            "(`kubectl top pod` during load): a pod within its requests is evicted after those above theirs, and one "
            "whose every request equals its limit is in the Guaranteed class, evicted last.",
            "`kubectl describe node <node>` (Allocated resources, the MemoryPressure condition) shows what else on the "
            "node grew.",
        ],
    ),
}


def _evicted_finding(shown: LogEvent, evictions: list[LogEvent]) -> Finding:
    said = next((e for e in evictions if e.insufficient), shown)
    resource = said.insufficient[0] if said.insufficient else None
    why, actions = _EVICTIONS.get(
        "storage" if resource and "storage" in resource else resource or "",
        (
            "The kubelet evicts pods to keep the node alive when one of its resources runs low; the pods' own "
            "requests decide which go first.",
            [
                f"`kubectl describe pod {_pod_args(shown)} | servops triage --logs -`: the eviction message says "
                "which resource ran low, which container used it and what it requested."
            ],
        ),
    )
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        f"Kubernetes evicted {_who(shown)}: {said.message}"
        if said.message
        else f"Kubernetes evicted {_who(shown)}: its eviction message says which resource the node ran low on",
        summary=f"The kubelet stopped the server and marked its pod Evicted (status Failed); vLLM did not fail. {why}",
        evidence=[c.log_evidence(said, name="evicted for", value=resource or "Evicted")],
        actions=actions,
        confidence=0.85 if resource else 0.6,
    )


def _waiting_finding(shown: LogEvent, status: str) -> Finding:
    summary = {
        "Pending": "Pending is a pod the scheduler has placed on no node (not enough free nvidia.com/gpu, a taint it "
        "does not tolerate, a node selector nothing matches).",
        "ContainerCreating": "ContainerCreating lasts while the node pulls the image (vLLM's images weigh gigabytes) "
        "and attaches the pod's volumes (a model cache volume that will not mount holds it here).",
    }.get(
        status,
        "The container has not started: the kubelet is still preparing it (an init container running, the image "
        "pulling, the volumes mounting).",
    )
    title = {
        "Pending": f"{_who(shown)} is Pending: no node has taken it yet",
        "ContainerCreating": f"{_who(shown)} is ContainerCreating: its container is still being created",
    }.get(status, f"{_who(shown)}'s container is still waiting to start")
    return RULE_POD_STATUS.finding(
        Severity.MEDIUM,
        title,
        summary=summary + _alerted(shown),
        evidence=[c.log_evidence(shown, name="the pod's status", value=status)],
        actions=[f"`kubectl describe pod {_pod_args(shown)} | servops triage --logs -`: its events say why."],
        confidence=0.6,
    )


def _not_ready_finding(shown: LogEvent) -> Finding:
    pod = _pod_args(shown)
    return RULE_POD_STATUS.finding(
        Severity.HIGH,
        f"{_who(shown)} has stayed not Ready: it is not scheduled or not started, or vLLM in it does not answer its "
        "readiness probe",
        summary="Kubernetes sends a pod traffic only once it is Ready. One that stays not Ready is either Pending "
        "(no node with the GPUs it asks for, or its image and volumes still coming) or Running with its readiness "
        "probe failing: vLLM answers /health only once the model is loaded and its engine runs, and answers 503 once "
        "the engine has died. Loading a large model takes minutes, rarely a quarter of an hour." + _alerted(shown),
        evidence=[c.log_evidence(shown, name="the pod's status", value="NotReady")],
        actions=[
            f"`kubectl get pod {pod}` says which: Pending (`kubectl describe pod {pod} | servops triage --logs -`: "
            "its events say why) or Running and 0/1 Ready.",
            f"Running: `kubectl logs {pod} | servops triage --logs -` shows whether vLLM is still loading, failed to "
            "start, or lost its engine.",
        ],
        confidence=0.6,
    )


RULE_POD_STATUS = Rule(
    code="OP-7.35",
    title="Kubernetes says the server's container is not running",
    category=Category.STARTUP,
    check=_check_pod_status,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="`kubectl get pods`' STATUS (CrashLoopBackOff, ImagePullBackOff, ErrImagePull, InvalidImageName, "
        "CreateContainerConfigError, CreateContainerError, RunContainerError, Pending, ContainerCreating) or `kubectl "
        'describe pod`\'s Reason and events (`Back-off restarting failed container`, `Failed to pull image "…": …`, '
        '`Error: secret "…" not found`, the volume manager\'s `MountVolume.SetUp failed for volume "…" : '
        'persistentvolumeclaim "…" not found`, `Unable to attach or mount volumes: … timed out waiting for the '
        'condition`, `Multi-Attach error for volume "…"`, any other `MountVolume.SetUp failed for volume "…" : …` '
        "with the kubelet's reason), any line holding a status only Kubernetes prints (CrashLoopBackOff, "
        "ImagePullBackOff, ErrImagePull, Create/RunContainer…Error: a dashboard's `Pod: NAME - CrashLoopBackOff`), "
        "the kubelet's eviction messages (`The node was low on "
        "resource: …`, a container's or the pod's ephemeral-storage limit, an emptyDir's sizeLimit); the Docker "
        "daemon's failed pulls (`manifest for … not found: manifest unknown`, `pull access denied for …, repository "
        "does not exist`, `toomanyrequests: You have reached your pull rate limit`); and the Kubernetes monitoring "
        "mixin's alerts on a pod, as kube-prometheus-stack pages with them (KubePodCrashLooping's `Pod ns/pod "
        '(container) is in waiting state (reason: "CrashLoopBackOff")` or, in older releases, `is restarting N times / '
        "5 minutes`; KubeContainerWaiting's `… has been in waiting state for longer than 1 hour` with its reason; "
        "KubePodNotReady's `… has been in a non-ready state for longer than 15 minutes`), with the pod's namespace and "
        "container put into the kubectl commands; `kubectl logs`' own answer for a container not started yet "
        '(`container "…" in pod "…" is waiting to start: ContainerCreating`, `… trying and failing to pull image`); '
        "Docker Compose's stopped service (`vllm-1 exited with code 137`, `dependency failed to start: container … "
        "exited (1)`: its log, and what the code means) and llm-d-benchmark's `Crashed container in pod: …` (one "
        "stop with a code, not a restart loop).",
        why="Each status is the kubelet's, not vLLM's, and says where the cause is: the previous run's log, the image "
        "reference or the registry, a missing Secret, the scheduler.",
        example="`vllm-7d9f8b6c5d-x2k4p   0/1   CrashLoopBackOff   6 (2m ago)   12m`: `kubectl logs "
        "vllm-7d9f8b6c5d-x2k4p --previous` holds why it exits.",
        fix="Read what the status points at (the previous log, describe's events); fix the image reference or pull "
        "secret; create the missing Secret; put the model cache on a volume (or request the ephemeral storage it "
        "needs) for a disk eviction, a memory request at the server's peak for a memory one.",
        limits="A fallback: a finding that names why the container exits (an OOM kill, a probe killing a loading "
        "server, vLLM's own error) is at least as severe and replaces it. The pod's events are read only as far as "
        "their words above; a Pending pod's scheduling reasons are OP-7.31's.",
        references=[
            "https://kubernetes.io/docs/tasks/debug/debug-application/debug-running-pod/",
            "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-state-waiting",
            "https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/",
            "https://github.com/kubernetes-monitoring/kubernetes-mixin/blob/master/alerts/apps_alerts.libsonnet",
        ],
    ),
)

RULES: list[Rule] = [RULE_POD_STATUS]
