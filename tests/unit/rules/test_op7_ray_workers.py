"""OP-7.121 (Ray's workers cannot import vLLM where they run) and OP-7.122 (a placement group smaller than its
workers)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_ray_workers
from rules.evaluate import evaluate
from rules.facts import Facts

# vllm#1937, verbatim
ACTOR = (
    "(TemporaryActor pid=9913) RuntimeError: The actor with name RayWorkerVllm failed to import on the worker. This "
    "may be because needed library dependencies are not installed in the worker environment:"
)


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_an_actor_that_cannot_be_imported_asks_for_one_environment_on_every_node():
    top = evaluate(_facts([ACTOR])).findings[0]
    assert top.rule == "OP-7.121" and top.title.startswith("Ray could not import RayWorkerVllm on the node")
    assert "same environment" in top.actions[0] and "pip install -e ." in top.actions[2]


def test_the_import_error_under_rays_line_names_the_missing_module():
    lines = [ACTOR, "(TemporaryActor pid=9913) ModuleNotFoundError: No module named 'vllm'"]
    [finding] = op7_ray_workers.RULE_ACTOR_IMPORT.evaluate(_facts(lines))
    assert ": its Python has no vllm:" in finding.title


def test_a_bundle_past_the_groups_end_sizes_the_workers_to_the_group():
    # OpenRLHF/OpenRLHF PR #728, verbatim
    line = "ValueError: placement group bundle index 6 is invalid. Valid placement group indexes: 0-4"
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.122" and "bundle 6 of a Ray placement group of 5" in top.title
    assert top.actions[0].startswith("Ask for at most 5 GPU workers")
