"""OP-7.135: an RDMA transfer of KV blocks failed because the peer's NIC never acknowledged it.

Why a rule of its own: disaggregated serving moves KV blocks between instances over RDMA (Mooncake's transfer engine,
NIXL over UCX), and a work completion with `transport retry counter exceeded` is the InfiniBand verbs status
IBV_WC_RETRY_EXC_ERR: the local NIC resent the request until its retry count ran out without an acknowledgement from
the remote queue pair. The packets did not reach the peer NIC, or its answers did not come back: two NICs with no
route between them (different subnets or fabrics, a port down), a RoCE GID index or VLAN that differs between the
two sides, or a pairing of local and peer NICs that the configuration got wrong. In kvcache-ai/Mooncake#35 (one
prefill and one decode instance on one machine, two NICs mlx5_0 and mlx5_1 in the config) every write from mlx5_1
to mlx5_0 failed so; the thread confirms no fix.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

RETRY_EXCEEDED = re.compile(
    r"(?:local_nic: (?P<local>[\w.-]+), peer_nic: (?P<peer>\S+?)[,)].*?)?transport retry counter exceeded"
)


def _rdma_transport_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    pair = f" ({match['local']} to {match['peer']})" if match["local"] else ""
    return RULE.finding(
        Severity.HIGH,
        f"RDMA transfers of KV blocks fail: the peer's NIC never acknowledged them{pair}, so the two NICs cannot "
        "reach each other over the fabric",
        summary="`transport retry counter exceeded` is the verbs status IBV_WC_RETRY_EXC_ERR: the local NIC resent "
        "until its retries ran out with no acknowledgement from the remote queue pair. The transfer engine's "
        "choice of NICs, or the network between them, is the question, not vLLM.",
        evidence=[c.log_evidence(event, name="the RDMA work completion's status", value=match.group(0))],
        actions=[
            "Check the pair can talk outside vLLM: `ibv_devinfo` (both ports ACTIVE), then `ib_write_bw -d "
            "<local nic>` against the peer's NIC; a pair that fails there is the network's (subnet, fabric, "
            "link).",
            "On RoCE, the same GID index and VLAN on both sides (`show_gids`), and the NICs listed in the transfer "
            "engine's configuration in the order that pairs them on one fabric; with several NICs, list only "
            "those that reach the peer's.",
            "One machine with two NICs on different networks (Mooncake#35's setup): give both instances the same "
            "NIC, or use the TCP transport to rule the fabric out.",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-7.135",
    title="RDMA KV transfers whose peer NIC never acknowledges",
    category=Category.PARALLELISM,
    check=c.on_phrase(RETRY_EXCEEDED, _rdma_transport_finding),
    needs=("events",),
    page=RulePage(
        checks="An RDMA work completion's `transport retry counter exceeded` (Mooncake's transfer engine, UCX).",
        why="IBV_WC_RETRY_EXC_ERR: the remote queue pair never acknowledged; the two NICs cannot reach each other.",
        example="Mooncake's `Worker: Process failed for slice (… local_nic: mlx5_1, peer_nic: "
        "127.0.0.1:8149@mlx5_0 …): transport retry counter exceeded` (kvcache-ai/Mooncake#35).",
        fix="NICs that share a fabric (ib_write_bw between them), the same GID index on RoCE, or the TCP transport.",
        limits="Which hop drops the packets is not in the status; the perftest tools say.",
        references=["https://github.com/kvcache-ai/Mooncake/issues/35"],
    ),
)

RULES: list[Rule] = [RULE]
