"""OP-3.7: Ray's compiled graph timed out waiting for a step (RAY_CGRAPH_get_timeout)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op3_ray_cgraph
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_rays_ten_second_default_is_raised_to_what_later_vllm_sets():
    # vllm#16692, verbatim (vLLM 0.8.4, TP 16 over two nodes)
    line = (
        "ERROR 04-16 10:35:25 [core.py:387] ray.exceptions.RayChannelTimeoutError: System error: If the execution is "
        "expected to take a long time, increase RAY_CGRAPH_get_timeout which is currently 10 seconds. Otherwise, this "
        "may indicate that the execution is hanging."
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-3.7" and "(10 s)" in top.title
    change = top.changes[0]
    assert (change.flag, change.kind, change.current, change.proposed) == ("RAY_CGRAPH_get_timeout", "env", "10", "300")
    assert "--pipeline-parallel-size 2" in top.actions[1]


def test_a_timeout_already_long_points_at_the_workers_first():
    line = (
        "(EngineCore_DP0 pid=579) ERROR 12-05 22:43:45 [core.py:845] ray.exceptions.RayChannelTimeoutError: System "
        "error: If the execution is expected to take a long time, increase RAY_CGRAPH_get_timeout which is currently "
        "300 seconds. Otherwise, this may indicate that the execution is hanging."
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-3.7" and "a worker stalled" in top.title
    assert top.changes == [] and top.alternatives[0].proposed == "600"
    assert "workers' own logs" in top.actions[0]


def test_the_channel_read_timeout_without_a_number_is_the_same_failure():
    # ray-project/ray#59249, verbatim
    line = (
        "(EngineCore_DP0 pid=579) ERROR 12-05 22:43:45 [core.py:845] ray.exceptions.RayChannelTimeoutError: System "
        "error: Timed out waiting for object available to read. ObjectID: "
        "007e768e7da845eb498bddc26311bb55310405340100000002e1f505"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-3.7" and "its limit" in top.title


def test_other_ray_errors_are_not_read_as_a_channel_timeout():
    line = "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task."
    assert op3_ray_cgraph.RULE.evaluate(_facts([line])) == []
