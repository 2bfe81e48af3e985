"""OP-5.34: a client's connection that never reached a server, in the words of the tools and libraries that report
it, against where vLLM's own log says it listens."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog.op5_unreachable import RULE_UNREACHABLE
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

LISTENING = "(APIServer pid=1) INFO 12-01 10:00:00 [api_server.py:1] Starting vLLM API server on http://{}"


def _events(*lines: str):
    return parse_lines(list(lines)).events


def _finding(*lines: str):
    [finding] = RULE_UNREACHABLE.evaluate(Facts(events=_events(*lines)))
    return finding


@pytest.mark.parametrize(
    ("line", "component", "address", "path", "met"),
    [
        ("curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused", "curl",
         "localhost:8000", None, "refused"),
        ("curl: (6) Could not resolve host: vllm-service", "curl", "vllm-service", None, "unresolved"),
        ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8000): Max retries exceeded "
         "with url: /v1/chat/completions (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at "
         "0x7f>: Failed to establish a new connection: [Errno 111] Connection refused'))", "urllib3",
         "localhost:8000", "/v1/chat/completions", "refused"),
        ("aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host localhost:8000 ssl:default "
         "[Connect call failed ('127.0.0.1', 8000)]", "aiohttp", "localhost:8000", None, "refused"),
        ("Error: connect ECONNREFUSED 127.0.0.1:8000", "Node.js", "127.0.0.1:8000", None, "refused"),
        ('Get "http://vllm.default.svc:8000/metrics": dial tcp 10.96.0.12:8000: i/o timeout', "Go",
         "10.96.0.12:8000", "/metrics", "timeout"),
        ('Get "http://vllm-svc:8000/v1/models": dial tcp: lookup vllm-svc on 10.96.0.10:53: no such host', "Go",
         "vllm-svc:8000", "/v1/models", "unresolved"),
        ('ts=2026-12-01T10:00:00Z level=warn msg="scrape failed" err="Get \\"http://vllm:8000/metrics\\": dial tcp: '
         'lookup vllm on 127.0.0.11:53: no such host"', "Go", "vllm:8000", "/metrics", "unresolved"),
        ("🖐 error sending request for url (http://localhost:11434/v1/chat/completions)", "reqwest",
         "localhost:11434", "/v1/chat/completions", None),
    ],
)  # fmt: skip
def test_each_clients_words_name_where_it_went_and_what_it_met(line, component, address, path, met):
    [event] = _events(line)
    assert event.kind == K.SERVER_UNREACHABLE
    assert (event.component, event.address, event.url_path, event.connect_result) == (component, address, path, met)


def test_a_connection_vllm_itself_makes_and_a_kubelet_probe_stay_theirs():
    hub = (
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
        "exceeded with url: /api/models/meta-llama/Llama-3.1-8B (Caused by NewConnectionError('<x>: Failed to "
        "establish a new connection: [Errno 101] Network is unreachable'))"
    )
    media = (
        "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host upload.wikimedia.org:443 ssl:default"
    )
    probe = (
        'Readiness probe failed: Get "http://10.1.2.3:8000/health": dial tcp 10.1.2.3:8000: connect: connection refused'
    )
    assert [e.kind for e in _events(hub)] == [K.UNPLACED_ERROR]  # VC-2 names it, as before
    assert K.SERVER_UNREACHABLE not in [e.kind for e in _events(media + " [Connect call failed]")]
    assert [e.kind for e in _events(probe)] == [K.HEALTH_CHECK_FAILED]
    # a name Go could not resolve, with no server's port or route: some other host, not the user's server
    assert K.SERVER_UNREACHABLE not in [e.kind for e in _events("dial tcp: lookup github.com: no such host")]


def test_ollamas_default_port_is_a_client_whose_provider_ignored_the_base_url():
    """openai/codex#2257: the Codex CLI's `oss` provider reads CODEX_OSS_BASE_URL, not config.toml's base_url."""
    finding = _finding("🖐 error sending request for url (http://localhost:11434/v1/chat/completions)")
    assert finding.title.startswith("the client calls localhost:11434, Ollama's default address, not the vLLM server")
    assert "CODEX_OSS_BASE_URL=http://<vLLM host>:<port>/v1" in finding.actions[0]
    assert finding.changes == []  # the client's setting, not the server's: nothing for `vllm serve`


def test_a_port_other_than_the_one_vllm_listens_on_is_named_with_both():
    finding = _finding(
        LISTENING.format("0.0.0.0:8001"),
        "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused",
    )
    assert finding.title == "the client calls port 8000, the server listens on 8001"
    assert [e.location for e in finding.evidence] == ["log:2", "log:1"]


def test_a_server_bound_to_loopback_called_from_elsewhere_is_told_to_listen_on_every_interface():
    finding = _finding(
        LISTENING.format("127.0.0.1:8000"),
        "Error: connect ECONNREFUSED 10.0.0.5:8000",
    )
    assert finding.title.startswith("the server listens on http://127.0.0.1:8000 only")
    assert "--host 0.0.0.0" in finding.actions[0]


