"""OP-7.96: NVIDIA Dynamo's runtime without etcd or NATS JetStream (ai-dynamo/dynamo#1188's and #429's lines,
verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_dynamo
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_no_etcd_names_its_endpoint_and_the_compose_file():
    line = (
        "ERROR dynamo_runtime::worker: Application shutdown with error: Failed to connect to etcd server with config "
        'ClientOptions { etcd_url: ["http://localhost:2379"], etcd_connect_options: None, attach_lease: true }'
    )
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.96"
    assert top.title.startswith("NVIDIA Dynamo's runtime cannot reach etcd at http://localhost:2379")
    assert "ETCD_ENDPOINTS" in top.actions[0] and "deploy/docker-compose.yml" in top.actions[1]


def test_jetstream_without_a_responder_asks_for_nats_with_jetstream():
    line = (
        "nats.js.errors.ServiceUnavailableError: nats: ServiceUnavailableError: code=None err_code=None "
        "description='None'"
    )
    [finding] = op7_dynamo.RULE_DYNAMO.evaluate(_facts(line))
    assert "NATS JetStream" in finding.title and "`nats-server -js`" in finding.actions[0]


def test_another_service_unavailable_error_is_not_natss():
    facts = _facts("google.api_core.exceptions.ServiceUnavailableError: 503 The service is currently unavailable.")
    assert op7_dynamo.RULE_DYNAMO.evaluate(facts) == []
