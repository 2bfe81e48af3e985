"""OP-7.25: vLLM's processes could not meet: torch.distributed never reached the rendezvous address.

Why a rule of its own: vLLM's workers (tensor and pipeline parallel ranks, and the V0 engine's distributed init)
meet through torch.distributed's TCP store at `tcp://<ip>:<port>`, the IP being VLLM_HOST_IP or, when it is unset,
the address of the interface that holds the default route (`get_ip()` opens a UDP socket towards 8.8.8.8 and reads
its own address: vllm/utils/network_utils.py, 0.32). In a container, on a host with a VPN or a second interface,
or behind a firewall, that address may be one the processes cannot connect to, and the store waits until torch's
timeout (600 s) with PyTorch's words, never vLLM's: `DistNetworkError: The client socket has timed out after 600s
while trying to connect to (host, port)`. vLLM's envs.py says to set VLLM_HOST_IP on each node in multi-node
inference; zai-org/GLM-4#677 was a container's IP configuration. The rank that opened the store says the other side,
`DistStoreError: Timed out after 601 seconds waiting for clients. 1/2 clients joined.`: it listened, and the other
processes (another node's, started with `--nnodes` and `--node-rank` in 0.32, or a worker that died first) never
connected.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import HCCL_SOCKET, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

HOST_IP_ENV = "VLLM_HOST_IP"


def _check_rendezvous(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.RENDEZVOUS_UNREACHABLE)
    if event is None:
        waiting = facts.last_event(LogEventKind.RENDEZVOUS_WAITING)
        if waiting is not None:
            return [_clients_missing(waiting)]
        interface = facts.last_event(LogEventKind.GLOO_INTERFACE_MISSING)
        if interface is not None:
            return [_gloo_interface(interface)]
        mesh = facts.last_event(LogEventKind.GLOO_MESH_FAILED)
        return [_gloo_mesh(mesh)] if mesh is not None else []
    address = event.message or "(its address is cut from the paste)"
    host, _ = c.split_address(event.message) if event.message else ("that address", None)
    waited = f" (timed out after {event.timeout_ms / 1000:.0f} s)" if event.timeout_ms else ""
    evidence = c.log_evidence(event, name="rendezvous address", value=address)
    evidence.description = "the address torch.distributed's TCP store tried to connect to"
    if c.LOOPBACK.match(host):  # the address is this host's own: the listening rank is what did not come up
        return [_listener_missing(address, waited, evidence)]
    return [_address_unreachable(address, host, waited, evidence)]


def _address_unreachable(address: str, host: str, waited: str, evidence: Evidence) -> Finding:
    """The ranks' rendezvous IP is another host's or an interface they cannot reach: the IP vLLM guessed from
    the default route is the usual culprit, so VLLM_HOST_IP is the change."""
    return RULE_RENDEZVOUS.finding(
        Severity.CRITICAL,
        f"vLLM's processes could not reach their rendezvous address {address}{waited}: the IP is not one they "
        "can connect to",
        summary=f"vLLM's ranks meet at tcp://<ip>:<port>, the IP being {HOST_IP_ENV} or, unset, the address of "
        "the interface holding the default route. A container's IP configuration, a VPN or second interface, or "
        f"a firewall between the processes leaves the TCP store waiting on {host} until torch's timeout.",
        evidence=[evidence],
        changes=[
            ConfigChange(
                flag=HOST_IP_ENV,
                current=None,
                proposed="<an address every vLLM process reaches: 127.0.0.1 on one host, each node's own IP "
                "across nodes>",
                reason=f"vLLM uses {HOST_IP_ENV} as the rendezvous IP instead of guessing it from the default route",
                kind="env",
            )
        ],
        actions=[
            f"Check the container's IP configuration: {host} must be an address of the container or host the "
            "server runs in (`hostname -I` or `ip addr` inside it) that its processes can connect to; with "
            "Docker's host network (`--network host`) or a pod's own IP they can.",
            "Across nodes: set VLLM_HOST_IP on each node to that node's IP, and open the ports between the "
            "nodes (the firewall, the security group); NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME pick the same "
            "interface for NCCL and Gloo.",
            "On one machine with a VPN up (a tunnel's address, Tailscale's 100.64.0.0/10): vLLM took the "
            f"tunnel's address from the default route; `{HOST_IP_ENV}=127.0.0.1` keeps the rendezvous on the "
            "machine (vllm-project/vllm-metal#625; torch's `TCP client failed to connect/validate … - retrying` "
            "repeats until the store's timeout).",
            f"In a bridge-networked container, look for a HOST_IP variable naming the host machine: vLLM's get_ip() "
            f"took HOST_IP when {HOST_IP_ENV} was unset (vllm PR #10492, November 2024), which is not the "
            f"container's own address; `{HOST_IP_ENV}=127.0.0.1` worked around it there.",
        ],
        confidence=0.8,
    )


def _listener_missing(address: str, waited: str, evidence: Evidence) -> Finding:
    """A loopback address is always reachable: the rank that listens there failed or never started."""
    return RULE_RENDEZVOUS.finding(
        Severity.CRITICAL,
        f"vLLM's processes could not meet at {address}{waited}: the rank that listens there did not come up",
        summary="The rendezvous address is this host's own, so the network is not what failed: the process that "
        "opens the TCP store (rank 0, the engine's first worker) died or hung before it listened.",
        evidence=[evidence],
        actions=[
            "Read the first rank's own log (the EngineCore or worker with rank 0) for the error before this one: "
            "it is the cause; this timeout is its consequence.",
        ],
        confidence=0.6,
    )


def _clients_missing(event: LogEvent) -> Finding:
    """The rank that opened the store listened and waited; the others never connected to it."""
    joined = event.message
    waited = f" {event.timeout_ms / 1000:.0f} s" if event.timeout_ms else ""
    evidence = (
        c.log_evidence(event, name="ranks that joined", value=joined)
        if joined
        else c.log_evidence(event, name="what waited", value=event.component)
    )
    title = (
        f"vLLM's first rank waited{waited} for its other processes and only {joined} joined: the others never "
        "reached it"
        if joined
        else f"a vLLM rank waited{waited} on {event.component or 'its group'} for its other processes, which never "
        "came: they failed, hung, or cannot reach it"
    )
    return RULE_RENDEZVOUS.finding(
        Severity.CRITICAL,
        title,
        summary=(
            "The process that opens torch.distributed's TCP store (rank 0) listened; the others never connected "
            "before its timeout."
            if joined
            else "A rank waited at a barrier or in a collective exchange for the other ranks, and they never answered "
            "before its timeout."
        )
        + " Across nodes, the other nodes' processes did not start, could not reach this node's address and port, or "
        "were started for another world size; on one host, a worker died before it connected.",
        evidence=[evidence],
        actions=[
            "Read the other nodes' (or workers') own logs first: a process that failed at start is the cause, and "
            "this timeout its consequence.",
            *(
                [
                    "For HCCL: every NPU rank must start its collectives (a rank that failed or started late leaves "
                    "the others waiting); HCCL_IF_IP / HCCL_SOCKET_IFNAME name the address and interface the nodes "
                    "share, and HCCL_CONNECT_TIMEOUT how long it waits."
                ]
                if event.component == HCCL_SOCKET
                else []
            ),
            "Check each node was started for the same group (the same --tensor-parallel-size and "
            "--pipeline-parallel-size; --nnodes and its own --node-rank; one Ray cluster) and reaches this node's "
            f"address and port through the firewall ({HOST_IP_ENV} set to each node's own IP; NCCL_SOCKET_IFNAME / "
            "GLOO_SOCKET_IFNAME naming the interface the nodes share).",
        ],
        confidence=0.7,
    )


def _gloo_interface(event: LogEvent) -> Finding:
    """Gloo was told to use an interface (GLOO_SOCKET_IFNAME) this host has no address on: interface names differ
    between nodes (eth0 on one, ens3 or bond0 on another), and one variable set for the whole cluster names an
    interface some node lacks (vllm#12997, the second node of a Ray cluster)."""
    interface = event.message or "the interface named"
    return RULE_RENDEZVOUS.finding(
        Severity.CRITICAL,
        f"Gloo was told to use the interface {interface}, which has no address on this host",
        summary="vLLM's ranks open CPU-side process groups with Gloo beside NCCL's, on the interface "
        f"GLOO_SOCKET_IFNAME names. This host has no {interface} with an address (no such interface, or one "
        "without an IP), so the rank fails before it connects: interface names differ between machines, and a "
        "value set once for a cluster fits only the nodes that have it.",
        evidence=[c.log_evidence(event, name="the interface Gloo was given", value=interface)],
        changes=[
            ConfigChange(
                flag="GLOO_SOCKET_IFNAME",
                current=interface,
                proposed="<this node's interface on the network the nodes share (`ip -br addr`)>",
                reason="each node names its own interface; Gloo then finds its address",
                kind="env",
            )
        ],
        actions=[
            "Run `ip -br addr` on the failing node and set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) there to the "
            "interface that holds its address on the nodes' shared network; with Ray, in that node's environment "
            "before `ray start`, so its workers inherit it.",
        ],
        confidence=0.85,
    )


def _gloo_mesh(event: LogEvent) -> Finding:
    """Gloo met the rendezvous, then could not connect each pair of ranks directly: each rank advertises the address
    of the interface Gloo chose, and on hosts with several (a second NIC, docker0, a VPN) it may be one the others
    cannot reach (vllm-project/vllm#5094, a Ray cluster across nodes)."""
    reason = event.message or "no reason given"
    return RULE_RENDEZVOUS.finding(
        Severity.CRITICAL,
        f"Gloo could not connect vLLM's ranks to each other ({reason}): most often an address the other nodes "
        "cannot reach",
        summary="vLLM's ranks open CPU-side process groups with Gloo beside NCCL's. After the rendezvous, Gloo "
        "connects every pair of ranks directly, each at the address of the network interface it picked on its own "
        "host; on hosts with several interfaces (a second NIC, docker0, a VPN, a Kubernetes overlay) that can be "
        "one the other nodes cannot reach, or a firewall blocks its ports. Gloo's own reason is often no help "
        "('no error').",
        evidence=[c.log_evidence(event, name="Gloo's reason", value=reason)],
        changes=[
            ConfigChange(
                flag="GLOO_SOCKET_IFNAME",
                current=None,
                proposed="<the interface the nodes reach each other on, e.g. eth0 (`ip -br addr`)>",
                reason="Gloo binds and advertises that interface's address instead of the one it guesses",
                kind="env",
            )
        ],
        actions=[
            "Set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) on every node to the interface the nodes reach each "
            f"other on, and {HOST_IP_ENV} to that node's address on it; with Ray, before `ray start`, so the "
            "workers inherit them.",
            "Open the ports between the nodes: Gloo's pairs use ephemeral ports, so a firewall or security group "
            "must allow TCP between the nodes, not only the rendezvous port.",
        ],
        confidence=0.7,
    )


RULE_RENDEZVOUS = Rule(
    code="OP-7.25",
    title="vLLM's processes could not reach their rendezvous address",
    category=Category.STARTUP,
    check=_check_rendezvous,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `DistNetworkError: The client socket has timed out after Ns while trying to connect to "
        "(host, port)`, c10d's `The client socket has failed to connect to [host]:port` and TCPStore's retry "
        "warning `TCP client failed to connect/validate to host H:P - retrying`; from the listening "
        "side, the store's `Timed out after N seconds waiting for clients. J/T clients joined.`; after it, Gloo's "
        "`Gloo connectFullMesh failed with […]` (ranks that met but cannot reach each other's advertised address).",
        why="vLLM's ranks meet through torch.distributed's TCP store at VLLM_HOST_IP, or, unset, at the address of "
        "the interface holding the default route; when the processes cannot connect to it, start-up waits for "
        "torch's timeout and fails.",
        example="`DistNetworkError: The client socket has timed out after 600s while trying to connect to "
        "(10.60.2.1, 53591)` in a container whose IP configuration was wrong (zai-org/GLM-4#677).",
        fix="Set VLLM_HOST_IP to an address every process reaches (127.0.0.1 on one host, each node's own IP across "
        "nodes), or fix the container's network (host network, the pod's IP); across nodes open the ports and pick "
        "the interface with NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME. A loopback address means the listening rank "
        "itself failed: its log holds the cause. A store that waited for clients: the other processes' logs, and "
        "every node started for the same group.",
        limits="The text does not say whether the address was wrong or the listening rank was late; a loopback "
        "address is read as the latter.",
        references=[
            "https://github.com/zai-org/GLM-4/issues/677",
            "https://github.com/vllm-project/vllm-metal/issues/625",
        ],
    ),
)

RULES: list[Rule] = [RULE_RENDEZVOUS]
