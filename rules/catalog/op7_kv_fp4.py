"""OP-7.198: an NVFP4 KV cache reached code that looks its dtype up in torch by name.

Why a rule of its own: `AttributeError: module 'torch' has no attribute 'nvfp4'` reads as torch lacking an API, the
shape of OP-7.8's version mismatch, but no torch release has a dtype of that name (torch's 4-bit float is
float4_e2m1fn_x2), so no torch upgrade helps: some code turned `--kv-cache-dtype nvfp4` into a torch dtype by name on a
path that has no NVFP4 KV cache. In vllm#43562 (vLLM 0.21.1rc1, FlashInfer 0.6.11.post2, RTX PRO 6000, sm_120) the
server started and died on the first request inside FlashInfer's prefill plan(); the reporter traced it to the
trtllm-gen FP4 attention path having no sm_120 kernel, vLLM having accepted the flag at start, and served with
`--kv-cache-dtype fp8` instead.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NO_FP4_DTYPE = re.compile(r"module 'torch' has no attribute 'nvfp4'")


def _fp4_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "the NVFP4 KV cache reached an attention path that has none: code looked `nvfp4` up as a torch dtype",
        summary="No torch release has a dtype named nvfp4, so this is not a torch version to change: code turned "
        "--kv-cache-dtype nvfp4 into a torch dtype by name on an attention path with no NVFP4 KV cache for this GPU. "
        "vLLM can accept the flag at start and fail at the first request (vllm#43562: RTX PRO 6000, sm_120, whose "
        "FP4 attention kernels are missing).",
        evidence=[c.log_evidence(event, name="the dtype looked up", value=found.group(0))],
        changes=[
            ConfigChange(
                flag="--kv-cache-dtype",
                current="nvfp4",
                proposed="fp8",
                reason="an 8-bit KV cache has kernels on this GPU; vllm#43562's reporter served with it",
                cost="twice the KV-cache memory of NVFP4's: fewer tokens in the cache",
            )
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.198",
    title="an NVFP4 KV cache on an attention path without one",
    category=Category.STARTUP,
    check=c.on_phrase(NO_FP4_DTYPE, _fp4_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `module 'torch' has no attribute 'nvfp4'`.",
        why="torch has no dtype of that name in any release, so it is the KV-cache dtype reaching code without it, "
        "not a torch to upgrade (OP-7.8's reading of the same shape).",
        example="`AttributeError: module 'torch' has no attribute 'nvfp4'` in FlashInfer's prefill plan() on an RTX "
        "PRO 6000 with `--kv-cache-dtype nvfp4` (vllm#43562; the reporter's workaround: fp8).",
        fix="`--kv-cache-dtype fp8` (or auto) on this GPU and release.",
        limits="The line does not say which attention path; the GPU and backend come from the rest of the log.",
        references=["https://github.com/vllm-project/vllm/issues/43562"],
    ),
)

RULES: list[Rule] = [RULE]
