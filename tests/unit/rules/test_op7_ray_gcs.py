"""OP-7.164: a Ray node that could not reach the cluster's GCS, from Ray's own C++ log line."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding

# vllm#19543, verbatim: a worker container started with `ray start --block --address=127.0.0.1:6379`; a maintainer
# answered that the address must be the head node's
WORKER = (
    "[2025-06-13 01:49:41,730 E 1 1] gcs_rpc_client.h:179: Failed to connect to GCS at address 10.108.0.184:6379 "
    "within 5 seconds."
)


def test_rays_core_header_is_read_for_its_level_and_the_gcs_it_dialled_is_named():
    [event] = parse_lines([WORKER]).events
    assert event.kind == LogEventKind.UNPLACED_LINE and event.level == "ERROR"
    top = top_finding(WORKER)
    assert top.rule == "OP-7.164" and "10.108.0.184:6379" in top.title
    assert "ray start --address=<head node IP>:6379" in top.actions[0]


def test_a_loopback_address_is_said_to_be_no_head():
    top = top_finding(WORKER.replace("10.108.0.184", "127.0.0.1"))
    assert "a loopback address, which on a worker node is not the head" in top.title
