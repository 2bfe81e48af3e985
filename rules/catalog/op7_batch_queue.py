"""OP-7.87: the V1 engine's batch queue got no model output for a step (`'NoneType' object has no attribute
'sampled_token_ids'`).

Why a rule of its own: the V1 engine core keeps a queue of steps in flight when it overlaps scheduling with execution
(EngineCore.step_with_batch_queue): with async scheduling (`--async-scheduling`, from 0.10; on by default where
compatible by 0.32, vllm/config/vllm.py) and with pipeline parallelism. When a step in that queue comes back without
the model runner's output, the scheduler's update dereferences it and the engine dies with Python's words alone. It
is a bug in that path, met with different features: async scheduling serving gpt-oss on a GB10, where
`--no-async-scheduling` avoided it (vllm#31588, the sixth probe); async scheduling on TPU (vllm-project/tpu-inference
#1115); data parallel 2 with pipeline parallel 2 (vllm#22062). Turning the overlap off is the workaround the reporters
found; a release with the fix is the cure.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NO_OUTPUT = "'NoneType' object has no attribute 'sampled_token_ids'"


def _check_batch_queue(facts: Facts) -> list[Finding]:
    event = c.error_saying(facts, NO_OUTPUT)
    if event is None:
        return []
    pipeline = c.pipeline_parallel_size(facts) > 1
    return [
        RULE_BATCH_QUEUE.finding(
            Severity.CRITICAL,
            "the V1 engine's batch queue got no model output for a step: a bug in the overlapped path that async "
            "scheduling" + (" and pipeline parallelism run" if pipeline else " (or pipeline parallelism) runs"),
            summary="The engine core keeps steps in flight when it overlaps scheduling with execution (async "
            "scheduling, pipeline parallelism); a step that came back without the model runner's output ended the "
            "engine here. Reporters avoided it by turning the overlap off (vllm#31588); it is a bug to upgrade past.",
            evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
            changes=[
                ConfigChange(
                    flag="--async-scheduling",
                    current=None,
                    proposed="false",
                    reason="the synchronous step loop does not keep steps in flight (vllm#31588: "
                    "--no-async-scheduling avoided it)",
                    cost="a little throughput: scheduling no longer overlaps the GPU's work",
                )
            ],
            actions=[
                "Restart with `--no-async-scheduling` (async scheduling is on by default where compatible in recent "
                "releases); with pipeline parallelism the same queue runs (vllm#22062, DP 2 with PP 2).",
                "Upgrade vLLM (and the platform plugin: tpu-inference#1115 met it on TPU): the None check belongs in "
                "the engine's step, and releases after the reports add it.",
            ],
            confidence=0.7,
        )
    ]


RULE_BATCH_QUEUE = Rule(
    code="OP-7.87",
    title="the V1 engine's batch queue got no model output for a step",
    category=Category.RELIABILITY,
    check=_check_batch_queue,
    needs=("events",),
    page=RulePage(
        checks="`AttributeError: 'NoneType' object has no attribute 'sampled_token_ids'`, alone or as a dead "
        "engine's root.",
        why="With async scheduling or pipeline parallelism the engine keeps steps in flight; one that came back "
        "without output ends the engine, a bug in that path.",
        example="gpt-oss-120b on a DGX Spark (GB10) with async scheduling on, dead on its first request; "
        "`--no-async-scheduling` avoided it (vllm#31588).",
        fix="`--no-async-scheduling` until a release with the fix; the same for pipeline parallelism's queue.",
        limits="Whether async scheduling was on is not in the line (it is the default where compatible in recent "
        "releases); with pipeline parallelism in the launch the title says so.",
        references=[
            "https://github.com/vllm-project/vllm/issues/31588",
            "https://github.com/vllm-project/vllm/issues/22062",
            "https://github.com/vllm-project/tpu-inference/issues/1115",
        ],
    ),
)

RULES: list[Rule] = [RULE_BATCH_QUEUE]
