"""OP-7.164: a Ray process could not reach the cluster's GCS (the head node's control store).

Why a rule of its own: vLLM's multi-node launch (`ray start --head` on one node, `ray start --address=<head>:6379` on
each other, then `vllm serve … --distributed-executor-backend ray`) depends on every node reaching the head's Global
Control Service. A worker given an address where no GCS answers stops at Ray's own C++ log line `Failed to connect to
GCS at address 10.108.0.184:6379 within 5 seconds.` (Ray's gcs_rpc_client.h), which reads like a
network fault although the usual cause is the address itself. On vllm#19543 a worker container ran `ray start --block
--address=127.0.0.1:6379`; a maintainer answered that the command "connects to the head node, which should not be
127.0.0.1": the head's own address must be given, and port 6379 must be open between the nodes.
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

RULES: list[Rule] = [RULE_RAY_GCS]
