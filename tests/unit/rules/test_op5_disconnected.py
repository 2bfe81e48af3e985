"""OP-5.37: a connection the server closed without answering, in each client's words; the server's own end beside
it makes the client's error its consequence."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog.op5_disconnected import RULE
from rules.evaluate import evaluate
from rules.events import CUT_MID_ANSWER
from rules.events import LogEventKind as K
from rules.facts import Facts


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


@pytest.mark.parametrize(
    ("line", "client"),
    [
        (
            "requests.exceptions.ConnectionError: ('Connection aborted.', RemoteDisconnected('Remote end closed "
            "connection without response'))",
            "requests (http.client)",
        ),
        ("httpx.RemoteProtocolError: Server disconnected without sending a response.", "httpx"),
        ("aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected", "aiohttp"),
    ],
)
def test_a_pooled_clients_empty_reply_names_vllms_keep_alive_race(line, client):
    [finding] = _findings(line)
    assert finding.title.startswith(f"the server closed {client}'s connection without answering")
    assert finding.title.endswith("the client reused a connection vLLM had closed after 5 s idle")
    assert "Limits(keepalive_expiry=4)" in finding.actions[1] and "VLLM_HTTP_TIMEOUT_KEEP_ALIVE" in finding.actions[1]


def test_curl_reuses_nothing_so_the_server_or_a_forwarder_went_away():
    [finding] = _findings("curl: (52) Empty reply from server")
    assert finding.title.endswith("it restarted or died at that moment, or what forwards to it did")
    assert "kubectl port-forward" in finding.actions[1]


def test_the_servers_death_beside_it_is_the_cause_and_the_sdks_wrapper_is_not_a_connection_never_made():
    death = "ERROR 11-30 10:00:00 [core.py:900] EngineCore encountered a fatal error."
    [finding] = _findings("httpx.RemoteProtocolError: Server disconnected without sending a response.", death)
    assert finding.title.endswith("it went away while the request ran") and finding.confidence == 0.5
    chained = [
        "httpx.RemoteProtocolError: Server disconnected without sending a response.",
        "The above exception was the direct cause of the following exception:",
        "openai.APIConnectionError: Connection error.",
    ]
    assert [f.rule for f in evaluate(Facts(events=parse_lines(chained).events)).findings] == ["OP-5.37"]


@pytest.mark.parametrize(
    ("line", "client"),
    [
        (
            "httpx.RemoteProtocolError: peer closed connection without sending complete message body (incomplete "
            "chunked read)",
            "httpx",
        ),
        ("aiohttp.client_exceptions.ClientPayloadError: Response payload is not completed", "aiohttp"),
        (
            "requests.exceptions.ChunkedEncodingError: (\"Connection broken: InvalidChunkLength(got length b'', 0 "
            "bytes read)\", InvalidChunkLength(got length b'', 0 bytes read))",
            "requests (urllib3)",
        ),
    ],
)
def test_an_answer_cut_mid_stream_is_no_keep_alive_race_and_names_the_proxys_read_timeout(line, client):
    [finding] = RULE.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith(f"the server's answer to {client} was cut off before its end")
    assert "keep-alive" not in finding.summary
    assert "proxy_read_timeout, 60 s by default" in finding.actions[1]


def test_httpxs_words_without_the_read_they_were_in_name_a_gateways_request_timeout_too():
    # modelplaneai/modelplane PR #174, verbatim: an Envoy-based gateway's 15 s default request timeout cut the streams
    line = "RemoteProtocolError: peer closed connection without sending complete message body"
    [finding] = RULE.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith("the server's answer to httpx was cut off before its end")
    assert "timeouts: {request: 0s}" in finding.actions[2]


def test_curls_reset_and_cut_transfer_read_as_the_other_clients_words_do():
    [reset] = parse_lines(["curl: (56) Recv failure: Connection reset by peer"]).events
    assert (reset.kind, reset.component, reset.connect_result) == (K.SERVER_DISCONNECTED, "curl", None)
    [cut] = parse_lines(["curl: (18) transfer closed with outstanding read data remaining"]).events
    assert (cut.kind, cut.component, cut.connect_result) == (K.SERVER_DISCONNECTED, "curl", CUT_MID_ANSWER)
