"""OP-7.140 and OP-7.141: Ray refusing how early vLLM drove it — initialised twice in one process, and an actor's
method called directly.

OP-7.140: vLLM before 0.1.3 started Ray with a bare `ray.init()` for tensor parallelism, so a second LLM object in
the same process (a notebook cell run again, two models in one script) or Ray already started by the calling code
stopped at `RuntimeError: Maybe you called ray.init twice by accident? This error can be suppressed by passing in
'ignore_reinit_error=True' …` (vllm PR #465, merged July 2023, passes ignore_reinit_error).

OP-7.141: `--engine-use-ray` (vLLM 0.2 to 0.6.0, the engine in a Ray actor of its own; the catalog's engine_args
records AsyncEngineArgs.engine_use_ray to 0.6.0) had the API server call the actor's methods as plain methods in
0.3.0, and every request failed with HTTP 500 and Ray's `TypeError: Actor methods cannot be called directly.
Instead of running 'object.encode_request_async()', try 'object.encode_request_async.remote'.` (vllm PR #2664,
merged January 2024).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

RAY_REINIT = re.compile(r"Maybe you called ray\.init twice by accident\?")
ACTOR_CALLED = re.compile(r"Actor methods cannot be called directly\. Instead of running 'object\.(?P<method>\w+)\(\)'")


def _reinit_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_REINIT.finding(
        Severity.CRITICAL,
        "Ray was already initialised in this process when vLLM started it again: a second LLM object in one "
        "process, or Ray started by the calling code",
        summary="vLLM before 0.1.3 called ray.init() without ignore_reinit_error for tensor parallelism, so the "
        "second engine in one Python process (a notebook cell run again, two models in one script), or a "
        "process whose own code had started Ray, stopped here.",
        evidence=[c.log_evidence(event, name="Ray's refusal", value=match.group(0))],
        actions=[
            "Upgrade vLLM: from the release with vllm PR #465 it passes ignore_reinit_error and joins the Ray "
            "already running.",
            "In the same process, create one LLM and reuse it; to replace it, delete it and call "
            "`ray.shutdown()` first, or restart the kernel.",
        ],
        confidence=0.85,
    )


def _actor_called_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_ACTOR.finding(
        Severity.HIGH,
        f"with --engine-use-ray the API server called the engine actor's {match['method']} directly: vLLM "
        "0.3.0's bug, every request fails with HTTP 500",
        summary="--engine-use-ray runs the engine in a Ray actor of its own, whose methods must be called with "
        ".remote(); vLLM 0.3.0's API server called one as a plain method (fixed by vllm PR #2664). The flag "
        "was removed after 0.6.0.",
        evidence=[c.log_evidence(event, name="Ray's refusal", value=match.group(0))],
        changes=[
            ConfigChange(
                flag="--engine-use-ray",
                current="true",
                proposed="",
                reason="the engine then runs in the API server's process and its methods are called directly",
            )
        ],
        actions=["Or upgrade vLLM past 0.3.0, where the API server calls the actor with .remote() (PR #2664)."],
        confidence=0.85,
    )


RULE_REINIT = Rule(
    code="OP-7.140",
    title="Ray initialised twice in one process by an early vLLM",
    category=Category.STARTUP,
    check=c.on_phrase(RAY_REINIT, _reinit_finding),
    needs=("events",),
    page=RulePage(
        checks="Ray's `RuntimeError: Maybe you called ray.init twice by accident?`.",
        why="Early vLLM started Ray without ignore_reinit_error, so the second engine in one process failed.",
        example="Two vllm.LLM objects with tensor_parallel_size=4 in one process, or a notebook cell run again "
        "(vllm PR #465).",
        fix="A vLLM with PR #465, one LLM per process, or ray.shutdown() before the next.",
        limits="Other code calling ray.init twice reads the same; its traceback names the caller.",
        references=["https://github.com/vllm-project/vllm/pull/465"],
    ),
)

RULE_ACTOR = Rule(
    code="OP-7.141",
    title="--engine-use-ray's actor called directly (vLLM 0.3.0)",
    category=Category.RELIABILITY,
    check=c.on_phrase(ACTOR_CALLED, _actor_called_finding),
    needs=("events",),
    page=RulePage(
        checks="Ray's `TypeError: Actor methods cannot be called directly. Instead of running 'object.<method>()', "
        "try 'object.<method>.remote'.`",
        why="Under --engine-use-ray every request failed with HTTP 500 in vLLM 0.3.0.",
        example="`object.encode_request_async()` called by the API server (vllm PR #2664).",
        fix="Drop --engine-use-ray, or a vLLM with PR #2664.",
        limits="The same words from another program's Ray actor are its own bug; the traceback names the caller.",
        references=["https://github.com/vllm-project/vllm/pull/2664"],
    ),
)

RULES: list[Rule] = [RULE_REINIT, RULE_ACTOR]
