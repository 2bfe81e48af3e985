"""OP-7.127: vLLM's setup refuses to build on a platform other than Linux (macOS, native Windows).

Why a rule of its own: `AssertionError: vLLM only supports Linux platform (including WSL).` is the assertion at the
top of vLLM's setup.py in its early releases, raised while pip builds vLLM from source because no wheel fits the
platform. It is an install on the wrong operating system, not a failed build: a library that lists vLLM among its
requirements hits it on a Mac (RUC-NLPIR/FlashRAG#5, where the maintainer answered that vLLM does not support Mac and
to drop vllm from the requirements and use another generator). Later setup.py files warn instead and build a
CPU-only vLLM on macOS; vLLM's installation guide documents that build for Apple silicon.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

LINUX_ONLY = re.compile(r"vLLM only supports Linux platform \(including WSL\)")


def _setup_platform_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "vLLM's setup refuses this operating system: it builds and runs on Linux (WSL 2 included), and pip "
        "was building it here from source",
        summary="pip builds vLLM from source only when no wheel fits; its early setup.py asserts that the "
        "platform is Linux before building anything, so on macOS or native Windows the install stops here.",
        evidence=[c.log_evidence(event, name="vLLM's setup", value=match.group(0))],
        actions=[
            "Run vLLM on a Linux host, in a Linux container, or under WSL 2 on Windows, and reach it over HTTP "
            "from this machine.",
            "If vLLM came in as another package's requirement (a RAG or evaluation library), install that "
            "package without vllm and use its other generators, as RUC-NLPIR/FlashRAG#5's maintainer advised.",
            "On Apple silicon, later vLLM releases build a CPU-only vLLM from source (its installation guide, "
            "CPU, Apple silicon): slow, and without a GPU.",
        ],
        confidence=0.9,
    )


RULE = Rule(
    code="OP-7.127",
    title="vLLM's setup refuses a platform other than Linux",
    category=Category.STARTUP,
    check=c.on_phrase(LINUX_ONLY, _setup_platform_finding),
    needs=("events",),
    page=RulePage(
        checks="`AssertionError: vLLM only supports Linux platform (including WSL).`",
        why="pip was building vLLM from source on macOS or Windows; its early setup.py refuses any platform but Linux.",
        example="Installing FlashRAG, which requires vllm, on an Apple-silicon Mac (RUC-NLPIR/FlashRAG#5).",
        fix="Linux (a host, a container, WSL 2); the requiring package without vllm; vLLM's CPU build for Apple "
        "silicon in later releases.",
        limits="Says nothing of the release: the wording is setup.py's, which the catalog (read from wheels) lacks.",
        references=["https://github.com/RUC-NLPIR/FlashRAG/issues/5"],
    ),
)

RULES: list[Rule] = [RULE]
