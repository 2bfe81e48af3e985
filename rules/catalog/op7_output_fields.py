"""OP-7.113: code built on vLLM reads a field of vLLM's outputs that the installed release removed.

Why a rule of its own: frameworks that run vLLM in-process (Ray's LLM serving and batch stages, RL trainers,
evaluation harnesses) read the objects `LLM.generate` / `LLM.encode` and the engine return, not the HTTP API. vLLM
renames and removes those objects' fields across releases, each in a pull request of its own; Python then says only
`AttributeError: 'PoolingOutput' object has no attribute 'embedding'`, which names neither release and reads as a
vLLM bug. Each entry below is a removal a thread confirmed: vLLM PR #18795 (merged 2025-05-28, so from 0.9.1)
removed the Embeddings API's fallbacks, and with them `PoolingOutput.embedding`: the pooled tensor is
`PoolingOutput.data`, and `EmbeddingRequestOutput.from_base(output).outputs.embedding` gives the list an embedding
caller wants. Ray Serve LLM read `.embedding` until ray-project/ray PR #54467 (ray-project/ray#54466: /v1/embeddings
answered 500).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


class RemovedField(NamedTuple):
    release: str  # the first vLLM release without the field
    change: str  # the pull request that removed it
    instead: str  # what a caller reads in its place
    callers: str  # a framework release that made the change, where a thread named one


REMOVED: dict[tuple[str, str], RemovedField] = {
    ("PoolingOutput", "embedding"): RemovedField(
        "0.9.1",
        "vLLM PR #18795",
        "`output.outputs.data` (the pooled tensor), or `EmbeddingRequestOutput.from_base(output).outputs.embedding` "
        "for the list of floats",
        "Ray Serve LLM's embeddings read it until ray-project/ray PR #54467",
    ),
}
_ATTRIBUTE = re.compile(r"'(?P<owner>\w+)' object has no attribute '(?P<name>\w+)'")


def _check_output_fields(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR, LogEventKind.VLLM_MESSAGE):
        found = _ATTRIBUTE.search(event.message or event.raw or "")
        removed = REMOVED.get((found["owner"], found["name"])) if found else None
        if found is None or removed is None:
            continue
        owner, name = found["owner"], found["name"]
        return [
            RULE.finding(
                Severity.CRITICAL,
                f"code built on vLLM reads {owner}.{name}, which vLLM removed in {removed.release}: the caller was "
                "written for an older vLLM",
                summary=f"{removed.change} removed {owner}.{name}; from vLLM {removed.release} on, a framework that "
                f"still reads it fails on every request that reaches that code. The error is the caller's (its "
                f"release predates the change), not vLLM's.",
                evidence=[c.log_evidence(event, name="output_attribute", value=f"{owner}.{name}")],
                actions=[
                    f"Upgrade the calling framework to a release written for vLLM {removed.release} or later "
                    f"({removed.callers}), or install the vLLM it pins, older than {removed.release}.",
                    f"Code of your own: instead of .{name}, read {removed.instead}.",
                ],
                confidence=0.85,
            )
        ]
    return []


RULE = Rule(
    code="OP-7.113",
    title="code built on vLLM reads an output field the installed vLLM removed",
    category=Category.CONFIGURATION,
    check=_check_output_fields,
    needs=("events",),
    page=RulePage(
        checks="Python's `'<class>' object has no attribute '<field>'` for a field of vLLM's outputs a release "
        "removed (servops' table: PoolingOutput.embedding, removed by PR #18795 in 0.9.1).",
        why="A framework reading vLLM's output objects breaks on the release that removed the field, and the "
        "AttributeError names no release: it looks like vLLM's bug.",
        example="`AttributeError: 'PoolingOutput' object has no attribute 'embedding'` from Ray Serve LLM's "
        "/v1/embeddings (ray-project/ray#54466, fixed by Ray PR #54467).",
        fix="A framework release written for the installed vLLM, or the vLLM it pins; in one's own code, the field "
        "that replaced it.",
        limits="Only removals in the table are known; a class of the framework's own with the same name reads the "
        "same.",
        references=[
            "https://github.com/vllm-project/vllm/pull/18795",
            "https://github.com/ray-project/ray/issues/54466",
        ],
    ),
)

RULES: list[Rule] = [RULE]
