"""OP-7.41: a Ray actor died (vLLM's GPU worker, or an actor of the framework around it), and Ray's words for why.

Why a rule of its own: with `--distributed-executor-backend ray`, and in every RL or batch framework that runs vLLM
inside Ray, vLLM's workers are Ray actors (`RayWorkerWrapper`, one per GPU rank: vllm/v1/executor/ray_utils.py and
ray_executor.py, 0.32). When one dies, the caller sees `ray.exceptions.RayActorError` (ActorDiedError in newer Ray):
`The actor died unexpectedly before finishing this task.`, with the actor's class_name and pid, and on the next line
Ray's reason, which its GCS writes from one of a few causes (gcs_actor_manager.cc): `The actor is dead because its
worker process has died. Worker exit type: … Worker exit detail: …`, `… its owner has died …`, `… its node has
died …`, `… it was killed by ray.kill`. The traceback around it holds no frame of the process that died, so reading
it "from its first frame inside vllm/" finds nothing; where to look depends on the reason. A worker process that
exited without a Python exception (`Worker unexpectedly exits with a connection error code 2. End of file.`) was
killed (SIGKILL: most often the kernel's OOM killer) or crashed in native code, and the node's kernel log and the
worker's own log file say which; an owner that died first, or a node that left the cluster, put the cause elsewhere.
Ray's memory monitor's kill (`Task was killed due to the node running low on memory`) is OP-7.30's.
A node that left shows first as the GCS's warning, which every driver prints: `The node with node id: … and address:
… has been marked dead because the detector has missed too many heartbeats from it` (its health check: every 3 s, 10 s
each, dead after 5 failures in a row, src/ray/common/ray_config_def.h); every actor on it died with it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import RAYLET_TERMINATED, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

VLLM_WORKER = "RayWorkerWrapper"  # vLLM's Ray worker class (vllm/v1/executor/ray_utils.py, 0.32)

_KERNEL_LOG = (
    "On the node that ran it: `dmesg -T | grep -i -E 'killed process|out of memory|segfault|NVRM: Xid'` (or "
    "`journalctl -k`) names the kernel's OOM killer (host memory: raise the node's or container's memory, as OP-7.30 "
    "says), a crash in native code, or a GPU fault."
)
_OWN_LOG = (
    "Its own last lines: `ray logs actor --id {actor}` while its node is alive, or on the node "
    "/tmp/ray/session_latest/logs/worker-*-{pid}.err; a traceback or a fatal error there is the cause."
)
_ASK_REASON = (
    "Copy the lines after Ray's error too: `The actor is dead because …` says whether its process died (with its "
    "exit type and detail), its owner died, its node left the cluster, or it was killed on purpose."
)
# What to do for each of Ray's reasons: (what happened, actions).
_REASONS: dict[str, tuple[str, list[str]]] = {
    "owner": (
        "the process that created it died first (Ray: its owner has died): this death is a consequence",
        [
            "Read the owner's log for its own error: the driver or engine process that created the actor (vLLM's "
            "engine core, or the framework's trainer); Ray's line names the owner's address and exit type.",
            "An owner whose node crashed (`Owner's node has crashed`) is a node that left the cluster: see `ray "
            "status` and that node's kernel log.",
        ],
    ),
    "node": (
        "its node left the Ray cluster (Ray: its node has died)",
        [
            "See which node and why: `ray list nodes --filter state=DEAD` (or `ray status`), the node's kernel log "
            "and its raylet.out; a machine rebooted, preempted or scaled down, or cut off from the head node.",
            "Until the node is back, the actors it held are gone: the engine needs every GPU rank, so restart it once "
            "the node is healthy (or place it on nodes that stay).",
        ],
    ),
    "killed": (
        "something killed it on purpose (Ray: ray.kill)",
        [
            "vLLM's Ray executor kills its workers when it shuts down (ray_executor.py, 0.32), and frameworks kill "
            "their actors the same way: find the first error before this one in the driver's log; the kill is its "
            "consequence.",
        ],
    ),
    "unreferenced": (
        "nothing referred to it any more (Ray: all references to the actor were removed)",
        ["The process holding its handle let go of it (it exited, or dropped the object): read that process's log."],
    ),
    "creation": (
        "its constructor raised: the vLLM engine it was starting failed, and the exception is printed with Ray's error",
        [
            "Read the exception Ray prints under this error (the creation task's traceback; for a Ray Serve replica, "
            "the controller's log after `the replica will be stopped`) and triage it: `… | servops triage --logs -`. "
            "That is vLLM's own start-up failure.",
            "Inside an actor, vLLM sees only the GPUs Ray gave it: an actor asking for fewer GPUs than "
            "tensor-parallel × pipeline-parallel, or sharing them with a trainer that holds memory, fails where a "
            "plain server would not (lower gpu_memory_utilization when colocated).",
            "Its own log holds the same traceback when the driver's output lost it: "
            "/tmp/ray/session_latest/logs/worker-*-<pid>.err on its node, or `ray logs actor --id <actor_id>`.",
        ],
    ),
}


def _check(facts: Facts) -> list[Finding]:
    if facts.events_of(LogEventKind.HOST_OOM_KILLED):
        return []  # a kill for memory beside it is the cause (OP-7.30)
    events = facts.events_of(LogEventKind.RAY_ACTOR_DIED)
    if not events:
        nodes = facts.events_of(LogEventKind.RAY_NODE_DEAD)
        declared = [e for e in nodes if e.message != RAYLET_TERMINATED]
        if declared:
            return [_node_finding(declared[0], len({e.address for e in declared}))]
        return [_raylet_finding(nodes[0])] if nodes else []
    died = next((e for e in events if e.actor_class or e.pid), events[0])
    reason = next((e for e in events if e.component), None)
    return [_finding(died, reason)]


def _actor(died: LogEvent) -> str:
    """Who died, as the error's class_name and pid lines say."""
    where = f"pid {died.pid}" if died.pid else ""
    if died.actor_class == VLLM_WORKER:
        return f"vLLM's GPU worker (Ray actor {VLLM_WORKER}" + (f", {where})" if where else ")")
    named = f"Ray's actor {died.actor_class}" if died.actor_class else "a Ray actor"
    return named + (f" ({where})" if where else "")