def test_refused_on_the_servers_own_port_is_a_server_not_up_there():
    finding = _finding("curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused")
    assert finding.title.endswith("never reached a server: nothing accepted the connection")
    assert "Application startup complete" in finding.actions[0]
    assert any("-p 8000:8000" in action for action in finding.actions)


def test_an_unresolved_name_is_not_told_to_publish_ports():
    finding = _finding("curl: (6) Could not resolve host: vllm-service")
    assert finding.title.endswith("the host name did not resolve")
    assert not any("-p 8000:8000" in action for action in finding.actions)


def test_nothing_without_a_failed_connection():
    assert RULE_UNREACHABLE.evaluate(Facts(events=_events(LISTENING.format("0.0.0.0:8000")))) == []


def test_a_real_vllm_log_beside_the_clients_error_names_the_port_it_printed():
    """vLLM 0.32's own `Starting vLLM server on http://127.0.0.1:52613` (tests/fixtures/vllm_cpu/idle.log), and
    uvicorn's `Application startup complete`, which names no address, after it."""
    recorded = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu" / "idle.log"
    curl = "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused"
    finding = _finding(curl, *recorded.read_text().splitlines())
    assert finding.title == "the client calls port 8000, the server listens on 52613"


SDK_CHAIN = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.11/site-packages/httpx/_transports/default.py", line 249, in handle_request',
    "    with map_httpcore_exceptions():",
    "httpx.ConnectError: [Errno 111] Connection refused",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/app/client.py", line 12, in <module>',
    '    resp = client.chat.completions.create(model="m", messages=msgs)',
    "openai.APIConnectionError: Connection error.",
]


def test_the_openai_sdks_connection_error_names_the_base_url_to_check_and_what_httpx_says_it_met():
    """The SDK's words name no address; its transport's chained cause says what the connection met."""
    finding = _finding(*SDK_CHAIN)
    assert finding.title == (
        "the client's connection never reached a server: nothing accepted the connection (its words name no address)"
    )
    assert "base_url (OpenAI(base_url=…), or OPENAI_BASE_URL)" in finding.actions[0]
    assert "/v1" in finding.actions[0] and "curl <base_url>/models" in finding.actions[0]
    assert "Application startup complete" in finding.actions[1]
    assert [e.location for e in finding.evidence] == ["log:11"]  # the SDK's line, not its transport's


def test_the_sdks_error_alone_says_only_what_to_check_and_beside_vllms_log_where_it_listens():
    alone = _finding("openai.APIConnectionError: Connection error.")
    assert alone.title.endswith("the connection failed (its words name no address)")
    beside = _finding(LISTENING.format("0.0.0.0:8001"), "openai.APIConnectionError: Connection error.")
    assert any("listens on http://0.0.0.0:8001: the client must call that address" in a for a in beside.actions)


def test_frameworks_rewording_of_the_sdks_error_is_the_same_failed_connection():
    # BerriAI/litellm#7291 and FoundationAgents/OpenManus#770, verbatim: the SDK's message under another class
    for line in (
        "litellm.llms.openai.common_utils.OpenAIError: Connection error.",
        "2025-03-17 17:21:07.953 | ERROR    | app.llm:ask_tool:426 - OpenAI API error: Connection error.",
    ):
        assert _finding(line).title.endswith("the connection failed (its words name no address)"), line


def test_httpx_alone_names_no_caller_so_the_frames_are_pointed_at():
    """vLLM's own Mooncake connector calls its bootstrap server with httpx (vllm 0.32
    distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py): httpx's words alone name no caller."""
    finding = _finding("httpx.ConnectError: [Errno 111] Connection refused")
    assert finding.actions[0].startswith("The frames above the error name the caller")
    assert finding.confidence < _finding("openai.APIConnectionError: Connection error.").confidence


def test_litellms_connection_error_reads_as_the_sdks_does():
    for line in (
        "litellm.APIConnectionError: OpenAIException - Connection error.",
        "litellm.InternalServerError: InternalServerError: Hosted_vllmException - Connection error.",
    ):
        [event] = parse_lines([line]).events
        assert (event.kind, event.component, event.address) == (K.SERVER_UNREACHABLE, "LiteLLM", None), line


def test_urllib3s_own_connection_error_without_the_pools_address_is_the_same_unreachable_server():
    # opea-project/GenAIExamples#1739, verbatim: the ChatQnA backend calling vllm-service, nothing listening
    top = top_finding(
        "urllib3.exceptions.NewConnectionError: <urllib3.connection.HTTPConnection object at 0x7f13a65309d0>: "
        "Failed to establish a new connection: [Errno 111] Connection refused"
    )
    assert top.rule == "OP-5.34" and top.summary.startswith("urllib3 (requests) could not connect")
