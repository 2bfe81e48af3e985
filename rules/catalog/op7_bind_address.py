"""OP-7.72: a vLLM process tried to listen on an IP address the machine it runs on does not have.

Why a rule of its own: `Cannot assign requested address` is the kernel's EADDRNOTAVAIL (errno 99) for a bind to an
address none of this host's (or container's) interfaces holds. vLLM's processes listen on addresses they are given
or derive: the API server and engine sockets of multi-node data parallelism (ZMQ, `make_zmq_socket` in
vllm/utils/network_utils.py, 0.32), NIXL's handshake side channel (VLLM_NIXL_SIDE_CHANNEL_HOST), the HTTP server's
--host. The address is then another machine's: the head node's given to a process on another node (multi-node
data parallelism bound each DP group leader's message queue to the head's address until vLLM PR #35429, merged
2026-02-26; ai-dynamo/dynamo#2706's side-channel host computed on the first node and used on the second), or the
host's IP inside a container that has its own network namespace. Unlike a refused connection (OP-7.25), nothing
was tried on the network: the listening side itself cannot start.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_bind_address(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.BIND_ADDRESS_NOT_LOCAL)
    if event is None:
        return []
    socket = "a ZMQ socket (vLLM's inter-process messaging)" if event.component == "zmq" else "a socket"
    if event.address and event.address.count(":") > 1 and not event.address.startswith("["):
        return [_unbracketed_ipv6(event, event.address)]
    if event.address and event.address.startswith("[") and event.component != "zmq":
        return [_no_ipv6(event, event.address)]
    return [_not_local(event, event.address, socket)]


def _no_ipv6(event: LogEvent, endpoint: str) -> Finding:
    """The HTTP server's bind to an IPv6 address on a machine or container without IPv6: `localhost` resolved to
    `::1` first (vllm PR #1288's report; instructlab#667 and litellm#5014 the same words from other uvicorn servers,
    each fixed with 127.0.0.1)."""
    host = c.split_address(endpoint)[0]
    loopback = host == "::1"
    said = (
        "the IPv6 loopback ::1 (`localhost` resolves to it first on many systems)"
        if loopback
        else f"the IPv6 address {host}"
    )
    return RULE_BIND_ADDRESS.finding(
        Severity.CRITICAL,
        f"the API server tried to listen on {said}, and this machine (or container) has no IPv6 there",
        summary="uvicorn binds the address --host resolves to; where IPv6 is switched off (many containers, "
        "Docker's default network), no interface holds an IPv6 address and the bind fails (EADDRNOTAVAIL) before "
        "the server starts. An IPv4 address binds.",
        evidence=[c.log_evidence(event, name="address", value=endpoint)],
        actions=[
            "--host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every IPv4 interface, what a client outside "
            "a container needs)" + (" instead of localhost" if loopback else f" instead of {host}") + ".",
            "Or give the container IPv6 if its clients need it (Docker: a network created with --ipv6).",
        ],
        confidence=0.85,
    )


def _unbracketed_ipv6(event: LogEvent, endpoint: str) -> Finding:
    """An IPv6 address joined to its port without brackets: ZMQ cannot tell the port from the address and reads the
    rest as an interface name (vllm#42149; vLLM PR #42277 proposes bracketing IPv6 hosts and turning on ZMQ's
    IPv6)."""
    host = endpoint.rsplit(":", 1)[0]
    return RULE_BIND_ADDRESS.finding(
        Severity.CRITICAL,
        f"a vLLM process gave ZMQ an IPv6 address without brackets ({endpoint}): ZMQ cannot read it",
        summary="ZMQ's tcp:// endpoints put an IPv6 address in brackets (`tcp://[2001:db8::1]:5555`); written bare, "
        "the colons of the address run into the port's and ZMQ takes the text for an interface name, so the bind "
        "fails (`No such device`). vLLM built the endpoint from the host's address, an IPv6 one on this host; the "
        "P2P NCCL KV connector does so (vllm#42149); vLLM PR #42277 proposes bracketing IPv6 hosts and enabling IPv6 "
        "on its sockets.",
        evidence=[c.log_evidence(event, name="address", value=endpoint)],
        actions=[
            f"Give vLLM an IPv4 address (or a hostname that resolves to one) where it takes the host: VLLM_HOST_IP, "
            f"the KV connector's own IP setting, instead of {host}.",
            "Or run a vLLM whose release carries PR #42277's change (IPv6 hosts bracketed in ZMQ endpoints); the "
            "thread does not say which release has it.",
        ],
        confidence=0.8,
    )


def _not_local(event: LogEvent, endpoint: str | None, socket: str) -> Finding:
    host = c.split_address(endpoint)[0] if endpoint else None
    where = f"on {endpoint}, an address" if endpoint else "on an address"
    return RULE_BIND_ADDRESS.finding(
        Severity.CRITICAL,
        f"a vLLM process tried to listen {where} this machine (or container) does not have",
        summary=f"The kernel refused to bind {socket} to {host or 'its address'}: no interface where the process "
        "runs holds that IP (EADDRNOTAVAIL). The address belongs to another machine: the head node's address given "
        "to a process on another node, or the host's IP inside a container with its own network.",
        evidence=[c.log_evidence(event, name="address", value=endpoint)],
        actions=[
            f"Run `hostname -I` (or `ip addr`) where the failing process runs: {host or 'the address'} must be in the "
            "list. In a "
            "container without the host's network it is not: run it with `--network host` (Kubernetes: "
            "`hostNetwork: true`) or give vLLM the container's own address.",
            "Across nodes, each node listens on its own address: VLLM_HOST_IP set to that node's IP on every node, "
            "--data-parallel-address the head node's (only the head listens on it), VLLM_NIXL_SIDE_CHANNEL_HOST "
            "each node's own for NIXL (ai-dynamo/dynamo#2706).",
            "Multi-node data parallelism with a DP group whose leader is not on the head node: vLLM bound that "
            "leader's message queue to the head's address until PR #35429 (merged 2026-02-26); a release after it "
            "binds the node's own.",
        ],
        confidence=0.75,
    )


RULE_BIND_ADDRESS = Rule(
    code="OP-7.72",
    title="a vLLM process listened on an address its machine does not have",
    category=Category.STARTUP,
    check=_check_bind_address,
    needs=("events",),
    page=RulePage(
        checks="ZMQ's `ZMQError: Cannot assign requested address (addr='tcp://<ip>:<port>')` and uvicorn's `[Errno "
        "99] error while attempting to bind on address ('<ip>', <port>): cannot assign requested address` (--host; "
        "an IPv6 one, `('::1', 8000, 0, 0)`, is a host without IPv6); ZMQ's `No such device (addr='tcp://<IPv6 "
        "without brackets>:<port>')`.",
        why="EADDRNOTAVAIL: a bind to an IP none of the process's interfaces holds, another node's address or the "
        "host's inside a container with its own network.",
        example="`(APIServer pid=396) zmq.error.ZMQError: Cannot assign requested address "
        "(addr='tcp://10.27.91.102:13345')` in two-node data parallelism (vllm#31884; the same bind of the head's "
        "address by another node's DP leader is what vLLM PR #35429 fixed).",
        fix="Every process given its own node's address (VLLM_HOST_IP, VLLM_NIXL_SIDE_CHANNEL_HOST per node; "
        "--data-parallel-address the head's), the host's network for a container, or a vLLM after PR #35429 for "
        "multi-node data parallelism.",
        limits="Which of vLLM's sockets it was is in the traceback (make_zmq_socket's caller); the line alone names "
        "only the address. A bare `OSError: [Errno 99]` is not read: a connect gets it too, when no ephemeral port "
        "is left.",
        references=[
            "https://github.com/vllm-project/vllm/pull/35429",
            "https://github.com/vllm-project/vllm/issues/31884",
            "https://github.com/ai-dynamo/dynamo/issues/2706",
            "https://github.com/vllm-project/vllm/issues/42149",
            "https://github.com/vllm-project/vllm/pull/1288",
        ],
    ),
)

RULES: list[Rule] = [RULE_BIND_ADDRESS]