def _finding(died: LogEvent, reason: LogEvent | None) -> Finding:
    why = reason.component if reason is not None else None
    own_log = _OWN_LOG.format(actor=died.actor_id or "<actor_id>", pid=died.pid or "<pid>")
    if why in _REASONS:
        happened, actions = _REASONS[why]
    elif reason is None:
        happened = "Ray's reason, the line after (`The actor is dead because …`), is not in the text"
        actions = [_ASK_REASON, _KERNEL_LOG, own_log]
    elif reason.message and "connection error" not in reason.message:
        happened, actions = f"its process exited with an error: {reason.message}", [own_log]
    else:
        happened = "its process was killed or crashed, without a Python exception"
        actions = [_KERNEL_LOG, own_log]
    vllms = died.actor_class == VLLM_WORKER
    evidence = [c.log_evidence(died, name="the actor died", value=died.actor_class)]
    if reason is not None:  # on its own line, or joined to the error's; the exit type (SYSTEM_ERROR …) stays here
        exit_type = f" ({reason.exit_type})" if reason.exit_type else ""
        evidence.append(c.log_evidence(reason, name=f"Ray's reason{exit_type}", value=reason.message or why))
    return RULE.finding(
        Severity.HIGH,
        f"{_actor(died)} died: {happened}",
        summary="Ray raised the death of an actor where its result was awaited; the traceback around it runs in the "
        "caller, not in the process that died, so its cause is in Ray's reason and in that process's own log. "
        + (
            "It is one of vLLM's GPU workers: the engine cannot run without every rank, so requests fail until it "
            "is restarted."
            if vllms
            else "An actor of the framework that runs vLLM may hold vLLM's engine or its workers."
        ),
        evidence=evidence,
        actions=actions,
        confidence=0.6,
    )


# Ray's GCS health check of each node (src/ray/common/ray_config_def.h): every 3 s, each check given 10 s, dead after
# 5 failed in a row: a node is declared dead some 50 s after its raylet stops answering.
HEALTH_CHECK_PERIOD_MS, HEALTH_CHECK_TIMEOUT_MS, HEALTH_CHECK_FAILURES = 3000, 10000, 5


