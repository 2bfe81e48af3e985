"""OP-7.131: vLLM's CPU or Intel GPU path imports Intel Extension for PyTorch, which this Python lacks.

Why a rule of its own: `No module named 'intel_extension_for_pytorch'` names a package no extra of vLLM installs and
that pip cannot find under that name on most platforms: IPEX is Intel's, built for x86-64 CPUs and Intel GPUs only, and
each release pairs with one PyTorch. vLLM's CPU backend and its XPU platform imported it for their kernels and
collectives in the releases that built on it, so a CPU install without it fails where the import runs. In vllm#11342 a
CPU build on ppc64le failed so in tensor parallelism's all-reduce, and the commenter found IPEX cannot be installed on
ppc64le.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NO_IPEX = re.compile(r"No module named '?intel_extension_for_pytorch'?")


def _ipex_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "vLLM's CPU or Intel GPU code imports Intel Extension for PyTorch (intel_extension_for_pytorch), which "
        "is not installed in this Python",
        summary="IPEX is Intel's, for x86-64 CPUs and Intel GPUs, each release paired with one PyTorch; vLLM's "
        "CPU backend and XPU platform imported it in the releases built on it, and no vLLM extra installs it.",
        evidence=[c.log_evidence(event, name="the missing module", value=match.group(0))],
        actions=[
            "On x86-64 or an Intel GPU: install the IPEX release made for the installed torch (`pip install "
            "intel_extension_for_pytorch==<torch's major.minor>.*`, or the xpu build from Intel's index), as "
            "vLLM's CPU or XPU installation guide for your release lists it.",
            "On another CPU (Arm, ppc64le, s390x) IPEX has no build (vllm#11342: ppc64le): use the code path "
            "that does not import it (one process, no tensor parallelism, where the import sat in the "
            "all-reduce), or a vLLM release whose CPU backend no longer builds on IPEX.",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-7.131",
    title="Intel Extension for PyTorch missing for vLLM's CPU or XPU path",
    category=Category.STARTUP,
    check=c.on_phrase(NO_IPEX, _ipex_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `No module named 'intel_extension_for_pytorch'`.",
        why="vLLM's CPU backend and XPU platform imported IPEX; it exists for x86-64 and Intel GPUs only.",
        example="A CPU build of vLLM 0.6.6 on ppc64le with tensor parallelism (vllm#11342).",
        fix="The IPEX for the installed torch on x86-64 or Intel GPUs; elsewhere the path or release without it.",
        limits="Which vLLM release imported it where is not in the line.",
        references=["https://github.com/vllm-project/vllm/issues/11342"],
    ),
)

RULES: list[Rule] = [RULE]
