"""OP-7.39: a port the server listens on already taken, in the API server's, uvicorn's and torch.distributed's
words; vLLM's own retried internal port is not one."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_port_in_use import RULE_PORT_IN_USE
from rules.events import LogEventKind as K
from rules.facts import Facts

UVICORN = "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8001): address already in use"
BIND = "OSError: [Errno 98] Address already in use"
STORE = (
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: "
    "29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
)
LISTENING = "(APIServer pid=1) INFO 12-01 10:00:00 [api_server.py:1] Starting vLLM API server on http://0.0.0.0:9000"


def _findings(*lines: str):
    return RULE_PORT_IN_USE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_uvicorns_words_name_the_port_and_what_to_do():
    [finding] = _findings(UVICORN)
    assert finding.title == "port 8001 is already taken on this host: another process listens there"
    assert "ss -ltnp 'sport = :8001'" in finding.actions[0] and "--port 8002" in finding.actions[1]


def test_a_bind_error_naming_no_port_takes_the_one_vllms_log_names_else_the_default():
    named_by_log = "(the error names no port: this is where vLLM's log says it listens)"
    assert _findings(LISTENING, BIND)[0].title.endswith(named_by_log)
    assert "port 9000" in _findings(LISTENING, BIND)[0].title
    assert _findings(BIND)[0].title.startswith("port 8000 is already taken")


def test_uvicorns_words_cut_before_the_address_are_still_a_port_taken():
    # vllm#7514, verbatim: a server restarted in a loop binds before the last one has let go of the port
    line = (
        "It throws this error ```ERROR: [Errno 98] error while attempting to bind on address``` several times, till "
        "it's gone and vlllm starts properly:"
    )
    [finding] = _findings(line)
    assert finding.title.startswith("port 8000 is already taken") and "earlier start" in finding.summary
    assert _findings("[Errno 98] error while attempting to bind on address ('::', 8001): address already in use")


def test_torch_distributeds_store_port_is_the_processes_meeting_port():
    [finding] = _findings(STORE)
    assert finding.title.startswith("the port 29500 vLLM's processes meet on is already taken")
    assert "MASTER_PORT and VLLM_PORT" in finding.actions[1]


def test_a_zmq_socket_of_vllms_processes_names_its_port_and_the_data_parallel_rpc_port():
    [finding] = _findings("zmq.error.ZMQError: Address already in use (addr='tcp://10.0.0.5:29550')")
    assert finding.title == "the port 29550 vLLM's processes talk over is already taken (a ZMQ socket)"
    assert "ss -ltnp 'sport = :29550'" in finding.actions[0]
    assert "--data-parallel-rpc-port (29550 by default)" in finding.actions[1]
    assert _findings("zmq.error.ZMQError: Address already in use")[0].title.startswith("the port vLLM's processes")


def test_vllms_own_retried_port_is_not_a_port_in_use():
    retried = (
        "(EngineCore pid=1) WARNING 12-01 10:00:00 [parallel.py:746] Address already in use. Retrying with a new port."
    )
    assert K.PORT_IN_USE not in [e.kind for e in parse_lines([retried]).events]
    assert _findings(retried) == []


def test_dockers_published_port_is_the_hosts_side_of_dash_p_and_names_the_container_to_find():
    """Docker (and compose, `Cannot start service …`) refuses to publish a host port another holder has: the
    container never started, and moving the host's side of `-p` leaves vLLM's own port alone."""
    for line in (
        "docker: Error response from daemon: driver failed programming external connectivity on endpoint vllm "
        "(1a2b3c): Bind for 0.0.0.0:8000 failed: port is already allocated.",
        "ERROR: for vllm  Cannot start service vllm: driver failed programming external connectivity on endpoint "
        "vllm-vllm-1 (d2c5): Bind for 0.0.0.0:8000 failed: port is already allocated",
    ):
        [finding] = _findings(line)
        assert finding.title == (
            "Docker cannot publish the server on host port 8000: another container or process holds it"
        )
        assert "docker ps --filter publish=8000" in finding.actions[0] and "-p 8001:8000" in finding.actions[1]


def test_torch_before_2_4_words_its_store_failure_per_address():
    # PyTorch's distributed docs quote this for a MASTER_PORT already taken; one address's warning alone is no failure
    old_store = (
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
        "failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to "
        "0.0.0.0:29500 (errno: 98 - Address already in use)."
    )
    [finding] = _findings(old_store)
    assert finding.rule == "OP-7.39" and "the port 29500 vLLM's processes meet on" in finding.title
    warning = (
        "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in "
        "use)."
    )
    assert [f.rule for f in _findings(warning) if f.rule == "OP-7.39"] == []


def test_a_connectors_zmq_bind_in_a_fully_dated_header_is_a_port_in_use():
    # vllm-project/vllm-ascend#8938, verbatim (its `^M` a carriage return as the terminal showed it): the logger dates
    # the line in full, and the connector logs pyzmq's words without the exception's class
    line = (
        "(Worker_DP1_TP14_EP30 pid=2493) ERROR 2026-04-25 10:01:17.340 [mooncake_connector.py:246] Mooncake "
        "KVCacheSendingThread exception: Address already in use (addr='tcp://10.235.53.16:20012')^M"
    )
    [event] = parse_lines([line]).events
    assert event.kind == K.PORT_IN_USE and event.level == "ERROR"
    assert (event.component, event.address) == ("zmq", "10.235.53.16:20012")
    [finding] = RULE_PORT_IN_USE.check(Facts(events=[event]))
    assert "20012" in finding.title