def _node_finding(dead: LogEvent, nodes: int) -> Finding:
    others = f" (and {nodes - 1} other node{'s' if nodes > 2 else ''})" if nodes > 1 else ""
    return RULE.finding(
        Severity.HIGH,
        f"Ray declared node {dead.address or '?'}{others} dead: its raylet stopped answering, and every vLLM worker "
        "on it is gone",
        summary="Ray's GCS (in current releases; older ones counted missed heartbeats instead) checks each node's "
        "raylet every "
        f"{HEALTH_CHECK_PERIOD_MS // 1000} s and declares it dead after {HEALTH_CHECK_FAILURES} checks in a row "
        f"fail (each given {HEALTH_CHECK_TIMEOUT_MS // 1000} s). Either the raylet died (the node's host memory, the "
        "machine rebooted, preempted or scaled down), or it could not answer in time (a network to the head node "
        "that dropped, a node too loaded to reply). The actors on it, vLLM's GPU workers among them, die with it, and "
        "an engine that needs every rank fails until it is restarted.",
        evidence=[c.log_evidence(dead, name="node marked dead", value=dead.address)],
        actions=[
            f"On {dead.address or 'the node'}: `dmesg -T | grep -i -E 'killed process|out of memory|NVRM: Xid'` (the "
            "kernel's OOM killer, a GPU fault) and the raylet's own log, /tmp/ray/session_latest/logs/raylet.out "
            "(its last lines); `ray list nodes --filter state=DEAD` says when.",
            "If the node is alive and its raylet ran on, the checks were lost on the way: check the network between "
            "it and the head node (the same interface vLLM's workers use); Ray's RAY_health_check_timeout_ms and "
            "RAY_health_check_failure_threshold, set where Ray starts, give a slow network longer.",
            "Restart the server once every node is back: the engine needs all its ranks.",
        ],
        confidence=0.7,
    )


def _raylet_finding(said: LogEvent) -> Finding:
    """A process on the node saw its raylet die: Ray lists the causes itself (a SIGKILL, by a user or the kernel's
    OOM killer; a crash in the raylet; another signal); every actor on the node dies with it."""
    return RULE.finding(
        Severity.HIGH,
        "the Ray node's raylet died unexpectedly: every actor on the node, vLLM's workers among them, died with it",
        summary="The raylet is the process that runs each Ray node; the workers on the node printed that it ended "
        "without being asked to, which Ray puts down to a SIGKILL (by a user, or the kernel's OOM killer for the "
        "host's memory), a crash inside the raylet (SIGSEGV, SIGBUS), or another signal. vLLM's GPU workers are "
        "actors on it, so the engine has lost their ranks.",
        evidence=[c.log_evidence(said, name="raylet died", value=RAYLET_TERMINATED)],
        actions=[
            _KERNEL_LOG,
            "The raylet's own last lines: /tmp/ray/session_latest/logs/raylet.out (and raylet.err) "
            "on that node; Ray prints their last 20 lines after this message.",
            "Restart the server once the node's raylet is back (`ray status`): the engine needs all its ranks.",
        ],
        confidence=0.65,
    )


RULE = Rule(
    code="OP-7.41",
    title="a Ray actor (vLLM's worker) died",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="`RayActorError` / `ActorDiedError`: `The actor died unexpectedly before finishing this task.` with "
        "its class_name and pid, and Ray's reason on the next line: `The actor is dead because its worker process "
        "has died` (with its exit type and detail), `… its owner has died`, `… its node has died`, `… it was killed "
        "by ray.kill`; and, without an actor's error, the GCS's `The node with node id: … and address: … has been "
        "marked dead because the detector has missed too many heartbeats from it`; the driver's warning for a "
        "task's worker, `A worker died or was killed while executing a task by an unexpected system error`, and its "
        "`Worker exit type: … Worker exit detail: …` pasted alone, read as a worker process that died; an actor whose "
        "constructor raised (`The actor died because of an error raised in its creation task, ray::<Class>.__init__()`"
        ") and a Ray Serve replica that failed to start (`Exception in Replica(…), the replica will be stopped.`, "
        "`ray::ServeReplica:….initialize_and_get_metadata()`): the exception printed with it.",
        why="The traceback around Ray's error runs in the caller, so it holds nothing of the process that died; "
        "each of Ray's reasons puts the cause in another place.",
        example="verl's rollout: `RayActorError: The actor died unexpectedly before finishing this task.` / `Worker "
        "exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of "
        "file.` (RUC-NLPIR/Tool-Star#10).",
        fix="A process killed or crashed: the node's kernel log (OOM killer, segfault, Xid) and the worker's own log "
        "file; an owner that died: its log; a node that left: the node and the cluster's events.",
        limits="Ray's memory monitor's kill is OP-7.30's, which this rule leaves to it; reads the actor's class, pid "
        "and id only where the pasted exception keeps its lines.",
        references=[
            "https://docs.ray.io/en/latest/ray-observability/reference/cli.html",
            "https://docs.ray.io/en/latest/ray-observability/user-guides/configure-logging.html",
        ],
    ),
)

RULES: list[Rule] = [RULE]
