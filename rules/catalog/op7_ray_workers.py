"""OP-7.121 and OP-7.122: Ray could not start vLLM's workers where it placed them: their environment cannot import
vLLM, or the placement group holds fewer bundles than the workers placed on it.

Why rules of their own: with Ray, vLLM's GPU workers (RayWorkerVllm, later RayWorkerWrapper) and a framework's vLLM
engines are Ray actors, each started in the Python of the node Ray placed it on, in a bundle of a placement group
reserved beforehand. Two of Ray's own refusals then read as vLLM failing:

- `The actor with name RayWorkerVllm failed to import on the worker. This may be because needed library dependencies
  are not installed in the worker environment:`, then the ImportError: the node's
  Python lacks the package the actor's class lives in, or imports another copy of it. vllm#1937 ran a benchmark from
  vLLM's source folder: the driver imported that folder's vllm, the workers the one (or none) installed.
- `placement group bundle index 6 is invalid. Valid placement group indexes: 0-4` (Ray's check of a scheduling
  strategy): an actor was asked onto a bundle the group does not have, because the caller reserved fewer bundles
  than it starts workers. OpenRLHF's hybrid engine sized its group from the actors' GPUs while placing more vLLM
  engine GPUs on it (OpenRLHF/OpenRLHF PR #728 checks that vLLM asks for no more).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import MISSING_MODULE, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

ACTOR_IMPORT = re.compile(r"The actor with name (?P<actor>\w+) failed to import on the worker")
BUNDLE_INDEX = re.compile(
    r"placement group bundle index (?P<index>\d+) is invalid\. Valid placement group indexes: 0-(?P<last>\d+)"
)
_KINDS = (LogEventKind.UNPLACED_ERROR, LogEventKind.UNPLACED_LINE, LogEventKind.MODULE_NOT_FOUND)


def _first(facts: Facts, pattern: re.Pattern[str]) -> tuple[LogEvent, re.Match[str]] | None:
    for event in facts.events_of(*_KINDS):
        found = pattern.search(event.message or "") or pattern.search(event.raw or "")
        if found is not None:
            return event, found
    return None


# --- OP-7.121 an actor's class cannot be imported on the node Ray placed it on ------------------------------------


def _check_actor_import(facts: Facts) -> list[Finding]:
    refused = _first(facts, ACTOR_IMPORT)
    if refused is None:
        return []
    event, found = refused
    missing = _first(facts, MISSING_MODULE)
    module = missing[1]["module"] if missing else None
    named = f": its Python has no {module}" if module else ""
    return [
        RULE_ACTOR_IMPORT.finding(
            Severity.CRITICAL,
            f"Ray could not import {found['actor']} on the node it placed it on{named}: the workers' environment is "
            "not the driver's",
            summary="Ray starts each worker in the Python of the node it runs on and imports the actor's class "
            "there; the driver's own imports do not travel. A node without the package, a different virtual "
            "environment, or a driver run from a source folder the workers do not have (vllm#1937) fails here, "
            "before vLLM's code runs.",
            evidence=[c.log_evidence(event, name="Ray's refusal", value=found.group(0))],
            actions=[
                "Give every Ray node the same environment: the same image, or the same vLLM installed with `pip "
                "install` (not imported from a source folder), and start `ray start` from that environment.",
                'Check from each node: `ray exec`, or a task that runs `python -c "import vllm; print(vllm.__file__)'
                "\"` on it; the import error under Ray's line names what is missing.",
                "For a source checkout, install it (`pip install -e .`) on every node, or ship it with a Ray "
                "runtime_env's working_dir.",
            ],
            confidence=0.85,
        )
    ]


RULE_ACTOR_IMPORT = Rule(
    code="OP-7.121",
    title="Ray's workers cannot import vLLM on the node they run on",
    category=Category.STARTUP,
    check=_check_actor_import,
    needs=("events",),
    page=RulePage(
        checks="Ray's `The actor with name X failed to import on the worker. This may be because needed library "
        "dependencies are not installed in the worker environment`, with the import error under it.",
        why="The driver imports vLLM, the workers import it again in their node's Python: when that differs, the "
        "workers cannot start and vLLM's own code never runs.",
        example="`(TemporaryActor pid=9913) RuntimeError: The actor with name RayWorkerVllm failed to import on the "
        "worker.` running a benchmark from vLLM's source folder (vllm#1937).",
        fix="The same environment on every Ray node, with vLLM installed rather than imported from a folder.",
        limits="Which module is missing is in the import error under Ray's line, when the text holds it.",
        references=["https://github.com/vllm-project/vllm/issues/1937"],
    ),
)


# --- OP-7.122 an actor asked onto a bundle its placement group does not have --------------------------------------


def _check_bundle_index(facts: Facts) -> list[Finding]:
    refused = _first(facts, BUNDLE_INDEX)
    if refused is None:
        return []
    event, found = refused
    index, bundles = int(found["index"]), int(found["last"]) + 1
    return [
        RULE_BUNDLE_INDEX.finding(
            Severity.CRITICAL,
            f"a worker was placed on bundle {index} of a Ray placement group of {bundles}: more GPU workers were "
            "started than the group reserved",
            summary="Each of vLLM's GPU workers (one per tensor- and pipeline-parallel rank, for every engine) takes "
            "a bundle of the placement group it is started in. The caller reserved fewer bundles than it places "
            "workers, so Ray refused the first worker past the end. The sizes asked for disagree, not the cluster.",
            evidence=[c.log_evidence(event, name="Ray's refusal", value=found.group(0))],
            actions=[
                f"Ask for at most {bundles} GPU workers in that group: the vLLM engines' count times their tensor "
                "(and pipeline) parallel size must not exceed the GPUs the group reserves, or reserve more.",
                "In OpenRLHF's hybrid engine (vLLM colocated with the actors): vllm_num_engines × "
                "vllm_tensor_parallel_size at most actor_num_nodes × actor_num_gpus_per_node (OpenRLHF PR #728 "
                "checks it).",
            ],
            confidence=0.85,
        )
    ]


RULE_BUNDLE_INDEX = Rule(
    code="OP-7.122",
    title="Ray placement group smaller than the workers placed on it",
    category=Category.PARALLELISM,
    check=_check_bundle_index,
    needs=("events",),
    page=RulePage(
        checks="Ray's `placement group bundle index N is invalid. Valid placement group indexes: 0-M`.",
        why="A worker was scheduled on a bundle past the group's end: the caller reserved fewer GPUs than it starts.",
        example="`ValueError: placement group bundle index 6 is invalid. Valid placement group indexes: 0-4` in "
        "OpenRLHF's hybrid engine with more vLLM GPUs than actor GPUs (OpenRLHF/OpenRLHF PR #728).",
        fix="Engines × tensor-parallel size within the group's bundles, or a larger group.",
        limits="Which framework built the group is not in Ray's words; the traceback's frames name it.",
        references=["https://github.com/OpenRLHF/OpenRLHF/pull/728"],
    ),
)

RULES: list[Rule] = [RULE_ACTOR_IMPORT, RULE_BUNDLE_INDEX]
