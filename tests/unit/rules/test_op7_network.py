"""OP-7.25: vLLM's processes could not reach their rendezvous address (torch.distributed's TCP store)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_network
from rules.evaluate import evaluate
from rules.facts import Facts

# zai-org/GLM-4#677, as pasted: a terminal wrapped the line inside "while" and left its spaces there
TIMED_OUT = (
    "torch.distributed.DistNetworkError: The client socket has timed out after 600s w"
    + " " * 40
    + "hile trying to connect to (10.60.2.1, 53591)."
)
LOOPBACK = "[W socket.cpp:663] [c10d] The client socket has failed to connect to [127.0.0.1]:29500 (errno: 111)."


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_an_address_the_processes_cannot_reach_proposes_vllm_host_ip_and_the_container_network():
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([TIMED_OUT]))
    assert "10.60.2.1:53591 (timed out after 600 s)" in finding.title
    [change] = finding.changes
    assert (change.flag, change.kind, change.current) == ("VLLM_HOST_IP", "env", None)
    assert finding.actions[0].startswith("Check the container's IP configuration: 10.60.2.1")
    assert "NCCL_SOCKET_IFNAME" in finding.actions[1]


def test_a_wait_printed_in_milliseconds_reads_the_same():
    """torch formats the wait as a duration; some releases print `600000ms` where others print `600s`."""
    line = (
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (10.0.0.1, 29500)."
    )
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert "10.0.0.1:29500 (timed out after 600 s)" in finding.title


def test_a_loopback_address_points_at_the_rank_that_did_not_come_up_not_the_network():
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([LOOPBACK]))
    assert "127.0.0.1:29500" in finding.title and "did not come up" in finding.title
    assert not finding.changes and "rank 0" in finding.actions[0]


def test_an_ipv6_address_in_brackets_keeps_its_colons_and_a_mapped_loopback_is_this_host():
    # vllm#3771, verbatim (vLLM 0.4.0 in Docker): torch prints an IPv4-mapped IPv6 address in brackets
    line = (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:172.16.8.232]:39623 "
        "(errno: 110 - Connection timed out)"
    )
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert "[::ffff:172.16.8.232]:39623" in finding.title and "waiting on ::ffff:172.16.8.232 " in finding.summary
    [mapped] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line.replace("172.16.8.232", "127.0.0.1")]))
    assert "did not come up" in mapped.title


def test_the_last_tries_summary_names_the_address_as_a_pair():
    # vllm#2427, verbatim (2024-01, an offline LLM(...) on one host)
    line = (
        "[E socket.cpp:719] [c10d] The client socket has failed to connect to any network address of (x.x.x.x, 48247)."
    )
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert "x.x.x.x:48247" in finding.title and finding.changes[0].flag == "VLLM_HOST_IP"


def test_other_socket_words_are_not_this():
    assert not op7_network.RULE_RENDEZVOUS.evaluate(_facts(["ConnectionResetError: [Errno 104] Connection reset"]))


def test_the_store_that_waited_for_clients_points_at_the_processes_that_never_joined():
    line = "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/2 clients joined."
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.25"
    assert top.title == (
        "vLLM's first rank waited 601 s for its other processes and only 1/2 joined: the others never reached it"
    )
    assert top.actions[0].startswith("Read the other nodes'") and "--node-rank" in top.actions[1]


def test_torchs_retry_warning_names_the_address_without_claiming_a_wait():
    # zai-org/Open-AutoGLM#21 (an M2 Mac): TCPStore retries a tunnel's address; its timeout is the store's whole wait
    line = (
        "[W1210 11:08:45.455238000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host "
        "26.26.26.1:53376 - retrying (try=11, timeout=1800000ms, delay=36371ms): Connection reset by peer"
    )
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert finding.title == (
        "vLLM's processes could not reach their rendezvous address 26.26.26.1:53376: the IP is not one they can "
        "connect to"
    )
    assert any("VLLM_HOST_IP=127.0.0.1" in action for action in finding.actions)


def test_gloo_failing_its_full_mesh_proposes_the_interface_for_gloo_and_nccl():
    # vllm-project/vllm#5094, verbatim: multi-node on a Ray cluster, hosts with several interfaces
    line = (
        "ERROR 05-29 04:08:22 worker_base.py:145] RuntimeError: Gloo connectFullMesh failed with "
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"
    )
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert finding.title.startswith("Gloo could not connect vLLM's ranks to each other (no error)")
    assert [change.flag for change in finding.changes] == ["GLOO_SOCKET_IFNAME"]
    assert "NCCL_SOCKET_IFNAME" in finding.actions[0]


def test_gloo_failing_its_full_mesh_pasted_without_its_source_location_is_the_same():
    # aws-samples/aws-do-eks PR #50, verbatim (the reporter's `...` for the location; the line wraps after the comma)
    line = "[rank8] Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused,"
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert finding.title.startswith(
        "Gloo could not connect vLLM's ranks to each other (timed out connecting: SO_ERROR: Connection refused)"
    )
    assert [change.flag for change in finding.changes] == ["GLOO_SOCKET_IFNAME"]


def test_gloo_given_an_interface_this_node_lacks_asks_for_the_nodes_own_interface():
    # vllm#12997, verbatim: the second node of a Ray cluster, GLOO_SOCKET_IFNAME=eth0
    line = (
        "(RayWorkerWrapper pid=317, ip=10.68.27.14) ERROR 02-11 22:51:15 worker_base.py:574] RuntimeError: [enforce "
        "fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: eth0 "
        "[repeated 6x across cluster]"
    )
    [finding] = op7_network.RULE_RENDEZVOUS.evaluate(_facts([line]))
    assert "interface eth0, which has no address on this host" in finding.title
    assert [(ch.flag, ch.current) for ch in finding.changes] == [("GLOO_SOCKET_IFNAME", "eth0")]


def test_a_rank_waiting_at_a_barrier_or_on_a_gloo_peer_is_the_others_never_coming():
    # vllm#52907 (grep output of a node's log) and vllm#43420, verbatim
    store = (
        "test_glm5.2_2152434_node0.out:(Worker pid=2437300) ERROR 08-31 06:22:53 [multiproc_executor.py:944] "
        "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//2//cpu//0/2"
    )
    gloo = "gloo/transport/tcp/unbound_buffer.cc:78 Timed out waiting 1800000ms for recv operation to complete"
    for line, what in ((store, "torch.distributed's store"), (gloo, "Gloo's recv")):
        top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
        assert top.rule == "OP-7.25" and f"waited 1800 s on {what}" in top.title, line
        assert top.actions[0].startswith("Read the other nodes'")


def test_a_client_socket_timeout_cut_inside_the_address_still_names_the_host():
    # OpenRLHF/OpenRLHF#265, verbatim: the paste wraps mid-address
    line = (
        "`(RayWorkerVllm pid=207931, ip=10.0.1.75) [E socket.cpp:922] [c10d] The client socket has timed out after "
        "1800s while trying to connect to (172.17.0.2"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.25" and "rendezvous address 172.17.0.2 (timed out after 1800 s)" in top.title


def test_hccls_socket_timeout_on_ascend_is_the_same_wait_with_hccls_settings():
    # vllm-ascend#5461, verbatim (the reasons HCCL lists, cut): two A2 nodes
    line = (
        "[PID: 749] 2025-12-29-03:16:15.787.356 Get_Socket_Timeout(EI0006): Getting socket times out. Reason: 1. The "
        "remote does not initiate a connect request. some NPUs in the cluster are abnormal."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.25" and "HCCL's socket" in top.title
    assert top.actions[1].startswith("For HCCL:") and "HCCL_IF_IP" in top.actions[1]
    # vllm-project/afd-plugin#229, verbatim: the same code under its other name, alone
    alone = evaluate(Facts(events=parse_lines(["Communication_Error_Get_Socket(EI0006)"]).events)).findings[0]
    assert alone.rule == "OP-7.25" and "HCCL's socket" in alone.title and "HCCL_CONNECT_TIMEOUT" in alone.actions[1]


def test_a_timeout_cut_before_its_address_still_reads_and_names_a_containers_host_ip():
    # vllm PR #10492, verbatim: a bridge-networked container with HOST_IP set to the host's IP; VLLM_HOST_IP=127.0.0.1
    # worked around it
    findings = evaluate(
        Facts(events=parse_lines(["`The client socket has timed out after 600s while trying to connect to`"]).events)
    ).findings
    top = findings[0]
    assert top.rule == "OP-7.25" and "(its address is cut from the paste)" in top.title
    assert any("HOST_IP" in action and "PR #10492" in action for action in top.actions)
