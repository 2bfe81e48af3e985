"""OP-7.178: a Ray node's raylet did not register with the GCS in time."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_node_that_timed_out_at_startup_names_the_address_it_should_bind():
    # aws-samples/aws-do-eks PR #49, verbatim (shortened with '...' by its author): under hostNetwork the worker's
    # raylet bound a secondary interface; the fix passes the IP `ip route get <leader IP>` resolves
    top = top_finding("worker  Exception: The current node timed out during startup ... raylet failed to startup")
    assert top.rule == "OP-7.178" and "raylet never registered" in top.title
    assert any("--node-ip-address" in action and "ip route get" in action for action in top.actions)


def test_rays_older_wording_reads_the_same():
    # ray-project/ray#19834's title, verbatim
    top = top_finding(
        "Exception: The current node has not been updated within 30 seconds, this could happen because of some of "
        "the Ray processes failed to startup."
    )
    assert top.rule == "OP-7.178"
