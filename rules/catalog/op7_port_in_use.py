"""OP-7.39: a port the server listens on was already taken (EADDRINUSE).

Why a rule of its own: `OSError: [Errno 98] Address already in use` is among the commonest failed starts and says
nothing about vLLM: another process holds the port. vLLM 0.32 binds its API port before its engine starts
(`create_server_socket` in vllm/entrypoints/launchers/launcher.py), so it fails at once; older releases bound
through uvicorn after the model had loaded (`[Errno 98] error while attempting to bind on address ('0.0.0.0',
8000): address already in use`), minutes later. Docker says the same of the host port it publishes the container
on (`Bind for 0.0.0.0:8000 failed: port is already allocated`), before vLLM runs at all. The holder is most often
a vLLM left from an earlier start (its engine and worker processes outlive a killed API server) or a second server
given the same --port. torch.distributed's store failing the same way (`name: EADDRINUSE`) is a port vLLM's own
processes meet on (MASTER_PORT, VLLM_PORT), and pyzmq's `ZMQError: Address already in use` one they talk over (the
data-parallel RPC port among them). vLLM's own `Address already in use. Retrying with a new port.` is a warning it
recovers from, not this.
"""

from __future__ import annotations

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_FIND_HOLDER = (
    "Find what holds it: `ss -ltnp 'sport = :{port}'` (or `lsof -i :{port}`) on the host; a vLLM left from an earlier "
    "start shows as python or as VLLM::EngineCore / VLLM::Worker processes: stop them all (`pkill -f 'vllm serve'` "
    "does not match those, vLLM retitles them)."
)


def _check_port_in_use(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.PORT_IN_USE)
    if not events:
        return []
    api = [e for e in events if e.component is None]
    event = next((e for e in api if e.address), None) or (api[0] if api else events[0])
    if event.component == "docker":
        return [_published_port(event)]
    if event.component in _INTERNAL:
        return [_store_port(event)]
    return [_api_port(event, facts)]


def _port_of(event: LogEvent, facts: Facts) -> tuple[str, str]:
    """The port and where it was read: the words, else where vLLM's log says it listens, else vLLM's default."""
    if event.address:
        return event.address.rsplit(":", 1)[-1], ""
    listening = [e.listen_address for e in facts.events_of(LogEventKind.SERVER_LISTENING) if e.listen_address]
    served = c.served_address(listening[-1]) if listening else None
    port = served[1] if served is not None else None
    if port is not None:
        return str(port), " (the error names no port: this is where vLLM's log says it listens)"
    return str(vllm_defaults.API_SERVER_PORT), " (the error names no port: this is vLLM's default)"


def _api_port(event: LogEvent, facts: Facts) -> Finding:
    port, read = _port_of(event, facts)
    named = bool(event.address)
    return RULE_PORT_IN_USE.finding(
        Severity.CRITICAL,
        f"port {port} is already taken on this host: another process listens there{read}",
        summary="The API server could not bind its port, so it stopped; nothing is wrong with the model or the "
        "GPU. Most often a vLLM from an earlier start still runs (its engine and workers outlive a killed API "
        "server), or a second server was given the same --port; on Kubernetes with hostNetwork, two pods on one "
        "node.",
        evidence=[c.log_evidence(event, name="port taken", value=event.address)],
        actions=[
            _FIND_HOLDER.format(port=port),
            f"Or start this server on a free port (--port {int(port) + 1} or any other) and point its clients and "
            "probes there.",
        ],
        confidence=0.9 if named else 0.8,
    )


# The binds of vLLM's own processes, not its API server's: what each is, and the settings that choose its port.
_INTERNAL: dict[str, tuple[str, str, str]] = {
    "torch.distributed": (
        "meet on",
        "torch.distributed: EADDRINUSE",
        "Or unset MASTER_PORT and VLLM_PORT where the server starts (vLLM then picks free ports itself), or give each "
        "server on the host its own.",
    ),
    "zmq": (
        "talk over",
        "a ZMQ socket",
        "vLLM's front end and engine processes talk over ZMQ sockets; with data parallelism the head node's "
        f"--data-parallel-rpc-port ({vllm_defaults.DATA_PARALLEL_RPC_PORT} by default) must be free: give each server "
        "on the host its own, or stop the earlier one.",
    ),
}


def _store_port(event: LogEvent) -> Finding:
    port = event.address.rsplit(":", 1)[-1] if event.address else None
    where = f" {port}" if port else ""
    verb, what, settings = _INTERNAL[event.component or "torch.distributed"]
    return RULE_PORT_IN_USE.finding(
        Severity.CRITICAL,
        f"the port{where} vLLM's processes {verb} is already taken ({what})",
        summary=f"A socket vLLM's own processes {verb} could not bind: the port is held by another process, most "
        "often a vLLM (or a training job) from an earlier start, or a second server given the same ports.",
        evidence=[c.log_evidence(event, name="port taken", value=event.address)],
        actions=[_FIND_HOLDER.format(port=port or "<port>"), settings],
        confidence=0.8,
    )


def _published_port(event: LogEvent) -> Finding:
    port = (event.address or ":?").rsplit(":", 1)[-1]
    return RULE_PORT_IN_USE.finding(
        Severity.CRITICAL,
        f"Docker cannot publish the server on host port {port}: another container or process holds it",
        summary="Docker binds the host's side of `-p HOST:CONTAINER` (compose: `ports:`) before the container starts; "
        f"host port {port} is taken, so the container was created but never started. vLLM never ran. The holder is "
        "most often another container publishing the same port (an earlier vLLM left running, or a second replica "
        "of one compose file), or a server started on the host itself.",
        evidence=[c.log_evidence(event, name="port taken", value=event.address)],
        actions=[
            f"Find the holder: `docker ps --filter publish={port}` for a container (stop or remove it), else "
            f"`ss -ltnp 'sport = :{port}'` on the host.",
            f"Or publish another host port: `-p {int(port) + 1 if port.isdigit() else '<free port>'}:8000` keeps "
            "vLLM's own port inside the container; point the clients there.",
        ],
        confidence=0.9,
    )


RULE_PORT_IN_USE = Rule(
    code="OP-7.39",
    title="a port the server listens on already taken",
    category=Category.STARTUP,
    check=_check_port_in_use,
    needs=("events",),
    page=RulePage(
        checks="`OSError: [Errno 98] Address already in use`, Docker's `Bind for 0.0.0.0:N failed: port is already "
        "allocated`, uvicorn's `[Errno 98] error while attempting to bind on "
        "address ('…', N): address already in use`, torch.distributed's `… name: EADDRINUSE …`; vLLM's own "
        "`Address already in use. Retrying with a new port.` is not one (it recovers); pyzmq's `ZMQError: Address "
        "already in use (addr='tcp://…')`.",
        why="Another process holds the port: a vLLM left from an earlier start, or a second server given the same "
        "port. vLLM 0.32 binds its API port before its engine starts, so the start fails at once.",
        example="`ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in "
        "use` after the model loaded (an older release): a vLLM from the last start still held 8000.",
        fix="Stop what holds the port (`ss -ltnp`, its engine and worker processes too), or another --port; for "
        "torch.distributed's store, unset MASTER_PORT and VLLM_PORT or give each server its own.",
        limits="Without the address in the words, the port is vLLM's log's or its default.",
        references=["https://docs.vllm.ai/en/latest/cli/serve.html"],
    ),
)

RULES: list[Rule] = [RULE_PORT_IN_USE]
