"""OP-7.176: a build of vLLM (or of a package beside it) produced a wheel named UNKNOWN.

Why a rule of its own: nothing fails where it happens. setuptools builds the wheel, pip installs it, and only later
does something look for the distribution by name and not find it: `pip show vllm` says nothing, an image's next step
installs vLLM again from the index, vLLM's own version check reads no package. The name comes from the project's
metadata, which a recent vLLM keeps in pyproject.toml's [project] table, versioned by setuptools_scm; a setuptools
too old to read it with the setuptools_scm beside it names the distribution UNKNOWN (vllm PR #19035: a ROCm image
built `dist/UNKNOWN-0.8.6-cp310-cp310-linux_x86_64.whl`; its author found setuptools newer than 75 works with
setuptools_scm 8 and later, and vLLM's requirements for Python above 3.11 ask setuptools>=77.0.3,<80).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The setuptools vLLM's requirements ask for where it builds (requirements/common.txt for Python above 3.11, as vllm
# PR #19035 quotes it)
SETUPTOOLS_WANTED = "setuptools>=77.0.3,<80"


def _unknown_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    named = event.message or match.group(0)
    return RULE_UNKNOWN_WHEEL.finding(
        Severity.HIGH,
        "the build named its wheel UNKNOWN: the setuptools that built it did not read the project's name and version "
        "metadata",
        summary="setuptools takes a project's name from its metadata (a recent vLLM's pyproject.toml, with the "
        "version from setuptools_scm); one too old for that metadata, or for the setuptools_scm installed beside it, "
        f"builds a distribution called UNKNOWN ({named}). It installs, but nothing finds it by name afterwards; when "
        "the package is vLLM, `pip show vllm` comes back empty, a later `pip install` fetches vLLM again, and version "
        "checks read no vLLM.",
        evidence=[c.log_evidence(event, name="wheel named UNKNOWN", value=named)],
        actions=[
            f"Upgrade the build environment's setuptools before building: `pip install -U '{SETUPTOOLS_WANTED}' "
            "setuptools-scm` (vllm PR #19035: setuptools newer than 75 built the wheel as vllm), then build again.",
            "Or build with pip's build isolation on (`pip wheel .` or `pip install .` without "
            "--no-build-isolation): pip then installs the setuptools the project's pyproject.toml asks for.",
            "Remove the installed UNKNOWN distribution (`pip uninstall UNKNOWN`) before installing the rebuilt wheel.",
        ],
        confidence=0.8,
    )


RULE_UNKNOWN_WHEEL = Rule(
    code="OP-7.176",
    title="a wheel was built or installed under the name UNKNOWN",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.WHEEL_NAMED_UNKNOWN, _unknown_finding),
    needs=("events",),
    page=RulePage(
        checks="setuptools' `creating 'dist/UNKNOWN-<version>-<tags>.whl'` and pip's `Successfully built UNKNOWN` or "
        "`Successfully installed UNKNOWN-<version>`.",
        why="The build succeeds under the wrong name, so the failure shows later as a vLLM that is not installed.",
        example="`creating 'dist/UNKNOWN-0.8.6-cp310-cp310-linux_x86_64.whl'` while building vLLM in a ROCm image "
        "(vllm PR #19035: the image's setuptools was too old for setuptools_scm 8).",
        fix=f"`pip install -U '{SETUPTOOLS_WANTED}' setuptools-scm` in the build environment, or a build with pip's "
        "isolation on; then rebuild.",
        limits="Any package can be built as UNKNOWN; the fix is the same, but the package is not always vLLM.",
        references=["https://github.com/vllm-project/vllm/pull/19035"],
    ),
)

RULES: list[Rule] = [RULE_UNKNOWN_WHEEL]
