"""OP-7.212: AMD's AITER ran a GEMM shape without a tuned configuration: a note on speed, not an error.

Why a rule of its own: with VLLM_ROCM_USE_AITER=1, AITER's GEMM wrappers look each shape up in tuned-config tables
(CSV files such as a8w8_blockscale_tuned_gemm.csv) and print `[aiter] shape is M:72, N:512, K:7168, not found tuned
config in …, will use default config!` for every shape the table lacks: one line per shape and batch size, often
hundreds in a worker's log. People paste them as the failure (vllm#39485's log of a DeepSeek-R1 runtime error is full
of them). They are AITER saying it runs its default kernel configuration for that shape: correct results, possibly
slower. The failure, if any, is in another line.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _untuned_finding(_facts: Facts, event: LogEvent, _words: re.Match[str]) -> Finding:
    table = (event.code_file or "its tuned-config table").rsplit("/", 1)[-1]
    return RULE.finding(
        Severity.LOW,
        f"AITER has no tuned configuration for a GEMM shape ({event.message}) and runs its default one: not an error",
        summary=f"AITER looks each GEMM shape up in {table} and, for a shape the table lacks, runs its default kernel "
        "configuration: correct results, possibly slower for that shape. It prints this per shape and batch size, "
        "so a worker's log can hold hundreds; none of them stops the server.",
        evidence=[c.log_evidence(event, name="untuned shape", value=event.message)],
        actions=[
            "If the server fails, the cause is in another line: look for the exception or ERROR line around these.",
            "If the throughput for this model matters, tune the shapes with AITER's GEMM tuning scripts (they write "
            "these CSV tables) or use an image whose AITER ships tables for the model.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.212",
    title="AITER ran a GEMM shape without a tuned configuration (a note on speed)",
    category=Category.LATENCY,
    check=c.on_kind(LogEventKind.AITER_UNTUNED_SHAPE, _untuned_finding),
    needs=("events",),
    page=RulePage(
        checks="AITER's `shape is M:…, N:…, K:…, not found tuned config in <table>.csv, will use default config!`.",
        why="It is printed per untuned shape, in volume, and pasted as the failure; it says only that AITER runs its "
        "default configuration for the shape.",
        example="`(Worker_TP3 pid=11841) [aiter] shape is M:72, N:512, K:7168, not found tuned config in "
        "/tmp/aiter_configs/a8w8_blockscale_tuned_gemm.csv, will use default config!` (vllm#39485).",
        fix="Nothing for correctness; tune the shapes where speed matters.",
        limits="How much slower an untuned shape runs is not in the line.",
        references=["https://github.com/vllm-project/vllm/issues/39485"],
    ),
)

RULES: list[Rule] = [RULE]
