"""OP-7.96: NVIDIA Dynamo's runtime without its control plane (etcd, NATS with JetStream).

Why a rule of its own: Dynamo runs vLLM as workers behind its own frontend and router, and its runtime needs two
services that are not part of the pip package: etcd, where workers register and are discovered (ETCD_ENDPOINTS,
`http://localhost:2379` by default), and NATS with JetStream, which carries requests, events and the disaggregated
prefill queue (NATS_SERVER, `nats://localhost:4222`). Dynamo's README starts both with the compose file in its
repository before any `dynamo` command. Without etcd the runtime stops at once (`Failed to connect to etcd server
with config ClientOptions { etcd_url: ["http://localhost:2379"], … }`, ai-dynamo/dynamo#1188 after a bare
`pip install "ai-dynamo[all]"`); a NATS server without JetStream answers its stream calls with no responder, which
nats-py raises as `nats.js.errors.ServiceUnavailableError` (ai-dynamo/dynamo#429's prefill-queue check). Neither says
anything about vLLM, which never started or is fine.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_WHAT = {
    "etcd": (
        "etcd",
        "where its workers register",
        "Start etcd where ETCD_ENDPOINTS points (default http://localhost:2379), or point ETCD_ENDPOINTS at the "
        "cluster's etcd; `curl <endpoint>/health` answers when it is up.",
    ),
    "jetstream": (
        "NATS JetStream",
        "which carries its queues",
        "Run the NATS server with JetStream enabled (`nats-server -js`, the compose file's setting); a NATS without "
        "it answers every stream call with no responder.",
    ),
    "nats": (
        "NATS",
        "which carries its requests",
        "Start NATS with JetStream where NATS_SERVER points (default nats://localhost:4222), or point NATS_SERVER at "
        "the cluster's.",
    ),
}


def _check_dynamo(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.DYNAMO_CONTROL_PLANE)
    if not events:
        return []
    event = events[0]
    service, role, fix = _WHAT.get(event.component or "", _WHAT["etcd"])
    where = f" at {event.address}" if event.address else ""
    return [
        RULE_DYNAMO.finding(
            Severity.CRITICAL,
            f"NVIDIA Dynamo's runtime cannot reach {service}{where} ({role}): its control plane is not running, and "
            "vLLM is not the cause",
            summary="Dynamo's runtime needs etcd (worker discovery) and NATS with JetStream (requests, events, the "
            "prefill queue) beside its workers; the pip package brings neither, and without them the frontend and "
            "workers stop or fail every request before vLLM is involved.",
            evidence=[c.log_evidence(event, name="Dynamo's control plane", value=event.address or event.component)],
            actions=[
                fix,
                "On one machine, Dynamo's repository starts both: `docker compose -f deploy/docker-compose.yml up -d` "
                "(etcd, and NATS with JetStream), before `dynamo run` or the workers; in Kubernetes its platform "
                "chart deploys them.",
            ],
            confidence=0.8,
        )
    ]


RULE_DYNAMO = Rule(
    code="OP-7.96",
    title="NVIDIA Dynamo's runtime without its control plane (etcd, NATS JetStream)",
    category=Category.STARTUP,
    check=_check_dynamo,
    needs=("events",),
    page=RulePage(
        checks="dynamo_runtime's `Failed to connect to etcd server with config ClientOptions { etcd_url: […] … }`, "
        "nats-py's `nats.js.errors.ServiceUnavailableError`, NATS' `nats: no servers available for connection`.",
        why="Dynamo's runtime needs etcd and NATS with JetStream running beside it; the pip package has neither.",
        example='`dynamo run out=vllm …` right after `pip install "ai-dynamo[all]"`: the etcd line, then '
        "`Connection refused` (ai-dynamo/dynamo#1188).",
        fix="Start etcd and NATS with JetStream (Dynamo's deploy/docker-compose.yml), or set ETCD_ENDPOINTS and "
        "NATS_SERVER to the cluster's.",
        limits="Reads Dynamo's and nats-py's words; another program's etcd client words its failure otherwise.",
        references=[
            "https://github.com/ai-dynamo/dynamo/issues/1188",
            "https://github.com/ai-dynamo/dynamo/issues/429",
        ],
    ),
)

RULES: list[Rule] = [RULE_DYNAMO]
