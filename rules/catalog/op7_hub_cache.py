"""OP-7.128: the Hugging Face cache directory the process was pointed at does not exist.

Why a rule of its own: huggingface_hub scans its cache before it reads from it and raises `CacheNotFound` in its own
words when the directory is missing: `Cache directory not found: /data/.cache/huggingface. Please use `cache_dir`
argument or set `HF_HUB_CACHE` environment variable.` (huggingface_hub/utils/_cache_manager.py). The path is the one
HF_HOME, HF_HUB_CACHE or a download directory named, so the cause is in how the process was started: a volume not
mounted in the container, a variable set for another user, a typo. HabanaAI/vllm-fork#1474 (Gaudi 3, vLLM 0.7.3's
fork) failed so while loading weights.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

MISSING_CACHE = re.compile(r"Cache directory not found: (?P<path>\S+?)\.? Please use `cache_dir` argument")


def _hub_cache_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    path = match["path"]
    return RULE.finding(
        Severity.CRITICAL,
        f"the Hugging Face cache directory {path} does not exist where vLLM runs",
        summary="huggingface_hub reads models through its cache directory, which HF_HOME, HF_HUB_CACHE or "
        "--download-dir name; the one named is missing in this process's filesystem, so no weights load.",
        evidence=[c.log_evidence(event, name="the missing cache directory", value=path)],
        actions=[
            f"In a container, mount the volume that holds the models at {path} (`-v <host dir>:{path}`, or the "
            "pod's volumeMounts), or create it and let vLLM download into it.",
            "Or point HF_HOME (or HF_HUB_CACHE, or --download-dir) at the directory that holds the models, set "
            "in the environment of the process that runs vLLM (not only your shell's).",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.128",
    title="the Hugging Face cache directory is missing",
    category=Category.STARTUP,
    check=c.on_phrase(MISSING_CACHE, _hub_cache_finding),
    needs=("events",),
    page=RulePage(
        checks="huggingface_hub's `Cache directory not found: <path>. Please use `cache_dir` argument or set "
        "`HF_HUB_CACHE` environment variable.`",
        why="The cache directory the process was pointed at is absent, so no model loads from it.",
        example="Gaudi 3, HabanaAI's vLLM fork: `Cache directory not found: /data/.cache/huggingface` while loading "
        "weights (HabanaAI/vllm-fork#1474).",
        fix="Mount or create the directory, or point HF_HOME / HF_HUB_CACHE / --download-dir where the models are.",
        limits="Which setting named the path is not in the message.",
        references=["https://github.com/HabanaAI/vllm-fork/issues/1474"],
    ),
)

RULES: list[Rule] = [RULE]
