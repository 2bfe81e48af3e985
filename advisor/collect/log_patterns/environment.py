"""Failures that come from around vLLM rather than from its own checks: the container's shared memory,
CUDA initialised before vLLM forks its workers, custom all-reduce on a platform that cannot run it, a
system call NCCL made that the host refused, a model whose repository code was not trusted, a compiled
extension built against other libraries, a model type the installed transformers does not know, and a
reasoning model's output whose tags show the chat template opened its reasoning, the GPU itself failing (the
driver's Xid, CUDA's uncorrectable ECC or NVLink error), and the host killing the server for memory
(Kubernetes' OOMKilled, the kernel's OOM killer) or placing it nowhere (its scheduler).

Their words are NCCL's, Ray's, PyTorch's, CUDA's, the NVIDIA driver's or transformers', so vLLM's message catalog
does not hold them; the fixes are documented by vLLM or those projects (docs/environment-failures.md lists the
sources).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import unquote

from advisor.collect.log_patterns.pattern import SHELL_JOB, Fields, Pattern, to_gib, to_int, wording
from rules.catalog.op7_hub import HUB_HOSTS, HUB_RETRIES_EXCEEDED
from rules.events import (
    FRAMEWORK_GPU_REQUEST,
    HCCL_SOCKET,
    NO_PATH,
    PTX_BUILD,
    PTX_CODEGEN_TOO_OLD,
    PTX_TOO_OLD,
    PTX_TRITON,
    RAY_MEMORY_MONITOR,
    RAYLET_TERMINATED,
    SHELL_SIGKILL,
    SYSTEMD_REPORTED,
    TRITON_FP8_TYPE,
    VLLM_BUILD,
    VLLM_PLACEMENT_GROUP,
)
from rules.events import LogEventKind as K
from rules.vllm_defaults import VLLM_TOP_LEVEL_NAMES


def _oom_killed(match: re.Match[str]) -> Fields:
    """Who reported the kill (the kernel names the process and its anonymous memory), and how much it held."""
    if match["shell"]:
        return {"message": match.group(0).strip(), "component": SHELL_SIGKILL}
    if match["unit"]:
        return {"message": match["unit"], "component": SYSTEMD_REPORTED}
    if match["process"] is None:
        reporter = "Docker" if '"OOMKilled"' in match.string else "Kubernetes"
        return {"message": match.group(0), "component": reporter}
    rss_kb = match["rss_kb"]
    return {
        "message": match.group(0),
        "component": "the kernel (a memory cgroup's limit)" if match["cgroup"] else "the kernel",
        "rss_gib": int(rss_kb) / 2**20 if rss_kb else None,
    }


# Ray's reasons for an actor's death (its GCS's words, gcs_actor_manager.cc), and the facts the error lists; a task's
# worker that died says so in the driver's warning (ray/_private/worker.py), or by its exit type and detail alone.
_RAY_DEATH = re.compile(
    r"The actor is dead because (?P<why>its worker process has died|its owner has died|its node has died|it was "
    r"killed by `ray\.kill`|all references to the actor were removed)"
    r"|(?P<why2>A worker died or was killed while executing a task by an unexpected system error)"
    r"|^(?P<why3>)(?=Worker exit type: )"
    # the actor's constructor raised (ActorDiedError's `… because of an error raised in its creation task, ray::
    # <Class>.__init__() (pid=…)`), or a Ray Serve replica's start did (the controller's `Exception in Replica(…), the
    # replica will be stopped.`, the caller's `RayTaskError(…): ray::ServeReplica:…initialize_and_get_metadata()`)
    r"|(?P<why4>error raised in its creation task|Exception in Replica\(|initialize_and_get_metadata\(\))"
)
# who failed to start, as those lines name it: the class before `.__init__()`, or the Serve deployment
_RAY_CREATED = re.compile(
    r"ray::(?P<cls>[\w.]+)\.__init__\(\) \(pid=(?P<pid>\d+)"
    r"|deployment='(?P<deployment>[^']+)'"
    r"|ray::ServeReplica:(?P<replica>[^ ]+?)\.initialize_and_get_metadata\(\) \(pid=(?P<rpid>\d+)"
)
_RAY_WHY = {
    "A worker died or was killed while executing a task by an unexpected system error": "worker",
    "": "worker",
    "its worker process has died": "worker",
    "its owner has died": "owner",
    "its node has died": "node",
    "it was killed by `ray.kill`": "killed",
    "all references to the actor were removed": "unreferenced",
    "error raised in its creation task": "creation",
    "Exception in Replica(": "creation",
    "initialize_and_get_metadata()": "creation",
}
_RAY_EXIT_TYPE = re.compile(r"[Ee]xit type: (?P<type>[A-Z_]+)")
_RAY_DETAIL = re.compile(r"Worker exit detail: (?P<detail>.*?)\s*(?:There are some potential root causes\..*)?$")
_RAY_ACTOR = re.compile(r"\bclass_name: (?P<actor_class>\S+)|\bactor_id: (?P<actor_id>[0-9a-f]+)|\bpid: (?P<pid>\d+)")


def _triton_fp8(match: re.Match[str]) -> Fields:
    """Triton refusing an FP8 type. NVIDIA's E4M3 (fp8e4nv) where Triton offers its own fp8e4b15 (or says nothing
    more) is a GPU before Ada; another type, or a list without fp8e4b15, is the AMD side or a kernel written for
    other GPUs (vllm#16394: MI210's list is fp8e5 alone; vllm PR #43804: fp8e4b15 on MI300)."""
    dtype, supported = match["dtype"] or match["dtype2"], re.sub(r"\s+", "", match["supported"] or "") or None
    if dtype == "fp8e4nv" and (supported is None or "fp8e4b15" in supported):
        return {"message": dtype, "component": PTX_TRITON, "version": "sm_89"}
    offered = ", ".join(re.findall(r"fp8\w+", supported or "")) or None
    return {"message": dtype, "component": TRITON_FP8_TYPE, "accepted_instead": offered}


def _ray_actor_died(match: re.Match[str]) -> Fields:
    """The dead actor's class, id and pid, and Ray's reason with its exit type and detail, as far as the text
    holds them (the error's lines, joined to it or not)."""
    text = match.string
    fields: Fields = {}
    for found in _RAY_ACTOR.finditer(text):  # the first of each: a later `pid:` may be another process's
        name = found.lastgroup or ""
        fields.setdefault(name, int(found[name]) if name == "pid" else found[name])
    if why := _RAY_DEATH.search(text):
        fields["component"] = _RAY_WHY[
            next(w for w in (why["why"], why["why2"], why["why3"], why["why4"]) if w is not None)
        ]
        if fields["component"] == "creation" and (created := _RAY_CREATED.search(text)):
            named = created["cls"] or created["deployment"] or created["replica"]
            fields.setdefault("actor_class", named)
            if created["pid"] or created["rpid"]:
                fields.setdefault("pid", int(created["pid"] or created["rpid"]))
        tail = text[why.end() :]
        exit_type, detail = _RAY_EXIT_TYPE.search(tail), _RAY_DETAIL.search(tail)
        # a type cut at its underscore (`SYSTEM_` / `ERROR` on the next line: a terminal's wrap) is no type
        fields["exit_type"] = exit_type["type"] if exit_type and not exit_type["type"].endswith("_") else None
        fields["message"] = (detail["detail"] or None) if detail else None
    return fields


# Ray's memory monitor's words (ray/_raylet's and the raylet's): that it killed, and the node's memory beside its
# threshold, on one line or two (`ray.exceptions.OutOfMemoryError: …` and `Memory on the node …` under it).
_RAY_KILLED = r"killed due to (?:the node running low on memory|memory pressure \(OOM\))"
_FIGURE = r"\d+(?:\.\d+)?"
_RAY_NODE = (
    rf"Memory on the node \(IP: [^)]*\)(?: where the \w+ \([^)]*?memory used=(?P<used>{_FIGURE})GB\) was running)? "
    rf"was (?P<node_used>{_FIGURE})GB / (?P<node_total>{_FIGURE})GB \({_FIGURE}\), which exceeds the memory usage "
    rf"threshold of (?P<threshold>{_FIGURE})"
)


def _ray_memory_monitor(match: re.Match[str]) -> Fields:
    """What Ray's memory monitor said: the worker's memory and the node's beside the threshold, when it says."""
    return {
        "message": match.group(0),
        "component": RAY_MEMORY_MONITOR,
        "rss_gib": float(match["used"]) if match["used"] else None,
        "node_used_gb": float(match["node_used"]) if match["node_used"] else None,
        "node_total_gb": float(match["node_total"]) if match["node_total"] else None,
        "memory_threshold": float(match["threshold"]) if match["threshold"] else None,
    }


def _gpu_fault(match: re.Match[str]) -> Fields:
    """The Xid's number and the GPU's PCI address, or CUDA's words for the fault. The driver's other words for a
    GPU off the bus (`NVRM: … has fallen off the bus and is not responding to commands.`, with no Xid line: newer
    drivers print it over several NVRM lines) are Xid 79's, as NVIDIA's NVSentinel (issue #155) and gpud (PR #1209)
    read them."""
    if match["cuda"]:
        return {"message": match["cuda"]}
    if match["off_bus"]:
        return {"message": match.string.strip().removeprefix("NVRM: "), "xid": 79}
    if match["bare_xid"]:
        return {"message": match["bare_words"].strip(), "xid": int(match["bare_xid"]), "device": None}
    words = re.sub(r"^pid=[^,]*, (?:name=[^,]*, )?", "", match["words"]).strip()  # the process the driver names
    return {"message": words or None, "xid": int(match["xid"]), "device": match["device"]}


def _dcgm_xid(match: re.Match[str]) -> Fields:
    """DCGM exporter's gauge of a GPU's last Xid: the number, and the GPU by its PCI bus id or its index label."""
    labels = dict(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
    device = labels.get("pci_bus_id") or (f"index {labels['gpu']}" if "gpu" in labels else None)
    return {"xid": int(match["xid"]), "device": device, "message": None}


# An NVIDIA driver's version as its tools print it: 550.144, 535.183.01, and the old 1.0-9639 (no trailing dot).
_DRIVER_VERSION = r"\d[\w-]*(?:\.\d[\w-]*)*"


def _driver_versions(match: re.Match[str]) -> Fields:
    """Who said the libraries and the kernel module differ, and the versions each line names (the kernel's warning
    spans two lines, the client's version on the first and the module's on the second)."""
    if match["nvml"]:
        return {"message": match.group(0), "component": "nvml"}
    library = match["client"] or match["library"]
    module = match["module"] or match["kernel"] or match["loaded"]
    kernel = match["client"] or match["kernel"]
    return {
        "message": match.string.strip(),
        "component": "kernel" if kernel else "versions",
        "version": library,
        "kernel_module_version": module,
    }


_INSUFFICIENT = re.compile(r"\bInsufficient (?P<resource>[\w./-]+)")
_TAINT = re.compile(
    r"untolerated taint\(?s?\)? \{(?P<taint>[^}]*)\}|had taint \{(?P<old>[^}]*)\}, that the pod didn't tolerate"
)


def _unschedulable(match: re.Match[str]) -> Fields:
    """The scheduler's reasons (the part before its `preemption:` sentence): resources lacked, taints not tolerated."""
    reasons = match["reasons"]
    return {
        "message": reasons.strip(),
        "nodes_total": int(match["total"]),
        "insufficient": list(dict.fromkeys(m["resource"] for m in _INSUFFICIENT.finditer(reasons))),
        "taints": list(dict.fromkeys((m["taint"] or m["old"]).strip() for m in _TAINT.finditer(reasons))),
    }


def _ray_replica(match: re.Match[str]) -> Fields:
    """A Serve replica Ray cannot place: its GPUs (summed over its bundles) against the cluster's free ones, and the
    other resources it asks for more of than are free."""
    try:
        required, available = json.loads(match["required"]), json.loads(match["available"])
    except ValueError:
        return {"message": match["deployment"]}
    bundles = required if isinstance(required, list) else [required]
    wanted: dict[str, float] = {}
    for bundle in bundles:
        for resource, amount in bundle.items():
            wanted[resource] = wanted.get(resource, 0.0) + float(amount)
    short = [r for r, amount in wanted.items() if r != "GPU" and float(available.get(r, 0.0)) < amount]
    return {
        "message": match["deployment"],
        "gpus_required": wanted.get("GPU"),
        "gpus_available": float(available.get("GPU", 0.0)),
        "component": ", ".join(short) or None,
    }


def _vllm_placement_wait(match: re.Match[str]) -> Fields:
    """vLLM's Ray executor still waiting for its placement group: one bundle per worker, their GPUs summed."""
    gpus = sum(float(amount) for amount in re.findall(r"['\"]GPU['\"]:\s*([\d.]+)", match["specs"]))
    return {"message": VLLM_PLACEMENT_GROUP, "gpus_required": gpus or None, "elapsed_s": float(match["waited"])}


def _host_port(host: str, port: str) -> str:
    """`host:port`, an IPv6 host in brackets (`[::1]:8000`) as a URL writes it, so its colons are not the port's."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _shm(match: re.Match[str]) -> Fields:
    """The shared-memory size the text gives (Ray states the bytes /dev/shm has), and what wrote it."""
    free = match["bytes"] or match.groupdict().get("bytes2")
    return {"message": match.group(0), "shm_bytes": int(free) if free else None}


# A model repository in a Hub URL or message; not the Hub's own pages (docs/, api/, datasets/, settings/).
_HUB_REPO = re.compile(
    r"(?:huggingface\.co/(?:api/models/)?(?!docs/|api/|datasets/|settings/|spaces/)|Access to model )"
    # not one of the Hub's own pages named in the same error (`listed on 'https://huggingface.co/models'`, `/login`)
    r"(?!(?:models|login|join|pricing|docs|settings)(?![\w.-]))"
    # a repository without a namespace (`gpt2`) ends where the URL's path goes on to a revision or a file
    r"(?P<repo>[\w.-]+(?:/(?!(?:resolve|revision|tree|blob)/)[\w.-]+)?)"
)
# The files a model cannot load without, whose 404 is the model's: its config and its weights (an index of shards, a
# generation or processor config and an adapter's config may be missing by design, and vLLM or transformers go on).
_REQUIRED_FILE = re.compile(r"^(?:config\.json|params\.json|.+\.(?:safetensors|bin|gguf|pt))$")


def _hub_missing(match: re.Match[str]) -> Fields | None:
    """A file's or a revision's 404 on the Hub: `how` says which, and how sure the words are (requests' bare 404
    cannot tell a missing file from a missing or private repository; huggingface_hub's Entry and Revision Not Found
    can). A file the model can do without is not the model's failure: left to the next wording."""
    how = {"Entry": "entry", "Revision": "revision"}.get(match["how"].split()[0], "status")
    name = match["file"].rsplit("/", 1)[-1]
    if how != "revision" and not _REQUIRED_FILE.match(name):
        return None
    return {"message": match["file"], "model": match["repo"], "label": unquote(match["revision"]), "component": how}


# What the Hub's refusal says, most specific first: the first of these the line holds is its reason.
_HUB_REASONS = (
    ("fine-grained token settings", "fine_grained"),
    ("not in the authorized list", "no_access"),
    ("Forbidden for url", "no_access"),
    ("GatedRepoError: 403", "no_access"),  # a token was sent: the Hub answers 403 to an account without access
    ("be authenticated", "no_token"),
    ("Unauthorized for url", "no_token"),
    ("Invalid credentials in Authorization header", "bad_token"),
    ("Invalid user token", "bad_token"),  # huggingface_hub's login refusing HF_TOKEN's value
    ("Repository Not Found for url", "not_found"),
    ("RepositoryNotFoundError", "not_found"),
)


def _hub_refusal(match: re.Match[str]) -> Fields:
    line = match.string
    reason = next((why for words, why in _HUB_REASONS if words in line), "gated")
    repo = _HUB_REPO.search(line)
    return {"message": reason, "model": repo["repo"] if repo else None}


def _port_in_use(match: re.Match[str]) -> Fields:
    """Whose bind failed (the API server's; torch.distributed's store; a ZMQ socket of vLLM's) and on what address."""
    words = match.group(0)
    store = "EADDRINUSE" in words or match["bport"] is not None
    zmq_address = match["zaddr"] or match["zaddr2"]
    component = "torch.distributed" if store else "zmq" if words.startswith("ZMQError") or zmq_address else None
    if match["dport"]:
        return {"message": words, "component": "docker", "address": f"{match['dhost'] or '0.0.0.0'}:{match['dport']}"}
    if match["port"]:
        address = f"{match['host'] or '0.0.0.0'}:{match['port']}"
    else:
        port = match["sport"] or match["bport"]
        address = f":{port}" if port else zmq_address
    return {"message": words, "component": component, "address": address}


def _hub_not_cached(match: re.Match[str]) -> Fields:
    if match["read"]:
        return {"message": "timeout", "timeout_ms": int(float(match["read"]) * 1000)}
    if match["api"]:
        return {"message": "offline_api"}
    return {"message": "offline" if "outgoing traffic" in match.group(0) else "unreachable"}


def _peers_never_came(match: re.Match[str]) -> Fields:
    """Which wait gave up on the other ranks (the store's, Gloo's send or receive, HCCL's socket) and for how long."""
    who = (
        HCCL_SOCKET
        if match["hccl"] or match["hccl2"]
        else f"Gloo's {match['op']}"
        if match["op"]
        else "torch.distributed's store"
    )
    waited = match["ms"] or match["gms"]
    return {"message": None, "component": who, "timeout_ms": int(waited) if waited else None}


def _rendezvous(match: re.Match[str]) -> Fields:
    """The address torch.distributed could not reach, and how long it tried when the text says."""
    waited_ms = int(match["secs"]) * 1000 if match["secs"] else int(match["ms"]) if match["ms"] else None
    named = [(match[f"host{n}"], match[f"port{n}"]) for n in ("", "2", "3", "4") if match[f"host{n}"]]
    if not named:  # the paste ends at "connect to" (vllm PR #10492's): the address is not in the text
        return {"message": None, "timeout_ms": waited_ms}
    host, port = named[0]
    host = f"[{host.strip()}]" if ":" in host and port else host.strip()  # an IPv6 address keeps its brackets
    return {"message": f"{host}:{port}" if port else host, "timeout_ms": waited_ms}


def _think_tags(line: str) -> str:
    opens, closes = "<think>" in line, "</think>" in line
    return "both" if opens and closes else "open" if opens else "close"


# Kubernetes' words for a pod whose container is not running (the kubelet's waiting reasons, `kubectl get pods`)
POD_STATUSES = (
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ContainerCreating",
    "Pending",
    "Evicted",
)

# The statuses no other program prints: a line holding one is about a pod, whatever its format.
_UNIQUE_POD_STATUSES = (
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
)

# The kubelet's eviction messages (pkg/kubelet/eviction/helpers.go): the node low on a resource, with the container
# that used most of it over its request (two wordings: before and since Kubernetes 1.28), or the pod over a limit
# of its own (a container's, the pod's total, an emptyDir's sizeLimit).
_EVICTION = (
    r"The node was low on resource: (?P<resource>[\w.-]+)\."
    r"(?: Threshold quantity: (?P<threshold>[^,\s]+), available: (?P<available>\S+?)\.)?"
    r"(?: Container (?P<container>\S+) was using (?P<used>[^,\s]+)"
    r"(?:, request is (?P<request>[^,\s]+), has larger consumption of [\w.-]+|, which exceeds its request of "
    r"(?P<old_request>\S+?))\.)?"
    r"|Container (?P<over_container>\S+) exceeded its local ephemeral storage limit \"(?P<container_limit>[^\"]+)\""
    r"|Pod ephemeral local storage usage exceeds the total limit of containers (?P<pod_limit>\S+?)\.?(?:\s|$)"
    r"|Usage of EmptyDir volume \"(?P<volume>[^\"]+)\" exceeds the limit \"(?P<volume_limit>[^\"]+)\""
)


def _eviction(match: re.Match[str]) -> Fields:
    """What the kubelet evicted the pod for: the resource, and who used it (or which limit of its own it passed)."""
    if match["resource"]:
        request = match["request"] or match["old_request"]
        used = f"; container {match['container']} used {match['used']} (its request {request})" if match["used"] else ""
        said = f"the node ran low on {match['resource']}{used}"
        return {"pod_status": "Evicted", "insufficient": [match["resource"]], "message": said}
    if match["over_container"]:
        said = f"container {match['over_container']} passed its own ephemeral-storage limit {match['container_limit']}"
    elif match["pod_limit"]:
        said = f"the pod passed the ephemeral-storage limit of its containers, {match['pod_limit']} in all"
    else:
        said = f"emptyDir volume {match['volume']} passed its sizeLimit {match['volume_limit']}"
    return {"pod_status": "Evicted", "insufficient": ["ephemeral-storage"], "message": said}


# The Kubernetes monitoring mixin's alerts on a pod (kubernetes-monitoring/kubernetes-mixin,
# alerts/apps_alerts.libsonnet; kube-prometheus-stack ships them), in their descriptions' words as every release of
# the mixin wrote them, so the page an on-call engineer got reads as the pod's status. Names and namespaces are
# Kubernetes' DNS labels; a JSON payload escapes the quotes around the reason.
_K8S_NAME = r"[a-z0-9][-a-z0-9.]*"
_MIXIN_REASON = r'\(reason: \\?"?(?P<reason>[A-Za-z]+)'
_MIXIN_CRASH_LOOPING = (
    rf"(?P<ns>{_K8S_NAME})/(?P<pod>{_K8S_NAME}) \((?P<container>[^()\s]+)\) "
    rf"(?:is in waiting state {_MIXIN_REASON}|is restarting (?P<rate>[\d.]+) (?:times )?/ (?P<per>[\w ]+))"
)
_MIXIN_CONTAINER_WAITING = (
    rf"pod/(?P<pod>{_K8S_NAME}) in namespace (?P<ns>{_K8S_NAME}) on container (?P<container>\S+) has been in waiting "
    rf"state for longer than 1 hour\.(?: {_MIXIN_REASON})?"
    rf"|Pod (?P<ns2>{_K8S_NAME})/(?P<pod2>{_K8S_NAME}) container (?P<container2>\S+) has been in waiting state for "
    r"longer than 1 hour"
)
_MIXIN_NOT_READY = (
    rf"Pod (?P<ns>{_K8S_NAME})/(?P<pod>{_K8S_NAME}) has been in a non-ready state for longer than "
    r"(?P<since>15 minutes|an hour)"
)


def _mixin_alert(alert: str, status: str | None = None) -> Callable[[re.Match[str]], Fields]:
    """A mixin alert's description as the pod status it states: `status`, else the reason it names where it is one
    the rule tells apart, else Waiting (PodInitializing, or a release that names no reason)."""

    def fields(match: re.Match[str]) -> Fields:
        groups = match.groupdict()
        return {
            "pod_status": status or (groups.get("reason") if groups.get("reason") in POD_STATUSES else "Waiting"),
            "pod": groups["pod"] or groups.get("pod2"),
            "namespace": groups["ns"] or groups.get("ns2"),
            "container": groups.get("container") or groups.get("container2"),
            "component": alert,
            "message": match.group(0),
        }

    return fields


# What `kubectl logs` answers for a container that has not started (the kubelet's validateContainerLogStatus,
# pkg/kubelet/kubelet_pods.go): its waiting reason, or its words for the two image-pull reasons.
_LOGS_WAITING = r'container "(?P<container>[^"]+)" in pod "(?P<pod>[^"]+)" is waiting to start: (?P<reason>[^\n]+?)\s*$'
_LOGS_WAITING_WORDS = {"image can't be pulled": "ErrImagePull", "trying and failing to pull image": "ImagePullBackOff"}


def _logs_waiting(match: re.Match[str]) -> Fields:
    reason = match["reason"]
    status = _LOGS_WAITING_WORDS.get(reason, reason if reason in POD_STATUSES else "Waiting")
    said = reason if status == "Waiting" else None  # a status of its own says all the reason does
    return {"pod_status": status, "pod": match["pod"], "container": match["container"], "message": said}


def _pod_event(match: re.Match[str]) -> Fields:
    """`kubectl describe pod`'s reason or event, as the status it stands for."""
    if match["reason"]:
        return {"pod_status": match["reason"]}
    if match["backoff"]:
        restarting = match["backoff"].startswith("restarting")
        return {"pod_status": "CrashLoopBackOff" if restarting else "ImagePullBackOff", "image": match["bimage"]}
    if match["image"]:
        return {"pod_status": "ErrImagePull", "image": match["image"], "message": match["why"]}
    if match["kind"]:
        return {"pod_status": "CreateContainerConfigError", "message": f'{match["kind"]} "{match["name"]}"'}
    if match["vkind"] in ("secret", "configmap"):  # a volume from a missing object: the same fix as an env var's
        return {"pod_status": "CreateContainerConfigError", "message": f'{match["vkind"]} "{match["vname"]}"'}
    if match["vkind"]:
        return {"pod_status": "FailedMount", "message": f'missing: persistentvolumeclaim "{match["vname"]}"'}
    if match["multi"]:
        return {"pod_status": "FailedMount", "message": f'attached elsewhere: volume "{match["multi"]}"'}
    if match["failed"]:
        return {"pod_status": "FailedMount", "message": f'failed: volume "{match["failed"]}": {match["fwhy"][:200]}'}
    return {"pod_status": "FailedMount", "message": f"timed out: {match['unmounted']}"}


PATTERNS: tuple[Pattern, ...] = (
    wording(  # NCCL (ProcessGroupNCCL's "Last error:") when /dev/shm cannot hold its segments; NCCL's own WARN
        # from shmutils.cc when fallocate of the segment fails ("Error: failed to extend %s to %ld bytes, error: …")
        ("Error while creating shared memory segment", "failed to extend /dev/shm/"),
        K.SHM_TOO_SMALL,
        r"Error while creating shared memory segment (?P<segment>/dev/shm/\S+)(?: \(size \d+\))?(?P<bytes>)"
        r"|failed to extend /dev/shm/\S+ to \d+ bytes, error: No space left on device",
        _shm,
    ),
    wording(  # Ray, started by old vLLM releases for tensor parallelism; its raylet's own words when its object
        # store asks /dev/shm for more than the container has (store_runner.cc, gpustack/gpustack#5014)
        ("because /dev/shm has only", "exceeds memory available in /dev/shm"),
        K.SHM_TOO_SMALL,
        r"because /dev/shm has only (?P<bytes>\d+) bytes available"
        r"|System memory request exceeds memory available in /dev/shm\. The request is for \d+ bytes, and the "
        r"amount available is (?P<bytes2>\d+) bytes",
        _shm,
    ),
    wording(  # Python's multiprocessing (process.py, BaseProcess.start) asserting its process is no daemon: a daemon
        # (a multiprocessing.Pool worker, a framework's actor process) may not start children, and vLLM starts its
        # workers and, in V1, its engine core as children
        ("daemonic processes are not allowed to have children",),
        K.DAEMON_NO_CHILDREN,
        r"daemonic processes are not allowed to have children",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # libnuma's perror of a NUMA system call the kernel refused: a container's default seccomp profile and
        # capabilities deny them (vllm#24016; vLLM's CPU installation guide, PR #24017)
        ("Operation not permitted",),
        K.NUMA_CALL_DENIED,
        r"\b(?P<call>get_mempolicy|set_mempolicy|mbind|migrate_pages|move_pages): Operation not permitted",
        lambda m: {"message": m.group(0), "function": m["call"]},
    ),
    wording(  # vLLM's FlashAttention backend refusing the FA version it was to use (0.7 on: attention/backends/
        # utils.py, later fa_utils.py), flash-attention's reason after it; pasted without its `Cannot use` head too
        # (Dao-AILab/flash-attention#1853)
        ("is not supported due to",),
        K.FA_VERSION_UNSUPPORTED,
        r"FA version (?P<version>[23]) is not supported due to (?P<why>.+?)\s*$",
        lambda m: {"message": m["why"], "version": m["version"]},
    ),
    wording(  # AITER's GEMM wrappers looking a shape up in their tuned-config CSVs (vllm#39485's worker log is full)
        ("not found tuned config",),
        K.AITER_UNTUNED_SHAPE,
        r"shape is (?P<shape>M:\d+, N:\d+, K:\d+)[^\n]*?,? not found tuned config in (?P<csv>\S+?),? will use default",
        lambda m: {"message": m["shape"], "code_file": m["csv"]},
    ),
    wording(  # CANN's MoE dispatch/combine operators (MoeDistributeDispatch…, vllm-ascend's expert parallelism)
        # checking their HCCL window at tiling: the size needed and HCCL_BUFFSIZE's, in MB (vllm-ascend PR #5287's log)
        ("HCCL_BUFFSIZE is too SMALL", "HCCL_BUFFSIZE is too small"),
        K.HCCL_BUFFER_TOO_SMALL,
        r"HCCL_BUFFSIZE is too (?:SMALL|small)(?:.*?(?:\) = |should larger than )(?P<needed>\d+) ?MB)?"
        r"(?:.*?HCCL_BUFFSIZE=(?P<have>\d+) ?MB)?",
        lambda m: {
            "message": m.group(0),
            "resource_required": to_int(m["needed"]),
            "resource_limit": to_int(m["have"]),
        },
    ),
    wording(  # GNU OpenMP refusing an OpenMP variable's value at start (libgomp's env.c): OMP_NUM_THREADS=0
        # (redhat-et/vllm-cpu-perf-eval#45)
        ("libgomp: Invalid value for environment variable",),
        K.OMP_ENV_INVALID,
        r"libgomp: Invalid value for environment variable (?P<var>\w+)",
        lambda m: {"message": m.group(0), "env_variable": m["var"]},
    ),
    wording(
        ("Cannot re-initialize CUDA in forked subprocess",),
        K.CUDA_FORKED,
        r"Cannot re-initialize CUDA in forked subprocess",
        lambda m: {"message": m.group(0)},
    ),
    wording(
        ("custom_all_reduce",),
        K.CUSTOM_ALL_REDUCE_FAILED,
        r"custom_all_reduce\w*\.(?:cuh|cu|py)\S*\s+'(?P<error>[^']+)'|Failed:.*custom_all_reduce.*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # NCCL's ncclSystemError, as torch's ProcessGroupNCCL or cupy print it
        ("NCCL_ERROR_SYSTEM_ERROR", "unhandled system error", "ncclSystemError"),
        K.NCCL_SYSTEM_ERROR,
        r"NCCL_ERROR_SYSTEM_ERROR.*|ncclSystemError.*|(?i:nccl).*unhandled system error.*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # the dynamic loader: a compiled extension that needs a symbol the installed libraries lack; or the
        # ImportError cut after the extension's own path, the loader's reason lost (mudler/LocalAI PR #9950: vLLM's
        # `_C.abi3.so:` alone, a wheel built against torch 2.10 beside torch 2.11)
        ("undefined symbol", ".so:"),
        K.EXTENSION_UNDEFINED_SYMBOL,
        r"(?:\S*/)?(?P<library>[\w.+-]+\.so)\S*:\s*undefined symbol:\s*(?P<symbol>\S+)"  # message: with its path
        r"|ImportError: (?P<cut>\S*/vllm/(?P<cut_library>_[\w]+\.(?:abi3|cpython-[\w-]+)\.so)):\s*$",
        lambda m: {
            "message": m.group(0) if m["library"] else m["cut"],
            "component": m["library"] or m["cut_library"],
            "symbol": m["symbol"],
        },
    ),
    wording(  # transformers' AutoConfig on a model newer than it, retyped or not (`checkoutpoint` in one issue)
        ("does not recognize this architecture", "does not recognize this archi", "trying to load has model type"),
        K.MODEL_TYPE_UNKNOWN,
        # the second: the same sentence cut after the model type (a ValidationError's `Value error, …` line wrapped
        # there; timothystewart6/vllm-gb10#97): only this message of transformers' starts so
        r"(?i)model type [`'\"]?(?P<type>[\w.-]+)[`'\"]?\s+but Transformers does not recognize this archi.*"
        r"|The checkpoint you are trying to load has model type `(?P<cut_type>[\w.-]+)`\s*$",
        lambda m: {"message": m.group(0), "model": m["type"] or m["cut_type"]},
    ),
    wording(  # transformers' check of a remote-code module's imports before it loads it (dynamic_module_utils.py
        # check_imports): its ImportError, and the warning it logs for each import that failed first (`Encountered
        # exception while importing decord: No module named 'decord'`, vllm PR #22514: Ernie4.5-VL's code in vLLM's
        # image, which ships no decord)
        ("requires the following packages that were not found", "Encountered exception while importing"),
        K.REMOTE_CODE_IMPORTS,
        r"requires the following packages that were not found in your environment: (?P<packages>[\w., -]+?)\.\s"
        r"|Encountered exception while importing [\w.]+: No module named '(?P<missing>[\w]+)",
        lambda m: {"message": (m["packages"] or m["missing"]).strip()},
    ),
    wording(  # transformers' AutoConfig.register (models/auto/configuration_auto.py) refusing a name it defines itself
        ("is already used by a Transformers config",),
        K.TRANSFORMERS_NAME_TAKEN,
        r"'(?P<name>[\w.-]+)' is already used by a Transformers config",
        lambda m: {"message": m.group(0), "model": m["name"]},
    ),
    wording(  # the tokenizers library (serde, through TokenizerFast.from_file) refusing a section of tokenizer.json
        ("untagged enum",),
        K.TOKENIZER_FILE_UNREADABLE,
        r"data did not match any variant of untagged enum (?P<section>\w+)(?: at line \d+ column \d+)?",
        lambda m: {"message": m.group(0), "component": m["section"]},
    ),
    wording(  # vLLM builds the model with its generic Transformers backend: a frame in it, or its INFO line
        ("models/transformers", "Using Transformers backend", "Using Transformers modeling backend"),
        K.TRANSFORMERS_BACKEND,
        r"vllm/model_executor/models/transformers(?:\.py|/\w+\.py)\"|Using Transformers (?:modeling )?backend",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # CUDA's cudaErrorSystemDriverMismatch, through torch's cudaGetDeviceCount() check or any CUDA call
        ("Error 803", "unsupported display driver / cuda driver combination"),
        K.CUDA_DRIVER_MISMATCH,
        r"(?:Error 803: )?system has unsupported display driver / cuda driver combination",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # pynvml's class for NVML_ERROR_NOT_SUPPORTED, raised in one of vLLM's processes (its vendored pynvml
        # from 0.6, vllm.third_party.pynvml; nvidia-ml-py's before): OP-7.220
        ("NVMLError_NotSupported",),
        K.NVML_NOT_SUPPORTED,
        r"\bNVMLError_NotSupported\b(?::\s*(?P<said>.+))?",
        lambda m: {"message": m.group(0).strip()},
    ),
    wording(  # the model's files not cached and the Hub not asked (offline) or not reachable: huggingface_hub's and
        # transformers' words; huggingface_hub 2.4's own for a Hub it could not reach (hf_hub_download's "the file",
        # snapshot_download's "the files", file_download.py and _snapshot_download.py)
        (
            "outgoing traffic has been disabled",
            "We couldn't connect to 'https://huggingface.co'",
            "Read timed out",
            "trying to locate the file",
            "offline mode is enabled",
            "Max retries exceeded with url",
        ),
        K.HUB_NOT_CACHED,
        r"outgoing traffic has been disabled|We couldn't connect to 'https://huggingface\.co'"
        # huggingface_hub's OfflineModeIsEnabled on a call to the Hub's API (a model's metadata, asked whether or
        # not its files are cached: vllm#3719, vLLM 0.4 with HF_HUB_OFFLINE=1)
        r"|Cannot reach https?://\S+?/api/(?P<api>\w+)/\S+?: offline mode is enabled"
        r"|An error happened while trying to locate the files? on the Hub"
        # requests' read timeout on a Hub host (huggingface_hub's default: 10 s for metadata and for each file)
        rf"|host='{HUB_HOSTS}', port=443\): Read timed out\. "
        r"\(read timeout=(?P<read>[\d.]+)\)"
        # urllib3 giving up on a Hub host it could not resolve, reach in time or pass a proxy to: the quotes escaped
        # where the error is printed inside another's repr (h2oai/h2ogpt#1186, vLLM on a host without internet); its
        # NewConnectionError stays an unplaced error, as tests/unit/rules/test_op5_unreachable.py reads its events,
        # and OP-7.38 reads it from there (rules/catalog/op7_hub.py, HUB_NEW_CONNECTION)
        rf"|{HUB_RETRIES_EXCEEDED}(?:ConnectTimeoutError|NameResolutionError|ProxyError)"
        # … pasted from `Max retries` on, the host then named only inside the cause (vllm-project/guidellm#62: its
        # tokenizer fetched from the Hub for a model served elsewhere)
        rf"|Max retries exceeded with url: \S+ \(Caused by ConnectTimeoutError\(.*?'Connection to {HUB_HOSTS} timed "
        r"out",
        _hub_not_cached,
    ),
    wording(  # the Hub refusing for its rate limits, or failing itself, on a download (requests' and huggingface_hub's)
        ("Too Many Requests", "Server Error"),
        K.HUB_UNAVAILABLE,
        r"(?P<status>429|50[0234])(?: Client| Server)? (?:Error:? )?(?:Too Many Requests|Internal Server Error|Bad "
        r"Gateway|Service Unavailable|Gateway Time-?out)\b.*?for url: https?://(?:huggingface\.co|hf\.co)/",
        lambda m: {"message": m.group(0), "status": int(m["status"])},
    ),
    wording(  # OpenSSL refusing the certificate a Hub download met (a proxy that inspects HTTPS, or no CA bundle); a
        # tool that fetches config.json itself through urllib names the Hub in words (`… from HuggingFace: <urlopen
        # error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: …`, ai-dynamo/aiconfigurator#1361, whose
        # image lacked ca-certificates)
        ("CERTIFICATE_VERIFY_FAILED",),
        K.HUB_TLS_UNTRUSTED,
        r"(?=.*\b(?:huggingface\.co|hf\.co|hf-mirror\.com|HuggingFace|Hugging Face)\b).*?CERTIFICATE_VERIFY_FAILED\]? "
        r"certificate verify failed: (?P<why>[\w ,-]*\w)",
        lambda m: {"message": m["why"]},
    ),
    wording(  # a port to listen on already taken: the API server's bind (vLLM 0.32 binds before its engine starts,
        # launchers/launcher.py; older releases through uvicorn, after the model loaded), torch.distributed's store
        (
            "Errno 98",
            "EADDRINUSE",
            "errno: 98",
            "ZMQError: Address already in use",
            "port is already allocated",
            "Address already in use (addr='tcp://",
        ),
        K.PORT_IN_USE,
        # torch before 2.4 worded its store's failure per address: `The server socket has failed to listen on any local
        # network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).`
        # (PyTorch's distributed docs quote it for a MASTER_PORT already taken); one address's `[W …]` line alone is
        # no failure, the store may listen on another
        r"failed to listen on any local network address\. The server socket has failed to (?:bind to|listen on) "
        r"(?:\[[^\]]*\]|[\w.?]+):(?P<bport>\d+) \(errno: 98 - Address already in use\)"
        r"|\[Errno 98\] (?:error while attempting to bind on address \('(?P<host>[^']*)', (?P<port>\d+)\): )?"
        r"[Aa]ddress already in use|(?P<store>failed to listen on any local network address\.)?.*?(?:port: "
        r"(?P<sport>\d+).*?)?name: EADDRINUSE.*"
        # pyzmq binding one of the sockets vLLM's processes talk over (newer pyzmq adds the address)
        # (a connector that logs the exception's words alone keeps pyzmq's address: `Mooncake KVCacheSendingThread
        # exception: Address already in use (addr='tcp://10.235.53.16:20012')`, vllm-project/vllm-ascend#8938)
        r"|(?P<zmq>ZMQError: )?Address already in use(?(zmq)(?: \(addr='tcp://(?P<zaddr>[^']*)'\))?"
        r"| \(addr='tcp://(?P<zaddr2>[^']*)'\))"
        # uvicorn's words cut before the address (errno 98 is EADDRINUSE on Linux: the words are whole without it;
        # vllm#7514, a restarted server binding before the last one had let go)
        r"|\[Errno 98\] error while attempting to bind on address(?! \()"
        # Docker publishing the container's port on a host port another container or process holds
        r"|Bind for (?P<dhost>[\d.:\[\]a-f]*?):(?P<dport>\d+) failed: port is already allocated",
        _port_in_use,
    ),
    wording(  # a bind to an address none of this machine's interfaces holds (EADDRNOTAVAIL): pyzmq's, with the
        # endpoint, and uvicorn's errno 99 (worded as for errno 98 above). A bare `[Errno 99]` is not read: a connect
        # gets it too (no ephemeral port left), which is no bind
        ("Cannot assign requested address", "cannot assign requested address"),
        K.BIND_ADDRESS_NOT_LOCAL,
        r"ZMQError: Cannot assign requested address(?: \(addr='(?:tcp://)?(?P<zaddr>[^']*)'\))?"
        # an IPv6 address comes as Python's four-part tuple, `('::1', 8000, 0, 0)`, and is kept bracketed
        r"|\[Errno 99\] error while attempting to bind on address \('(?P<host>[^']*)', (?P<port>\d+)(?:, \d+, \d+)?\): "
        r"[Cc]annot assign requested address",
        lambda m: {
            "message": m.group(0),
            "component": "zmq" if m.group(0).startswith("ZMQError") else None,
            "address": m["zaddr"] or (_host_port(m["host"], m["port"]) if m["port"] else None),
        },
    ),
    wording(  # ZMQ given an IPv6 address without brackets (`tcp://2605:…:21001`) reads the text before the last colon
        # as an interface name and fails (ENODEV): vllm#42149, the P2P NCCL connector on an IPv6 host
        ("ZMQError: No such device",),
        K.BIND_ADDRESS_NOT_LOCAL,
        r"ZMQError: No such device \(addr='(?:tcp://)?(?P<zaddr>[0-9A-Fa-f]*:[0-9A-Fa-f:]*:\d+)'\)",
        lambda m: {"message": m.group(0), "component": "zmq", "address": m["zaddr"]},
    ),
    wording(  # vLLM's platform detection, logged at DEBUG (vllm/platforms/__init__.py, 0.7 on): each platform's check
        # that failed, with its reason (HPU's words have no colon)
        ("platform is not available because",),
        K.PLATFORM_UNAVAILABLE,
        r"\b(?P<platform>TPU|CUDA|ROCm|HPU|XPU|CPU|Neuron|OpenVINO) platform is not available because:? (?P<why>.+)",
        lambda m: {"message": m["why"].strip(), "component": m["platform"]},
    ),
    wording(  # and its verdict: a platform confirmed or chosen, or none (UnspecifiedPlatform: no device found)
        ("platform is available", "Automatically detected platform", "No platform detected"),
        K.PLATFORM_DETECTED,
        r"Confirmed (?P<confirmed>\w+) platform is available|Automatically detected platform (?P<chosen>\w+)"
        r"|No platform detected, vLLM is running on UnspecifiedPlatform",
        lambda m: {"message": m.group(0), "component": m["confirmed"] or m["chosen"]},
    ),
    wording(  # Python's NameError for a name vLLM exports (vllm/__init__.py's __all__, 0.32): the caller's guarded
        # `from vllm import …` never bound it; a framework's logger may print the words without the class
        ("is not defined",),
        K.VLLM_NAME_UNBOUND,
        r"\bname '(?P<name>" + "|".join(VLLM_TOP_LEVEL_NAMES) + r")' is not defined",
        lambda m: {"message": m["name"]},
    ),
    wording(  # Ray Serve LLM (ray/llm/_internal/serve/…) when its import of vLLM and SGLang both failed, whatever the
        # error was: ray-project/ray#64006 (vLLM installed, a module Ray imports moved in that vLLM)
        ("Neither vLLM nor SGLang is installed",),
        K.VLLM_IMPORT_HIDDEN,
        r"Neither vLLM nor SGLang is installed\. At least one is required for Ray Serve LLM",
        lambda m: {"message": "Ray Serve LLM"},
    ),
    wording(  # torch_npu's words for a refused ACL call, CANN's op build, and its op compiler failing to start
        (
            "NPU function error",
            "call acl api failed",
            "UNKNOWN applica",
            "ACL stream synchronize failed",
            "build op model failed",
            "GEInitialize failed",
            "Init compiler failed",
            "call aclnn",
            "operator name is aclnn",
            "lNN_Parameter_Error",
        ),
        K.ASCEND_ACL_FAILED,
        r"(?P<set>SetPrecisionMode)?[^ ]*? ?NPU function error: (?P<call>.+?), error code is (?P<code>\d+)"
        # torch_npu's own codes: ERR00100 (PTA) and ERR01100 (OPS) for a refused ACL call, ERR99999 for an exception
        # it could not classify (its message misspells application); a stream's sync reporting a device error
        r"|(?P<pta>ERR\d+ (?:PTA|OPS) call acl api failed|ERR99999 UNKNOWN applica(?:ti|it)on exception)"
        r"|ACL stream synchronize failed, error code:\s*(?P<sync>\d+)"
        r"|build op model failed, result = (?P<result>\d+)"
        r"|(?P<ge>GEInitialize failed|Init compiler failed)"
        # an aclnn operator failing (torch_npu: `call aclnnRmsNorm failed, detail:…`, or the inner error's `the current
        # working operator name is aclnnRmsNorm`), and CANN's parameter check on it (`AclNN_Parameter_Error(EZ1001): …`)
        r"|call (?P<op>aclnn\w+) failed.*|the current working operator name is (?P<inner>aclnn\w+)"
        r"|\w*lNN_Parameter_Error\(EZ\d+\): .*",
        lambda m: {
            "message": m.group(0).strip(),
            "error_code": m["code"] or m["result"] or m["sync"],
            "component": "compiler"
            if m["set"] or m["ge"] or "ACL_PRECISION_MODE" in (m["call"] or "")
            else m["op"] or m["inner"],
        },
    ),
    wording(  # AWS Neuron's runtime (nrt_status.h's numbered status, or its name), its driver's device allocator, and
        # its compiler neuronx-cc, as transformers-neuronx, NxDI and torch-neuronx word them
        ("status=", "NRT_", "Failed to alloc DEVICE memory", "neuronx-cc"),
        K.NEURON_FAILED,
        r"\bnrt_(?P<call>\w+) status=(?P<status>\d+)(?: message=\"?(?P<why>[^\"]*))?"
        r"|Failure: (?P<name>NRT_[A-Z_]+) in nrt_\w+\(\)"
        r"|(?P<dmem>Failed to alloc DEVICE memory)"
        r"|(?P<cc>Failed compilation with \['neuronx-cc'|neuronx-cc failed with (?P<exit>-?\d+)"
        r"|Compilation failed for \S+neuroncc_compile_workdir\S*)",
        lambda m: {
            "message": m.group(0).strip(),
            "error_code": m["status"] or m["name"] or m["exit"],
            "component": "compiler" if m["cc"] else "device memory" if m["dmem"] else "runtime",
        },
    ),
    wording(  # TRL's vLLM client polling its server's /health/ before training, and giving up
        ("Server is not up yet", "vLLM server can't be reached at"),
        K.TRL_SERVER_UNREACHED,
        r"vllm_client\b.{0,5}Server is not up yet\. Retrying in"
        r"|The (?:async )?vLLM server can't be reached at (?P<url>\S+?) after [\d.]+ seconds",
        lambda m: {"message": m["url"]},
    ),
    wording(  # torch.xpu.mem_get_info's refusal (torch-xpu-ops), and SYCL's words under it
        ("support querying the available free memory", "ext_intel_free_memory aspect"),
        K.XPU_FREE_MEMORY_UNKNOWN,
        r"The device (?:\((?P<device>.+?)\) )?doesn't support querying the available free memory"
        r"|The device does not have the ext_intel_free_memory aspect",
        lambda m: {"message": m.group(0), "device": m["device"]},
    ),
    wording(  # a device's collectives and the setup they need: Gaudi's lazy collectives under HPU graphs, HCCL's listen
        # port, torch's CUDA IPC needing pidfd_open when expandable segments are on (c10/cuda/CUDACachingAllocator)
        ("collective nonSFG is not supported", "HcclSocket][Listen]", "pidfd_open syscall", "failed to initialize ATL"),
        K.COLLECTIVE_SETUP,
        r"(?P<hpu>collective nonSFG is not supported during hpu graph capturing)"
        r"|(?P<hccl>\[HcclSocket\]\[Listen\].*?listen on ip\[(?P<ip>[^\]]*)\]"
        r"(?: and specific port\[(?P<port>\d+)\])? fail)"
        r"|(?P<pidfd>does not support the pidfd_open syscall needed to use IPC for CUDA tensors)"
        r"|(?P<atl>init_transport: EXCEPTION: failed to initialize ATL)",  # oneCCL's transport over libfabric
        lambda m: {
            "message": m.group(0),
            "component": "hpu" if m["hpu"] else "hccl" if m["hccl"] else "atl" if m["atl"] else "pidfd",
            "address": f"{m['ip']}:{m['port']}" if m["port"] else m["ip"],
        },
    ),
    wording(  # AITER's arch check (aiter_meta's validate_and_update_archs) and Composable Kernel's refusal of a shape
        # AITER's rocminfo lookup of an arch it does not know (vllm PR #30952: gfx1201, reached even with AITER off),
        # and its FP4 batched GEMM on an Instinct GPU without FP4 (vllm#34641: gfx942, MI300X)
        (
            "GPU archs of",
            "does not support this GEMM problem",
            "Fmoe tuning not support",
            "get_heuristic_kernel",
            "Unknown GPU architecture",
            "MXFP4 quantization is not supported on",
            "nhead=",
            " requires gfx",
        ),
        K.AITER_REFUSED,
        r"One of GPU archs of \[(?P<archs>[^\]]*)\] is invalid or not supported"
        r"|Get GPU arch from rocminfo failed \W*Unknown GPU architecture: (?P<unknown>gfx\w+)"
        r"|MXFP4 quantization is not supported on (?P<fp4>gfx\w+)"
        # (CK's words in full, `wrong! device_gemm with the specified compilation parameters does not support this GEMM
        # problem`, ROCm/aiter#2191: an MXFP4 MoE's intermediate size at TP 4 with no AITER config)
        r"|(?P<moe>ck_moe\w*|[Ff]moe\w*)?.*?(?:device_gemm(?: with the specified compilation parameters)? does not "
        r"support this GEMM problem|Fmoe tuning not support)"
        r"|(?P<mla>get_heuristic_kernel_mla): cannot get heuristic kernel.*"  # its assembly MLA kernels (asm_mla.cu)
        # its MLA decode's assert on the heads per rank (mla_decode_fwd takes 16 or 128; ROCm/aiter#548, vllm#19332)
        r"|AssertionError: (?P<mla_heads>nhead=\d+) not supported"
        # a kernel of a newer Instinct GPU that vLLM's ROCm backend chose on this one (vllm PR #50817: AITER's
        # small-head MLA decode, CDNA4's alone, picked on MI325X)
        # (an AITER or Gluon kernel's name alone: other code's arch requirements, a quantization's, are not AITER's)
        r"|(?P<newer>(?i:\w*(?:aiter|gluon|asm_)\w*)) requires (?P<needs>gfx\w+)(?: \([^)]*\))?, got (?P<got>gfx\w+)",
        lambda m: {
            "message": m.group(0).strip(),
            "component": "arch" if m["archs"] is not None or m["unknown"] else "newer_arch" if m["newer"] else "shape",
            "device": m["archs"].strip("'\" ") if m["archs"] else m["unknown"] or m["fp4"] or m["got"],
            "function": "fp4bmm"
            if m["fp4"]
            else "mla"
            if m["mla"] or m["mla_heads"] or "mla" in (m["newer"] or "")
            else "moe"
            if m["moe"] or "moe" in m.group(0).lower()
            else None,
        },
    ),
    wording(  # TRL 0.14-0.15's GRPO trainer, which ran vLLM in the training script on a GPU of its own (vllm_device)
        ("The requested device for vllm",),
        K.TRL_VLLM_DEVICE,
        r"The requested device for vllm \((?P<device>[\w:]+)\) is not available\.(?:.*?In your case: `--num_processes "
        r"(?P<processes>\d+)`)?",
        lambda m: {"device": m["device"], "message": m["processes"]},
    ),
    wording(  # TRL's argparse refusing `trl vllm-serve`: the installed TRL predates the command
        ("invalid choice: 'vllm-serve'",),
        K.TRL_NO_VLLM_SERVE,
        r"invalid choice: 'vllm-serve'(?: \(choose from (?P<choices>[^)]*)\))?",
        lambda m: {"message": m["choices"]},
    ),
    wording(  # a framework that runs vLLM inside its own process, where vLLM is not installed
        ("No module named 'vllm'", "Could not import vllm python package"),
        K.VLLM_IN_PROCESS_MISSING,
        r"(?P<litellm>VLLM(?:Error|Exception)\b[:\s-]+No module named 'vllm'(?![.\w]))"
        r"|Could not import vllm python package",
        lambda m: {"message": m.group(0), "component": "litellm" if m["litellm"] else "wrapper class"},
    ),
    wording(  # Unsloth's GRPO trainer asking its model for the vLLM engine only `fast_inference=True` attaches
        ("has no attribute 'vllm_engine'",),
        K.UNSLOTH_NO_VLLM_ENGINE,
        r"'(?P<model>\w+)' object has no attribute 'vllm_engine'",
        lambda m: {"model": m["model"]},
    ),
    wording(  # Lemonade's wrapped server announcing its readiness wait (its giving up, an error line in its own
        # logger's words, stays an unplaced line that OP-7.94 reads beside this)
        ("to be ready (timeout:",),
        K.LAUNCHER_GAVE_UP,
        r"Waiting for (?P<server>[\w.-]+) to be ready \(timeout: (?P<secs>\d+)s\)",
        lambda m: {
            "message": "waiting",
            "component": "lemonade",
            "engine": m["server"],
            "timeout_ms": int(m["secs"]) * 1000,
        },
    ),
    wording(  # InstructLab's `ilab` hiding the server's output it started
        ("Retry with --enable-serving-output",),
        K.LAUNCHER_GAVE_UP,
        r"vLLM failed to start\.\s+Retry with --enable-serving-output",
        lambda m: {"message": "failed", "component": "instructlab", "engine": "vllm"},
    ),
    wording(  # NVIDIA Dynamo's runtime and its control plane: etcd (worker discovery) and NATS with JetStream (queues)
        ("Failed to connect to etcd server", "ServiceUnavailableError", "nats: no servers available"),
        K.DYNAMO_CONTROL_PLANE,
        r"Failed to connect to etcd server(?: with config ClientOptions \{ etcd_url: \[\"(?P<etcd>[^\"]+)\")?"
        r"|(?P<js>nats(?:\.js\.errors\.|: )ServiceUnavailableError)"
        r"|(?P<nats>nats: no servers available for connection)",
        lambda m: {
            "message": m.group(0),
            "component": "etcd" if m["js"] is None and m["nats"] is None else "jetstream" if m["js"] else "nats",
            "address": m["etcd"],
        },
    ),
    wording(  # transformers' tokenizer comparing a sequence with its tokenizer_config's model_max_length
        ("Token indices sequence length is longer than",),
        K.TOKENIZER_LENGTH_WARNING,
        r"Token indices sequence length is longer than the specified maximum sequence length for this model "
        r"\((?P<tokens>\d+) > (?P<limit>\d+)\)",
        lambda m: {"prompt_tokens": int(m["tokens"]), "prompt_limit": int(m["limit"])},
    ),
    wording(  # the process out of file descriptors (EMFILE), and vLLM's start-up warning that it kept a low limit
        ("Too many open files", "Found ulimit of"),
        K.FD_LIMIT,
        r"Found ulimit of (?P<limit>\d+) and failed to automatically increase.*|\[Errno 24\] Too many open files.*",
        lambda m: {"message": m.group(0), "fd_limit": to_int(m["limit"])},
    ),
    wording(  # CUDA's cudaErrorNoKernelImageForDevice: the binary that ran holds no code for this GPU
        ("no kernel image is available",),
        K.GPU_ARCH_UNSUPPORTED,
        r"no kernel image is available for execution on the device",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # ROCm's words for the same: HIP's hipErrorInvalidDeviceFunction and hipErrorNoBinaryForGpu, and rocBLAS
        # finding no Tensile kernels for the GPU's gfx target. rocBLAS prints strerror(errno) after the path it tried
        # last, the generic TensileLibrary.dat once no file for the target was found; that errno can be left over from
        # an earlier call (`Illegal seek`, vllm#28460's gfx1150), so any reason is read, not only `No such file`.
        # Triton's AMD backend compiling one of vLLM's Triton kernels for a target its LLVM does not know (`loc(
        # "…/triton_flash_attention.py":309:0): error: unsupported target: 'gfx906'`, Said-Akbar/triton-gcn5#4)
        ("invalid device function", "hipErrorNoBinaryForGpu", "for GPU arch", "error: unsupported target: 'gfx"),
        K.GPU_ARCH_UNSUPPORTED,
        r"HIP error: invalid device function|hipErrorNoBinaryForGpu: Unable to find code object for all current devices"
        r"|rocBLAS error: Cannot read \S+: [^:]+? for GPU arch : (?P<gfx>gfx\w+)"
        r"|(?P<triton>error: unsupported target: '(?P<tgfx>gfx\w+)')",
        lambda m: {
            "message": "triton" if m["triton"] else m.group(0),
            "component": "ROCm",
            "version": m["gfx"] or m["tgfx"],
        },
    ),
    wording(  # ptxas refusing an instruction the target lacks: nvcc's temporary files (tmpxft_) while building vLLM
        # from source (vllm#1063, #15751), or Triton's at run time (a bfloat16 or FP8 kernel on an older GPU)
        ("requires .target sm_",),
        K.GPU_ARCH_UNSUPPORTED,
        r"ptxas (?P<file>\S+?)(?:, line \d+)?;\s*error\s*: Feature '(?P<feature>[^']+)' requires \.target "
        r"(?P<sm>sm_\d+) or higher",
        lambda m: {
            "message": m["feature"],
            "component": PTX_BUILD if "tmpxft_" in m["file"] else PTX_TRITON,
            "version": m["sm"],
        },
    ),
    wording(  # ptxas that knows the GPU but was given PTX of an older ISA version than the GPU needs: Triton's code
        # generator writes the newest PTX it knows (NixOS/nixpkgs#406675: vLLM 0.9.1's Triton on an RTX 5090, sm_120a)
        ("does not support .target sm_",),
        K.GPU_ARCH_UNSUPPORTED,
        r"PTX \.version (?P<ptx>[\d.]+) does not support \.target (?P<sm>sm_\d+[a-z]?)",
        lambda m: {"message": m["ptx"], "component": PTX_CODEGEN_TOO_OLD, "version": m["sm"]},
    ),
    wording(  # ptxas that does not know the GPU's architecture (its --gpu-name): a CUDA toolkit older than the GPU,
        # most often the ptxas Triton ships meeting a new GPU (nvidia-cosmos/cosmos-reason2#30: GB10, sm_121)
        ("is not defined for option 'gpu-name'",),
        K.GPU_ARCH_UNSUPPORTED,
        r"Value '(?P<sm>sm_\d+[a-z]?)' is not defined for option 'gpu-name'",
        lambda m: {"message": m["sm"], "component": PTX_TOO_OLD, "version": m["sm"]},
    ),
    wording(  # Triton refusing FP8 E4M3 on a GPU before Ada and Hopper while it compiles one of vLLM's kernels
        # (vllm#54318: an FP8 MoE checkpoint on A100s, sm_80): what ptxas would refuse, said by Triton's front end;
        # Triton 2.x and 3.0 asserted it in other words (vllm#8641: an FP8 model and FP8 KV cache)
        ("not supported in this architecture", "data type is not supported on CUDA arch"),
        K.GPU_ARCH_UNSUPPORTED,
        r"type (?P<dtype>fp8e\w+) not supported in this architecture"
        r"(?:\. The supported fp8 dtypes are \((?P<supported>[^)]*)\))?"
        r"|(?P<dtype2>fp8e4nv) data type is not supported on CUDA arch < 89",
        _triton_fp8,
    ),
    wording(  # vLLM's own setup.py (0.1-0.3, a build from source): with TORCH_CUDA_ARCH_LIST unset it compiles for
        # every GPU it sees, and stops at one below its floor ("less than" in 0.1.2, "below" in 0.3.3: their sdists)
        ("GPUs with compute capability below", "GPUs with compute capability less than"),
        K.GPU_ARCH_UNSUPPORTED,
        r"GPUs with compute capability (?:below|less than) (?P<floor>\d+\.\d+) are not supported",
        lambda m: {"message": m["floor"], "component": VLLM_BUILD},
    ),
    wording(  # torch's warning at its first CUDA call (torch/cuda/__init__.py), then its list of what it was built for
        ("is not compatible with the current PyTorch installation", "The current PyTorch install supports"),
        K.GPU_ARCH_UNSUPPORTED,
        r"(?P<gpu>\S.*?) with CUDA capability (?P<sm>sm_\d+) is not compatible with the current PyTorch installation"
        r"|The current PyTorch install supports CUDA capabilities (?P<archs>sm_\w+(?: sm_\w+)*)",
        lambda m: (
            {"message": m["archs"], "component": "PyTorch"}
            if m["archs"]
            else {
                "message": m.group(0),
                "component": m["gpu"].removeprefix("UserWarning: ").strip(),
                "version": m["sm"],
            }
        ),
    ),
    wording(  # the Hugging Face Hub refusing a model's files: huggingface_hub's errors (GatedRepoError,
        # RepositoryNotFoundError, the fine-grained token's 403; their class and status alone, a paste's first line),
        # transformers' OSError, requests' raise_for_status
        (
            "gated repo",
            "is restricted",
            "fine-grained token settings",
            "Invalid credentials in Authorization header",
            "Invalid user token",
            "Client Error: Forbidden for url: https://huggingface.co/",
            "Client Error: Unauthorized for url: https://huggingface.co/",
            "Repository Not Found for url: https://huggingface.co/",
            "GatedRepoError: 40",
            "RepositoryNotFoundError: 40",
        ),
        K.HUB_ACCESS_REFUSED,
        r"(?:GatedRepoError|RepositoryNotFoundError): 40[134] Client Error|Cannot access gated repo|trying to access "
        r"a gated repo|is a gated repository|Access to model \S+ is restricted|fine-grained token settings|Invalid "
        r"credentials in Authorization header|Invalid user token\. The token from HF_TOKEN environment variable is "
        r"invalid|40[13] Client Error: (?:Forbidden|Unauthorized) for url: "
        r"https?://huggingface\.co/|Repository Not Found for url: https?://huggingface\.co/",
        _hub_refusal,
    ),
    wording(  # the Hub answering 404 for one file of a repository at a revision (requests' raise_for_status, or
        # huggingface_hub's EntryNotFoundError): the repository answered, the file is not on that branch (vllm PR #8501:
        # HuggingFaceH4/gemma-2-2b-gkd's files are on another branch than main, and the OpenAI server took no
        # --revision then); a whole repository not found is HUB_ACCESS_REFUSED's words
        ("Not Found for url: ",),
        K.HUB_FILE_MISSING,
        r"(?<!Repository )(?P<how>404 Client Error: Not Found|Entry Not Found|Revision Not Found) for url: "
        r"https?://(?:huggingface\.co|hf-mirror\.com)/(?!datasets/|spaces/)"
        r"(?P<repo>[\w.-]+(?:/(?!resolve/)[\w.-]+)?)/resolve/(?P<revision>[^/\s]+)/"
        r"(?P<file>[^\s'\")?#]+?)(?:\?[^\s'\")]*)?\.?(?=$|[\s'\")])",
        _hub_missing,
    ),
    wording(  # Python's pwd.getpwuid, through getpass.getuser() (torch's inductor cache directory, among others)
        ("getpwuid(): uid not found",),
        K.UID_WITHOUT_USER,
        r"getpwuid\(\): uid not found: (?P<uid>\d+)",
        lambda m: {"message": m["uid"]},
    ),
    wording(  # shadow-utils' tools in a container's start script, before vLLM: /etc not writable (OP-7.162)
        ("cannot lock /etc/",),
        K.PASSWD_LOCKED,
        r"(?:useradd|groupadd|usermod|adduser): cannot lock /etc/(?:passwd|group)",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # a library writing inside its own installed package (FlashInfer's TRT-LLM MoE links its cubins under
        # flashinfer_cubin/cubins, ai-dynamo/dynamo PR #12770: a non-root worker image), quoted or not
        ("Permission denied: ",),
        K.CACHE_NOT_WRITABLE,
        # (not a program under its bin/, which the process runs rather than writes: Triton's ptxas is OP-7.186's; not
        # a module or library, which it reads; not a cache folder, the next wording's)
        r"\[(?:Errno|error) 13\] Permission denied: '?(?P<path>/[^'\s]*?/(?:site|dist)-packages/"
        r"(?![^'\s]*(?:/bin/|cache))[^'\s]+?(?<!\.py)(?<!\.pyc)(?<!\.so)(?<!\.so\.\d))(?='|\s|$|[.,)]+(?:\s|$))",
        lambda m: {"message": m["path"], "component": "package"},
    ),
    wording(  # a cache directory (vLLM's, FlashInfer's, Hugging Face's, Triton's, torch's) the process cannot write;
        # Triton keeps it in ~/.triton/cache, inductor in /tmp/torchinductor_<user>: no "cache" in their parents
        ("Permission denied: ", "Read-only file system: "),
        K.CACHE_NOT_WRITABLE,
        # (`[error 13]`: a person's retyping, vllm#20127)
        r"\[(?:Errno|error) (?:13|(?P<ro>30))\] (?:Permission denied|Read-only file system): "
        r"'(?P<path>[^']*(?:cache|/\.triton|/torchinductor_)[^']*)'",
        lambda m: {"message": m["path"], "component": "read_only" if m["ro"] else None},
    ),
    wording(  # NumPy 2 refusing a module compiled against NumPy 1 (OP-7.171; vllm#5594 on vLLM 0.5.0, vllm#34041 on
        # 0.15.0): its first line, often all a paste keeps
        ("A module that was compiled using NumPy 1.x cannot be run in",),
        K.NUMPY_ABI_MISMATCH,
        r"A module that was compiled using NumPy 1\.x cannot be run in(?: NumPy (?P<numpy>[\d.]+\w*))?",
        lambda m: {"message": m["numpy"]},
    ),
    wording(  # the loader refused a library the process's user may not read (OP-7.170; vllm#15174: an image's uv
        # Python under /root, run as uid 1000)
        ("cannot open shared object file: Permission denied",),
        K.LIBRARY_UNREADABLE,
        r"error while loading shared libraries: (?P<path>\S+?): cannot open shared object file: Permission denied",
        lambda m: {"message": m["path"]},
    ),
    wording(  # any other path on a read-only file system (OP-7.165): an Apptainer image, a volume mounted read-only
        ("Read-only file system: ",),
        K.PATH_READ_ONLY,
        r"\[Errno 30\] Read-only file system: '(?P<path>[^']+)'",
        lambda m: {"message": m["path"]},
    ),
    wording(  # transformers' own words when its Hugging Face cache is not writable (utils/hub.py, 4.x): it warns and
        # goes on, and the download or config read that follows fails
        ("trying to write in your cache folder",),
        K.CACHE_NOT_WRITABLE,
        r"There was a problem when trying to write in your cache folder \((?P<path>[^)]+)\)",
        lambda m: {"message": m["path"]},
    ),
    wording(  # filelock's words while huggingface_hub or ModelScope waits on the lock of a model's download
        # (gpustack/gpustack#3054: a lock an interrupted ModelScope download left behind)
        ("Still waiting to acquire lock on",),
        K.DOWNLOAD_LOCK_WAIT,
        r"Still waiting to acquire lock on [`'\"]?(?P<path>[^\s`'\"]+)",
        lambda m: {"message": m["path"].rstrip(".,)")},
    ),
    wording(  # the inference gateway's endpoint picker (gateway-api-inference-extension's EPP) answering a request for
        # which it found no pod, with its reason (kubernetes-sigs/gateway-api-inference-extension#1697)
        ("InferencePoolResourceExhausted",),
        K.EPP_NO_TARGET_POD,
        r"InferencePoolResourceExhausted\W+failed to find target pod:?\s*(?P<reason>[^\"}]*)",
        lambda m: {"message": m["reason"].strip()},
    ),
    wording(  # transformers' processor (processing_utils.py) warning of a keyword its class does not declare, which
        # vLLM's multimodal processing passes through from --mm-processor-kwargs (vllm#14325: Qwen2-VL's max_pixels)
        ("is not a valid argument for this processor",),
        K.PROCESSOR_KWARG_IGNORED,
        r"Keyword argument `?(?P<kwarg>\w+)`? is not a valid argument for this processor and will be ignored",
        lambda m: {"message": m["kwarg"]},
    ),
    wording(  # the Docker daemon giving up a stop or restart: the container's PID 1 is a zombie. The daemon names the
        # container and the PID (`container <id> PID <n> is zombie …`); a person may quote it without them
        # (NVIDIA/NemoClaw#7219: a vLLM container created without --init)
        ("is zombie and can not be killed",),
        K.CONTAINER_ZOMBIE,
        r"\bPID(?: \d+)? is zombie and can not be killed",
        lambda m: {},
    ),
    wording(  # huggingface_hub's own check before a download (file_download.py warns, then the write fails): the path
        # it would write to (AI-Hypercomputer/tpu-recipes#148: the recipe's volume too small for the model)
        ("Not enough free disk space to download the file",),
        K.DISK_FULL,
        r"Not enough free disk space to download the file\. The expected file size is: [\d.]+ MB\. The target location "
        r"(?P<path>\S+) only has [\d.]+ MB free disk space",
        lambda m: {"message": m["path"], "component": None},
    ),
    wording(  # a write refused for space, with the path (in /dev/shm it is the container's shared memory: OP-7.1), or
        # without one
        ("No space left on device", "Disk quota exceeded: "),
        K.DISK_FULL,
        r"\[Errno (?:28\] No space left on device|(?P<quota>122)\] Disk quota exceeded): '(?P<path>(?!/dev/shm)[^']+)'"
        # the same error with no path after it (a write whose file Python does not name): which store is unknown
        r"|\[Errno 28\] No space left on device\s*$",
        lambda m: {"message": m["path"], "component": "quota" if m["quota"] else None if m["path"] else NO_PATH},
    ),
    wording(  # transformers' GGUF reader indexing a metadata field the file does not have (vllm#14723: a Gemma 3 GGUF
        # without general.name); GGUF's own namespaces, so no other KeyError is taken for it
        ("KeyError: 'general.", "KeyError: 'tokenizer.ggml."),
        K.GGUF_METADATA_MISSING,
        r"KeyError: '(?P<key>(?:general|tokenizer\.ggml)\.[\w.]+)'",
        lambda m: {"message": m["key"]},
    ),
    wording(  # transformers reading a GGUF file as a model's config.json (a vLLM that does not recognise GGUF)
        ("is not a valid JSON file",),
        K.GGUF_READ_AS_CONFIG,
        r"config file at '(?P<path>[^']+\.(?i:gguf))' is not a valid JSON file",
        lambda m: {"message": m["path"]},
    ),
    wording(  # transformers reading a model's config.json that is not JSON: empty (microsoft/OmniParser#130: the
        # repository's own config.json is 0 bytes), cut short, or something else saved under its name; the same words
        # for generation_config.json or a processor's config are not the model's failure (vLLM goes on without them)
        ("is not a valid JSON file",),
        K.CONFIG_NOT_JSON,
        r"config file at '(?P<path>(?:[^']*[/\\])?config\.json)' is not a valid JSON file",
        lambda m: {"message": m["path"]},
    ),
    wording(  # vLLM's CPU KV offload creating its region in /dev/shm (v1/kv_offload/cpu/shared_offload_region.py)
        ("Created mmap file /dev/shm/vllm_offload_",),
        K.KV_OFFLOAD_REGION,
        r"Created mmap file (?P<path>/dev/shm/vllm_offload_\S+?\.mmap) \((?P<gb>[\d.]+) GB\)",
        lambda m: {"message": m["path"], "shm_bytes": int(float(m["gb"]) * 1e9)},
    ),
    wording(  # torch.distributed's TCP store (c10d) not reaching the rendezvous address vLLM gave its processes
        ("client socket has timed out", "client socket has failed to connect", "TCP client failed to connect"),
        K.RENDEZVOUS_UNREACHABLE,
        # `.*?` before "connect to": a terminal that wrapped the line may have left spaces inside a word
        # torch prints the wait as a duration: `600s`, or `600000ms` in releases that format it in milliseconds;
        # TCPStore's retry warning (torch 2.4 on, PR #129261) prints each failed try with the store's whole timeout
        # (the paste may end inside the address: OpenRLHF/OpenRLHF#265, `connect to (172.17.0.2`)
        r"client socket has (?:timed out after (?:(?P<secs>\d+)s|(?P<ms>\d+)ms)\b.*?connect to"
        r"(?: \((?P<host>[^,()]+)(?:, (?P<port>\d+)\))?|[`'\"]?\s*$)"
        # an IPv6 address in brackets holds colons (`[::ffff:172.16.8.232]:39623`, vllm#3771); the last try's summary
        # names the address as a pair (`any network address of (x.x.x.x, 48247)`, vllm#2427)
        r"|failed to connect to \[?(?P<host2>(?<=\[)[^\]\s]+|[^\[\]\s:]+)\]?:(?P<port2>\d+)"
        r"|failed to connect to any network address of \((?P<host4>[^,()]+), (?P<port4>\d+)\))"
        r"|TCP client failed to connect/validate to host \[?(?P<host3>[^\]\s]+?)\]?:(?P<port3>\d+) - retrying",
        _rendezvous,
    ),
    wording(  # HAMi-core, HAMi's GPU-sharing library preloaded into the pod, on a device id it read uninitialised
        ("Illegal device id",),
        K.HAMI_ILLEGAL_DEVICE,
        r"\[HAMI-core ERROR[^\]]*\]:\s*Illegal device id: (?P<id>-?\d+)",
        lambda m: {"message": m["id"]},
    ),
    wording(  # vLLM 0.4.0's NCCL wrapper's __del__, after a start that failed before it held a communicator
        ("object has no attribute 'comm'",),
        K.PYNCCL_NEVER_STARTED,
        r"'NCCLCommunicator' object has no attribute 'comm'",
        lambda m: {},
    ),
    wording(  # Mooncake's transfer engine (vLLM's and LMCache's KV transfer) on a metadata backend its build lacks
        ("Unable to find metadata storage plugin",),
        K.MOONCAKE_METADATA_PLUGIN,
        r"Unable to find metadata storage plugin (?P<scheme>[\w-]+)(?: with conn string: (?P<conn>\S+))?",
        lambda m: {"message": m["scheme"], "address": m["conn"]},
    ),
    wording(  # vllm-ascend's allocator (device_allocator/camem.py) without its compiled extension: the import's
        # warning (vllm-ascend#1114, #3998); the assertion sleep mode then meets is read as the AssertionError it is
        ("Failed to import vllm_ascend_C",),
        K.ASCEND_EXTENSION_MISSING,
        r"Failed to import vllm_ascend_C: ?(?P<error>.+?)(?:\. Sleep mode will be disabled\.?)?\s*$",
        lambda m: {"message": m["error"]},
    ),
    wording(  # a GPU's UUID (GPU-…, MIG-…) where vLLM's device mapping reads CUDA_VISIBLE_DEVICES as integers
        # (vllm#13815: a cluster's scheduler set UUIDs)
        ("invalid literal for int() with base 10: 'GPU-", "invalid literal for int() with base 10: 'MIG-"),
        K.VISIBLE_DEVICE_UUID,
        r"invalid literal for int\(\) with base 10: '(?P<uuid>(?:GPU|MIG)-[0-9a-fA-F-]+(?:/\d+/\d+)?)'",
        lambda m: {"message": m["uuid"]},
    ),
    wording(  # JAX (vLLM's TPU backend) finding the TPU's device file held by another process
        # (vllm-project/tpu-inference PR #2257: a previous test's process not yet gone)
        ("Device or resource busy",),
        K.TPU_BUSY,
        r"TPU initialization failed: open\((?P<dev>/dev/(?:vfio/\d+|accel\d+))\): Device or resource busy",
        lambda m: {"message": m["dev"]},
    ),
    wording(  # Habana's runtime refusing module ids outside those the process can see (vllm-project/vllm-gaudi#946)
        ("Invalid HABANA_VISIBLE_MODULES",),
        K.GAUDI_MODULES_INVALID,
        r"Invalid HABANA_VISIBLE_MODULES=(?P<value>\S+?)\.? Module IDs should be between 0 and (?P<top>\d+)",
        lambda m: {"message": m["value"], "index_bound": int(m["top"])},
    ),
    wording(  # Gloo given an interface (GLOO_SOCKET_IFNAME) that has no address on this host (vllm#12997: eth0 on
        # the second node of a Ray cluster)
        ("Unable to find address for",),
        K.GLOO_INTERFACE_MISSING,
        r"gloo/transport/tcp/device\.cc:\d+\] ifa != nullptr\. Unable to find address for: (?P<iface>\S+)",
        lambda m: {"message": m["iface"]},
    ),
    wording(  # Gloo (the CPU-side groups vLLM's ranks open beside NCCL's) failing to connect every pair of ranks; a
        # paste may leave out the source location (`Gloo connectFullMesh failed ... timed out connecting: …`,
        # aws-samples/aws-do-eks#50)
        ("connectFullMesh failed",),
        K.GLOO_MESH_FAILED,
        r"Gloo connectFullMesh failed(?: with \[[^\]]*\]| ?(?:\.\.\.|…))\s*(?P<reason>.*?)[\s,]*$",
        lambda m: {"message": m["reason"] or None},
    ),
    wording(  # the store's side: torch.distributed's TCPStore server gave up waiting for the other ranks
        ("waiting for clients",),
        K.RENDEZVOUS_WAITING,
        r"Timed out after (?P<secs>\d+) seconds waiting for clients\. (?P<joined>\d+)/(?P<total>\d+) clients joined",
        lambda m: {"message": f"{m['joined']}/{m['total']}", "timeout_ms": int(m["secs"]) * 1000},
    ),
    wording(  # a rank waiting at a barrier for keys the others never set (the store's `wait timeout after 1800000ms,
        # keys: /default_pg/0//2//cpu//0/2`, vllm#52907), or for a Gloo peer that never sent or received (vLLM's CPU
        # groups: its same-node check, data parallelism across nodes; vllm#43420, vllm#16514); HCCL, Ascend's
        # collectives, on a rank that never connected (vllm-ascend#5461: two A2 nodes)
        (
            "DistStoreError: wait timeout after",
            "ms for recv operation to complete",
            "ms for send operation to complete",
            "Get_Socket_Timeout(EI0006)",
            "Communication_Error_Get_Socket(EI0006)",
        ),
        K.RENDEZVOUS_WAITING,
        r"DistStoreError: wait timeout after (?P<ms>\d+)ms, keys: (?P<keys>\S+)"
        r"|Timed out waiting (?P<gms>\d+)ms for (?P<op>recv|send) operation to complete"
        # the code's other name, alone (vllm-project/afd-plugin#229: `Communication_Error_Get_Socket(EI0006)`)
        r"|(?P<hccl>Get_Socket_Timeout\(EI0006\)): Getting socket times out"
        r"|(?P<hccl2>Communication_Error_Get_Socket\(EI0006\))",
        _peers_never_came,
    ),
    wording(  # Ray's runtime_env check (ray/_private/runtime_env/setup_hook.py) on a variable it sets itself
        ("is reserved for the internal use",),
        K.RAY_RESERVED_ENV,
        r"The env var, (?P<var>[A-Za-z_][A-Za-z0-9_]*), is not permitted because it is reserved for the internal use",
        lambda m: {"message": m["var"]},
    ),
    wording(  # oneCCL (Intel GPUs' collectives, src/common/global/ze/ze_fd_manager.cpp) opening the GPUs' device files
        ("ze_fd_manager", "fallbacks to drmfd exchange mode"),
        K.ONECCL_DEVICE_FILES,
        r"ze_fd_manager\.cpp:\d+ (?P<function>\w+): (?:EXCEPTION: )?(?:(?P<what>opendir|open) failed\b|condition "
        r"fds\[dev_idx\] > 0 failed).*|pidfd is not supported, fallbacks to drmfd exchange mode",
        lambda m: {"message": m["what"] or ("open" if m["function"] else "pidfd"), "function": m["function"]},
    ),
    wording(  # oneCCL (src/exec/exec.cpp, src/common/utils/base_thread.cpp) starting the thread its collectives run on
        ("start_workers", "failed to start worker", "error while creating worker thread"),
        K.ONECCL_WORKER_START,
        r"(?:start_workers: (?:EXCEPTION: )?failed to start worker|oneCCL: failed to start worker|error while "
        r"creating worker thread #\d+(?: pthread_create returns (?P<code>\d+))?)",
        lambda m: {"message": m["code"] or ""},
    ),
    wording(  # the host's memory limit reached: Kubernetes' reason, Docker's state, the kernel's OOM killer, systemd
        ("OOMKilled", "Killed", "killed by the OOM killer", "'oom-kill'"),
        K.HOST_OOM_KILLED,
        # systemd's journal for a unit one of whose processes the OOM killer killed (src/core/unit.c, service.c)
        r"(?P<unit>[\w@.:-]+\.service): (?:A process of this unit has been killed by the OOM killer"
        r"|Failed with result 'oom-kill')"
        r"|(?:Reason:\s*)?\bOOMKilled\b.*"
        r"|(?P<cgroup>Memory cgroup )?[Oo]ut of memory: Killed process \d+ \((?P<process>[^)]*)\)"
        r"(?:.*?anon-rss:(?P<rss_kb>\d+)kB)?.*"
        # the shell's word for SIGKILL, which the kernel's OOM killer sends (so does `kill -9`, or an orchestrator
        # after its grace period): alone, or after a job's or a script's prefix, before the command it killed
        rf"|(?P<shell>{SHELL_JOB}Killed(?:\s{{2,}}.*)?$)",
        _oom_killed,
    ),
    wording(  # safetensors refusing a file's header: what stands where the weights should be (older releases print the
        # error's name, HeaderTooLarge; 0.8.0 prints a sentence, header too large: both as printed)
        ("Error while deserializing header",),
        K.WEIGHTS_FILE_DAMAGED,
        r"Error while deserializing header: (?:(?P<not_safetensors>HeaderTooLarge|header too large)"
        r"|(?P<empty>HeaderTooSmall|header too small)"
        r"|(?P<truncated>MetadataIncompleteBuffer|incomplete metadata, file not fully covered)"
        r"|(?P<corrupt>InvalidHeaderDeserialization|invalid JSON in header))",
        lambda m: {"message": m.lastgroup},
    ),
    wording(  # Ray Serve's controller waiting to place a replica (serve/_private/deployment_state.py)
        ("to be scheduled",),
        K.RAY_REPLICA_UNPLACED,
        r"Deployment ['\"]*(?P<deployment>[^'\"]+?)['\"]*(?: in application ['\"]*[^'\"]*['\"]*)? has \d+ replicas? "
        r"that ha(?:ve|s) taken more than \d+s to be scheduled.*?Resources required for each replica: "
        r"(?P<required>\[?\{[^\]]*?\}\]?), (?:total )?resources available: (?P<available>\{[^}]*\})",
        _ray_replica,
    ),
    wording(  # vLLM's Ray executor waiting for its own placement group (executor/ray_utils.py, logged at info every
        # so often until it gives up with "Cannot provide a placement group …"): kuberay#3414, a worker pod in Init
        ("Waiting for creating a placement group of specs",),
        K.RAY_REPLICA_UNPLACED,
        r"Waiting for creating a placement group of specs for (?P<waited>\d+) seconds\. specs=(?P<specs>\[[^\]]*\])",
        _vllm_placement_wait,
    ),
    wording(  # a framework that runs vLLM on Ray checking the cluster's GPUs before its placement groups (NeMo-RL's
        # RayVirtualCluster, NVIDIA-NeMo/RL PR #271, which retries with backoff)
        ("Not enough GPUs available",),
        K.RAY_REPLICA_UNPLACED,
        r"Not enough GPUs available\. Requested (?P<wanted>\d+) GPUs?, but only (?P<have>\d+) (?:are|is) available in "
        r"the cluster",
        lambda m: {
            "message": FRAMEWORK_GPU_REQUEST,
            "gpus_required": float(m["wanted"]),
            "gpus_available": float(m["have"]),
        },
    ),
    wording(  # Ray's autoscaler on the same wait: a bundle of vLLM's placement group, pinned to the driver's node
        # (`node:<ip>`) with a GPU, that no node it knows can hold (vllm#13388); the request may be on the next line,
        # where a terminal wrapped it (eugr/spark-vllm-docker#227)
        ("No available node types can fulfill resource request",),
        K.RAY_REPLICA_UNPLACED,
        r"No available node types can fulfill resource request(?: (?P<specs>\{[^}]*['\"]GPU['\"][^}]*\})|\s*$)",
        lambda m: {"message": VLLM_PLACEMENT_GROUP, "component": "Ray's autoscaler"},
    ),
    wording(  # a Ray actor died: the caller's RayActorError (its class_name, pid and actor_id lines may be joined to
        # it) and the GCS's reason on the line after, or joined to it too
        (
            "The actor died unexpectedly",
            "The actor is dead because",
            "A worker died or was killed",
            "Worker exit type",
            "error raised in its creation task",
            "Exception in Replica(",
            "initialize_and_get_metadata()",
        ),
        K.RAY_ACTOR_DIED,
        r"The actor died unexpectedly before finishing this task|The actor is dead because"
        r"|A worker died or was killed while executing a task by an unexpected system error"
        r"|^Worker exit type: [A-Z_]+ Worker exit detail: "
        r"|error raised in its creation task|Exception in Replica\(.*?\), the replica will be stopped"
        r"|ray::ServeReplica:\S+?\.initialize_and_get_metadata\(\)",
        _ray_actor_died,
    ),
    wording(  # Ray's GCS marking a node dead after its health checks failed (every driver logs it as a warning), and
        # a process on a node seeing that node's raylet die (`(raylet) Raylet is terminated. Termination is unexpected.
        # Possible reasons include: (1) SIGKILL by the user or system OOM killer, …`, vllm#26899)
        ("has been marked dead because the detector", "Raylet is terminated. Termination is unexpected"),
        K.RAY_NODE_DEAD,
        r"The node with node id: \w+ and address: (?P<address>\S+) and node name: (?P<name>\S+) has been marked dead "
        r"because the detector has missed too many heartbeats|(?P<raylet>Raylet is terminated\. Termination is "
        r"unexpected)",
        lambda m: {"message": RAYLET_TERMINATED} if m["raylet"] else {"address": m["address"], "message": m["name"]},
    ),
    wording(  # the host refusing memory rather than killing for it: PyTorch's CPU allocator
        # (c10/core/impl/alloc_cpu.cpp: "can't allocate memory" where posix_memalign refuses, as libc10.so of torch
        # 2.13 holds it; "not enough memory" on the path without it, as users on Windows builds quote it) and the
        # OS's ENOMEM as Python prints it
        (
            "DefaultCPUAllocator: can't allocate memory",
            "DefaultCPUAllocator: not enough memory",
            "[Errno 12] Cannot allocate memory",
        ),
        K.HOST_ALLOC_REFUSED,
        r"DefaultCPUAllocator: (?:can't allocate|not enough) memory: you tried to allocate (?P<bytes>\d+) bytes"
        r"|\[Errno 12\] Cannot allocate memory",
        lambda m: {"message": m.group(0), "memory_gib": int(m["bytes"]) / 1024**3 if m["bytes"] else None},
    ),
    wording(  # Ray's memory monitor killing a worker for the node's memory (the raylet, before the kernel would)
        ("running low on memory", "memory usage threshold", "killed due to memory pressure"),
        K.HOST_OOM_KILLED,
        rf"(?:{_RAY_KILLED}.*?)?{_RAY_NODE}|{_RAY_KILLED}",
        _ray_memory_monitor,
    ),
    wording(  # `kubectl get pods` (with or without its NAMESPACE column): a pod whose container does not run
        (*POD_STATUSES,),
        K.POD_STATUS,
        rf"^(?:\S+\s+)?(?P<pod>[a-z0-9][-a-z0-9.]*)\s+\d+/\d+\s+(?P<status>(?:Init:)?(?:{'|'.join(POD_STATUSES)}))"
        r"\s+(?P<restarts>\d+)",
        lambda m: {"pod": m["pod"], "pod_status": m["status"], "restarts": to_int(m["restarts"])},
    ),
    wording(  # `kubectl describe pod`: the container's state reason, and the kubelet's events about it
        (
            "Reason:",
            "Back-off",
            "Failed to pull image",
            "not found",
            "attach or mount volumes",
            "Multi-Attach error",
            "MountVolume.",
        ),
        K.POD_STATUS,
        rf"^\s*Reason:\s+(?P<reason>{'|'.join(POD_STATUSES)})\s*$"
        r"|Back-off (?P<backoff>restarting failed container|pulling image)(?: \"?(?P<bimage>[^\"\s]+))?"
        r"|Failed to pull image \"(?P<image>[^\"]+)\": (?P<why>.*)"
        r"|Error: (?P<kind>secret|configmap) \"(?P<name>[^\"]+)\" not found"
        # the kubelet's volume manager: a volume whose source does not exist, one not mounted in time, one held by
        # another node (ReadWriteOnce)
        r"|MountVolume\.SetUp failed for volume \"[^\"]+\" : (?P<vkind>persistentvolumeclaim|secret|configmap) "
        r"\"(?P<vname>[^\"]+)\" not found"
        r"|Unable to attach or mount volumes: unmounted volumes=\[(?P<unmounted>[^\]]*)\].*timed out waiting"
        r"|Multi-Attach error for volume \"(?P<multi>[^\"]+)\""
        # any other mount the node failed (an NFS server, a CSI driver): the kubelet's words after the colon
        r"|MountVolume\.(?:SetUp|MountDevice) failed for volume \"(?P<failed>[^\"]+)\" : (?P<fwhy>.+?)\s*$",
        _pod_event,
    ),
    wording(  # `kubectl logs` for a container that has not started yet: what it waits for
        ("is waiting to start",),
        K.POD_STATUS,
        _LOGS_WAITING,
        _logs_waiting,
    ),
    wording(  # the mixin's KubePodCrashLooping (its older releases counted restarts per 5 or 10 minutes)
        ("is in waiting state", "is restarting"),
        K.POD_STATUS,
        _MIXIN_CRASH_LOOPING,
        _mixin_alert("KubePodCrashLooping", "CrashLoopBackOff"),
    ),
    wording(  # the mixin's KubeContainerWaiting: the waiting reason, where its release names it
        ("has been in waiting state",),
        K.POD_STATUS,
        _MIXIN_CONTAINER_WAITING,
        _mixin_alert("KubeContainerWaiting"),
    ),
    wording(  # the mixin's KubePodNotReady: Pending or Unknown, or Running and not Ready, for 15 minutes
        ("non-ready state",),
        K.POD_STATUS,
        _MIXIN_NOT_READY,
        _mixin_alert("KubePodNotReady", "NotReady"),
    ),
    wording(  # the Docker daemon failing to pull the image for `docker run` or `docker pull`
        ("manifest unknown", "pull access denied", "toomanyrequests"),
        K.POD_STATUS,
        r"manifest for (?P<image>\S+) not found: manifest unknown.*"
        r"|pull access denied for (?P<denied>[^,\s]+), repository does not exist.*"
        r"|toomanyrequests: You have reached your pull rate limit.*",
        lambda m: {
            "pod_status": "ErrImagePull",
            "image": m["image"] or m["denied"],
            "message": m.group(0),
            "component": "Docker",
        },
    ),
    wording(  # Docker Compose on a service's container that stopped with a code (`docker compose up`'s `vllm-1 exited
        # with code 1`; a dependent service's `dependency failed to start: container vllm-service exited (1)`)
        ("exited with code", "exited ("),
        K.POD_STATUS,
        r"(?:dependency failed to start: )?container (?P<dep>[\w.-]+) exited \((?P<dcode>\d+)\)"
        # (the service's name may have gone with a `name  | ` prefix read as the container's)
        r"|^(?:(?P<service>[\w.-]+)\s+)?(?:\|\s+)?exited with code (?P<scode>\d+)",
        lambda m: {
            "pod_status": "Exited",
            "container": m["dep"] or m["service"],
            "message": m["dcode"] or m["scode"],
            "component": "Docker",
        },
    ),
    wording(  # llm-d-benchmark's check of a pod it deployed: a container terminated with a code other than 0
        ("Crashed container in pod:",),
        K.POD_STATUS,
        r"Crashed container in pod: (?P<pod>[a-z0-9][-a-z0-9.]*)(?:, container: (?P<container>[\w.-]+))?",
        lambda m: {"pod_status": "Terminated", "pod": m["pod"], "container": m["container"]},
    ),
    wording(  # the kubelet evicting the pod (`kubectl describe pod`'s Message, or its Evicted event)
        ("The node was low on resource", "local ephemeral storage", "ephemeral local storage", "Usage of EmptyDir"),
        K.POD_STATUS,
        _EVICTION,
        _eviction,
    ),
    wording(  # any other line naming a pod in one of the kubelet's own status words (a dashboard's or a chat's
        # `Pod: vllm-5dcf598989-k2bhw - CrashLoopBackOff`): these words are Kubernetes' alone, so the line is a pod's
        _UNIQUE_POD_STATUSES,
        K.POD_STATUS,
        # (a pod's name has a hyphen or a dot: a generated one always does, and a plain word after "pod" is prose)
        r"(?:\b[Pp]od[:/ ]\s*(?P<pod>[a-z0-9]+(?:[-.][a-z0-9]+)+)\b.*?)?"
        rf"\b(?P<status>{'|'.join(_UNIQUE_POD_STATUSES)})\b",
        lambda m: {"pod": m["pod"], "pod_status": m["status"]},
    ),
    wording(  # nvidia-smi's process table: GPU, (GI, CI on MIG-capable drivers), PID, type, name, memory
        ("MiB |",),
        K.GPU_PROCESS,
        r"^\|\s+(?P<gpu>\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d+)\s+(?:C|G|M|C\+G|M\+C)\s+"
        r"(?P<name>\S.*?)\s+(?P<mib>\d+)MiB\s*\|$",
        lambda m: {
            "gpu_index": to_int(m["gpu"]),
            "pid": to_int(m["pid"]),
            "component": m["name"],
            "memory_gib": to_gib(m["mib"], "MiB"),
        },
    ),
    wording(  # the host's NVIDIA libraries and kernel module of two versions: NVML's and the kernel's words, and the
        # version lines printed beside them (nvidia-smi's second line, /proc/driver/nvidia/version, dmesg's load line)
        ("mismatch", "Mismatch", "NVRM", "NVML library version"),
        K.NVIDIA_DRIVER_MISMATCH,
        r"(?P<nvml>(?i:driver/library version mismatch)|RM has detected an NVML/RM version mismatch)"
        rf"|NVRM: API mismatch: the client has the version (?P<client>{_DRIVER_VERSION}), but"
        rf"(?: (?:NVRM: )?this kernel module has the version (?P<module>{_DRIVER_VERSION}))?"
        rf"|NVRM: this kernel module has the version (?P<kernel>{_DRIVER_VERSION})\."
        rf"|NVML library version: (?P<library>{_DRIVER_VERSION})"
        rf"|NVRM(?: version:|: loading) NVIDIA UNIX .*?Kernel Module(?: for \S+)?\s+(?P<loaded>{_DRIVER_VERSION})",
        _driver_versions,
    ),
    wording(  # the container (or process) cannot use the host: its GPU runtime, its GPUs, its CPU architecture
        (
            "could not select device driver",
            "No CUDA GPUs are available",
            "No HIP GPUs are available",
            "XPU device count is zero",
            "AMDSMI_STATUS_FILE_ERROR",
            "Found no NVIDIA driver",
            "NVML",
            "xec format error",
            "does not match the expected platform",
            "does not match the detected host platform",
            "libcuda.so",
            "CUDA unknown error",
            "no CUDA-capable device is detected",
            "No supported device detected",
            "CUDA driver initialization failed",
            "nvidia-container-cli",
            "unresolvable CDI devices",
            "couldn't communicate with the NVIDIA driver",
            'no runtime for "nvidia"',
            "runtime name: nvidia",
            "Unknown runtime specified nvidia",
            "No devices were found",
            "RmInitAdapter failed",
        ),
        K.CONTAINER_HOST_MISMATCH,
        r"(?P<docker_runtime>could not select device driver \"[^\"]*\" with capabilities: \[\[gpu\]\])"
        # `--runtime=nvidia` (or a compose file's `runtime: nvidia`) asked of a Docker daemon with no such runtime in
        # its daemon.json, in current Docker's and in old Docker's words
        r"|(?P<docker_no_nvidia_runtime>unknown or invalid runtime name: nvidia|Unknown runtime specified nvidia)"
        # the driver loaded and initialised no GPU: nvidia-smi's words, and the kernel log's for the GPU that failed
        r"|(?P<no_devices>^\s*No devices were found\s*$"
        r"|NVRM: (?:GPU (?P<failed_gpu>[0-9A-Fa-f:.]+): )?RmInitAdapter failed)"
        r"|(?P<no_gpu_visible>No CUDA GPUs are available|Found no NVIDIA driver on your system"
        r"|CUDA error: no CUDA-capable device is detected"
        # vLLM's own words (0.2-0.3, DeviceConfig with device="auto": neither Neuron nor CUDA available)
        r"|No supported device detected\.)"
        # torch built for ROCm says HIP where its CUDA build says CUDA (hipify renames CUDA in its C++ sources)
        # … and AMD SMI (which vLLM's ROCm platform asks for the GPU's name) unable to read the GPU's device files
        # (amdsmi's status 14, `AMDSMI_STATUS_FILE_ERROR`; lemonade-sdk/vllm-rocm#13: /dev/dri not readable)
        r"|(?P<no_hip_gpu_visible>No HIP GPUs are available|AMDSMI_STATUS_FILE_ERROR)"
        # PyTorch's XPU build finding no Intel GPU (torch/xpu/__init__.py's warning; vllm#48625: the image's SYCL
        # runtime libraries off LD_LIBRARY_PATH, so SYCL enumerated none)
        r"|(?P<no_xpu_gpu_visible>XPU device count is zero!)"
        r"|(?P<no_driver_library>libcuda\.so(?:\.1)?: cannot open shared object file)"
        r"|(?P<nvml_lost>Failed to initialize NVML: Unknown Error)"
        r"|(?P<cuda_unknown>CUDA unknown error - this may be due to an incorrectly set up environment"
        r"|CUDA driver initialization failed, you might not have a CUDA gpu)"
        # the kernel refusing a binary of another CPU architecture (ENOEXEC): runc's and Docker's lower case, crun's
        # and Podman's `exec container process `/opt/venv/bin/vllm`: Exec format error` (vllm#30076), Python's
        # `[Errno 8] Exec format error`
        r"|(?P<exec_format>[Ee]xec format error)"
        # the engine's warning before it, with both platforms (Podman's `image platform (linux/amd64) does not match
        # the expected platform (linux/arm64)`, Docker's `… does not match the detected host platform (…)`): alone a
        # warning (emulation may run it), it names the two architectures for the refusal
        r"|(?P<platform_warning>platform \((?P<image>[\w/.-]+)\) does not match the (?:expected|detected host) "
        r"platform \((?P<host>[\w/.-]+)\))"
        # the NVIDIA Container Toolkit's hook (libnvidia-container) and nvidia-smi on the host: no kernel module, no
        # driver library, a GPU asked for that the driver does not list
        r"|(?P<driver_not_loaded>nvml error: driver not loaded"
        r"|NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver)"
        r"|(?P<no_nvml_library>load library failed: libnvidia-ml\.so\.1)"
        r"|(?P<unknown_device>nvidia-container-cli: device error: (?P<device>[^:\s]+): unknown device)"
        # containerd (or CRI-O) asked for the RuntimeClass handler the NVIDIA toolkit would have configured
        r"|(?P<no_nvidia_runtime>no runtime for \"nvidia\" is configured)"
        # the runtime's CDI injection (containerd, CRI-O, Podman) finding no specification for a device asked by name
        r"|(?P<cdi_unresolvable>unresolvable CDI devices (?P<cdi_device>[\w./-]+=[\w.-]+))",
        lambda m: {
            "message": m.group(0),
            "component": m.lastgroup,  # the outer group: it closes after any group nested in it
            "device": m["device"]
            or m["failed_gpu"]
            or m["cdi_device"]
            or (f"{m['image']}, the host {m['host']}" if m["image"] else None),
        },
    ),
    wording(  # DCGM exporter's gauge of each GPU's last Xid (0: none), as /metrics or a Prometheus query shows it
        ("DCGM_FI_DEV_XID_ERRORS{",),
        K.GPU_FAULT,
        r"DCGM_FI_DEV_XID_ERRORS\{(?P<labels>[^}]*)\}\s+(?P<xid>[1-9]\d*)(?:\.0+)?(?:\s|$)",
        _dcgm_xid,
    ),
    wording(  # the GPU failing: the NVIDIA driver's Xid (dmesg, the journal), or CUDA's words for a hardware fault
        ("Xid", "uncorrectable ECC error", "uncorrectable NVLink error", "fallen off the bus"),
        K.GPU_FAULT,
        r"NVRM: Xid \((?:PCI:)?(?P<device>[0-9A-Fa-f:.]+)\): (?P<xid>\d+),? ?(?P<words>.*)"
        # a kernel-log record quoted without NVRM's prefix and the GPU's address (vllm#53726: `08-04 06:43:55 Xid 31
        # GPC1 …`): at the line's start, or after a time or `kernel: `, and the driver's upper-case words after it, so
        # a sentence about an Xid (`I checked dmesg for Xid 79 Errors`) is none
        r"|(?:^\s*|(?<=\d\d:\d\d:\d\d )|(?<=kernel: ))Xid (?P<bare_xid>[1-9]\d{0,2}),? "
        r"(?P<bare_words>[A-Z][A-Z0-9_]*\b.*)"
        r"|(?P<cuda>uncorrectable (?:ECC|NVLink) error (?:encountered|detected during the execution))"
        r"|(?P<off_bus>fallen off the bus)",
        _gpu_fault,
    ),
    wording(  # the cluster autoscaler declining to add a node for it (its NotTriggerScaleUp event): per node group why
        ("didn't trigger scale-up",),
        K.POD_UNSCHEDULABLE,
        r"[Pp]od didn't trigger scale-up:?(?P<reasons>.*)",
        lambda m: {
            "message": m["reasons"].strip() or None,
            "insufficient": list(dict.fromkeys(r["resource"] for r in _INSUFFICIENT.finditer(m["reasons"]))),
            "component": "cluster-autoscaler",
        },
    ),
    wording(  # Kubernetes' scheduler finding no node for the pod (`kubectl describe pod`'s FailedScheduling event)
        ("nodes are available",),
        K.POD_UNSCHEDULABLE,
        r"(?P<available>\d+)/(?P<total>\d+) nodes are available: (?P<reasons>.*?)(?:\.\s+preemption:.*|\.?\s*$)",
        _unschedulable,
    ),
    wording(  # a reasoning model's output pasted: which of its tags the line holds
        ("<think>", "</think>"),
        K.REASONING_TAG,
        r"</?think>",
        lambda m: {"message": _think_tags(m.string)},
    ),
    wording(  # transformers' refusal, retyped in any case from an issue title; its newer words (`The repository for X
        # contains custom code which must be executed to correctly load the model`), cut anywhere after "must be"
        # (vllm-project/tpu-inference PR #2927: a benchmark client's tokenizer without trust_remote_code)
        ("trust_remote_code", "requires you to execute the configuration file", "contains custom code which must be"),
        K.REMOTE_CODE_REFUSED,
        r"(?i)requires you to execute the (?:configuration|modeling) file.*|set the option "
        r"['\"`]?trust_remote_code=true.*|The repository (?:for )?\S+ contains custom code which must be.*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # NCCL's own warning (init.cc) when a communicator is used in CUDA graph capture it cannot support: NCCL
        # built for a CUDA runtime before 11.3, or a driver before R465 (vllm#3069: torch's cu118 wheel with NCCL
        # 2.19.3+cuda11.0)
        ("NCCL cannot be captured in a graph",),
        K.NCCL_GRAPH_UNSUPPORTED,
        r"NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= (?P<runtime>[\d.]+) or if "
        r"the installed CUDA driver < (?P<driver>R\d+)",
        lambda m: {"message": f"CUDA runtime >= {m['runtime']}, driver >= {m['driver']}"},
    ),
    wording(  # xFormers' check of its compiled extension (xformers/_cpp_lib.py): built for another PyTorch or CUDA
        # than the installed one, its kernels do not load (vllm#13116: a wheel for torch 2.6.0 beside vLLM's 2.5.1)
        ("xFormers can't load C++/CUDA extensions", "(you have "),
        K.XFORMERS_BUILD_MISMATCH,
        r"xFormers can't load C\+\+/CUDA extensions"
        r"|^\s*PyTorch (?P<built>\S+) with CUDA \d+ \(you have (?P<have>[^)\s]+)\)",
        lambda m: {"message": m["built"], "version": m["have"]},
    ),
    wording(  # Helm resolving <repo>/<chart> against its local copy of the repository's index (vllm-project/
        # production-stack#37: the production stack's chart is vllm-stack)
        ('" matching ',),
        K.HELM_CHART_NOT_FOUND,
        r"chart \"(?P<chart>[^\"]+)\" matching (?:\S+ )?not found in (?P<repo>\S+) index",
        lambda m: {"message": m["chart"], "component": m["repo"]},
    ),
)
