"""OP-7.164: a Ray process could not reach the cluster's GCS (the head node's control store).
OP-7.178: a Ray node's own processes did not register with the GCS in time.

Why a rule of its own: vLLM's multi-node launch (`ray start --head` on one node, `ray start --address=<head>:6379` on
each other, then `vllm serve … --distributed-executor-backend ray`) depends on every node reaching the head's Global
Control Service. A worker given an address where no GCS answers stops at Ray's own C++ log line `Failed to connect to
GCS at address 10.108.0.184:6379 within 5 seconds.` (Ray's gcs_rpc_client.h), which reads like a
network fault although the usual cause is the address itself. On vllm#19543 a worker container ran `ray start --block
--address=127.0.0.1:6379`; a maintainer answered that the command "connects to the head node, which should not be
127.0.0.1": the head's own address must be given, and port 6379 must be open between the nodes.

OP-7.178: the node's own Ray processes did not come up in time: `Exception: The current node timed out during
startup. This could happen because some of the Ray processes failed to startup` (Ray's _private/node.py; newer Ray
says "some of the raylet failed to startup or the GCS has become overloaded"). Ray waits for its raylet to register
with the GCS, and a raylet that bound an address the head cannot route to never does: aws-samples/aws-do-eks PR #49,
a LeaderWorkerSet of vLLM with Ray under hostNetwork, where `hostname -i` returned nothing and the worker's raylet
bound a secondary interface; resolving the worker's IP with `ip route get <head IP>` and passing it fixed it. Other
causes (a raylet that crashed, ray-project/ray#62883 after a macOS update) are in the raylet's own log.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

GCS_UNREACHABLE = re.compile(
    r"Failed to connect to GCS at address (?P<address>\S+?):(?P<port>\d+) within (?P<seconds>\d+) seconds"
)


def _gcs_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    address, port = match["address"], match["port"]
    local = address.startswith("127.") or address == "localhost"
    return RULE_RAY_GCS.finding(
        Severity.CRITICAL,
        f"this Ray node could not reach the cluster's GCS at {address}:{port}"
        + (": a loopback address, which on a worker node is not the head" if local else "")
        + " (the address given to `ray start --address`, the head not running, or the port closed between nodes)",
        summary="Every Ray node joins the cluster through the head node's Global Control Service; this one got no "
        f"answer at {address}:{port} within {match['seconds']} s, so it never joined and vLLM's workers cannot be "
        "placed on it.",
        evidence=[c.log_evidence(event, name="GCS address dialled", value=f"{address}:{port}")],
        actions=[
            "Start each worker node with the head node's own address: `ray start --address=<head node IP>:6379` "
            "(`ray start --head` prints it; in containers, the head container's address on the nodes' network, "
            "not 127.0.0.1 or a container-local name).",
            f"Check from the worker that the head answers: `nc -zv {address} {port}` (or `ray status "
            f"--address={address}:{port}`); open the GCS port, and Ray's node-manager and object-manager ports, "
            "between the nodes, or run the containers with `--network host` as vLLM's multi-node example does.",
            "If the head itself is down (`ray status` on the head fails), restart it first: its log "
            "(/tmp/ray/session_latest/logs/gcs_server.out) says why it stopped.",
        ],
        confidence=0.75 if local else 0.65,
    )


RULE_RAY_GCS = Rule(
    code="OP-7.164",
    title="a Ray node could not reach the cluster's GCS",
    category=Category.STARTUP,
    check=c.on_phrase(GCS_UNREACHABLE, _gcs_finding),
    needs=("events",),
    page=RulePage(
        checks="Ray's core log `Failed to connect to GCS at address <host>:<port> within N seconds.` (from "
        "gcs_rpc_client.h, under its `[date time,ms E pid tid]` header).",
        why="A node that never joins the Ray cluster holds none of vLLM's workers: a multi-node launch waits or fails.",
        example="`[2025-06-13 01:49:41,730 E 1 1] gcs_rpc_client.h:179: Failed to connect to GCS at address "
        "10.108.0.184:6379 within 5 seconds.` after `ray start --address=127.0.0.1:6379` on a worker (vllm#19543).",
        fix="`ray start --address=<head node IP>:6379` on each worker, with the port open between the nodes.",
        limits="The words do not tell a wrong address from a head that is down or a closed port: the checks do.",
        references=["https://github.com/vllm-project/vllm/issues/19543"],
    ),
)

# Ray's words when its raylet did not register in time (_private/node.py; the wording varies between releases)
NODE_STARTUP_TIMEOUT = re.compile(
    r"The current node (?:timed out during startup|has not been updated within \d+ seconds)"
)


def _node_startup_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_RAY_NODE_STARTUP.finding(
        Severity.CRITICAL,
        "this node's Ray processes did not start in time: its raylet never registered with the cluster's GCS (on a "
        "host with several interfaces, possibly because it bound one the head cannot reach)",
        summary="`ray start` (or `ray.init()`) waits for the node's raylet to come up and register with the GCS; "
        "this one did not within Ray's timeout, so the node never joined and vLLM's workers cannot be placed on it. "
        "On a machine with several network interfaces (hostNetwork pods, a cluster NIC beside the default one) the "
        "raylet can bind an interface the head does not route to.",
        evidence=[c.log_evidence(event, name="Ray's startup timeout", value=match.group(0))],
        actions=[
            "Give the node the address the head reaches it at: `ray start --address=<head IP>:6379 "
            "--node-ip-address=$(ip route get <head IP> | awk '{print $5; exit}')` (aws-samples/aws-do-eks PR #49: "
            "under hostNetwork `hostname -i` was empty and the raylet bound a secondary interface); set VLLM_HOST_IP "
            "to the same address for vLLM's own processes.",
            "Read why the raylet did not come up: /tmp/ray/session_latest/logs/raylet.out and raylet.err on this "
            "node (a crash, ports already taken, a full /tmp or /dev/shm).",
            "Check that the head's GCS port (6379) and Ray's node-manager and object-manager ports are open between "
            "the nodes.",
        ],
        confidence=0.65,
    )


RULE_RAY_NODE_STARTUP = Rule(
    code="OP-7.178",
    title="a Ray node's raylet did not register with the cluster in time",
    category=Category.STARTUP,
    check=c.on_phrase(NODE_STARTUP_TIMEOUT, _node_startup_finding),
    needs=("events",),
    page=RulePage(
        checks="Ray's `Exception: The current node timed out during startup. …` (and its older `The current node has "
        "not been updated within N seconds`).",
        why="A node that never joins the Ray cluster holds none of vLLM's workers: a multi-node launch waits or fails.",
        example="`Exception: The current node timed out during startup ... raylet failed to startup` on a vLLM Ray "
        "worker in a LeaderWorkerSet with hostNetwork (aws-samples/aws-do-eks PR #49: the raylet bound a secondary "
        "interface; `--node-ip-address` from `ip route get <head IP>` fixed it).",
        fix="`ray start --node-ip-address=<the address the head routes to>`, VLLM_HOST_IP the same; the raylet's log "
        "for other causes.",
        limits="The words do not say why the raylet failed; an address the head cannot reach is the cause the "
        "example confirmed, not the only one.",
        references=[
            "https://github.com/aws-samples/aws-do-eks/pull/49",
            "https://github.com/ray-project/ray/issues/62883",
        ],
    ),
)

RULES: list[Rule] = [RULE_RAY_GCS, RULE_RAY_NODE_STARTUP]
