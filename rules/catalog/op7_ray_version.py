"""OP-7.157: the process joined a Ray cluster started by another Ray (or Python) version.

Why a rule of its own: Ray checks, when a driver or worker connects to a running cluster, that its Ray and Python
versions are the cluster's, and refuses otherwise: `RuntimeError: Version mismatch: The cluster was started with:`
then each side's `Ray: … Python: …` (`check_version_info`, python/ray/_private/utils.py). With vLLM across nodes
(`--distributed-executor-backend ray`, or a platform that runs vLLM on its own Ray cluster), the cluster was started
by `ray start` from one environment and vLLM runs in another: a vLLM installed or swapped into its own virtual
environment brings the Ray its release pins (gpustack/gpustack#1640: a custom vLLM 0.7.2 environment with Ray
2.44.1 against GPUStack's cluster on Ray 2.43.0).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

VERSION_MISMATCH = re.compile(
    r"Version mismatch: The cluster was started with:"
    r"(?:\s*Ray: (?P<cluster_ray>[\w.+-]+)\s+Python: (?P<cluster_python>[\w.+-]+)\s+This process on node "
    r"(?P<node>\S+) was started with:\s*Ray: (?P<ray>[\w.+-]+)\s+Python: (?P<python>[\w.+-]+))?"
)


def _versions(found: re.Match[str]) -> str:
    """Which side runs what, when the words carry both (a log flattened onto one line)."""
    if not found["ray"]:
        return ""
    return (
        f": the cluster runs Ray {found['cluster_ray']} on Python {found['cluster_python']}, this process (node "
        f"{found['node']}) Ray {found['ray']} on Python {found['python']}"
    )


def _mismatch_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    versions = _versions(found)
    pin = f"ray=={found['cluster_ray']}" if found["cluster_ray"] else "ray==<the cluster's version>"
    return RULE.finding(
        Severity.CRITICAL,
        "this process and the Ray cluster it joined run different Ray or Python versions" + versions,
        summary="Ray lets a process join a running cluster only with the cluster's own Ray and Python versions. The "
        "cluster was started (`ray start`) from one environment and vLLM runs from another: a vLLM installed into "
        "its own environment brings the Ray version its release pins.",
        evidence=[c.log_evidence(event, name="Ray's version check", value=found.group(0))],
        actions=[
            f"Make the two match: install the cluster's Ray into vLLM's environment (`pip install {pin}`, Python as "
            "the cluster's), or restart the cluster on every node from vLLM's environment (`ray stop`, then `ray "
            "start` with that environment's `ray`).",
            "`ray --version` and `python --version` in each environment, and the head's `ray status`, show which "
            "side runs what.",
        ],
        confidence=0.9,
    )


RULE = Rule(
    code="OP-7.157",
    title="a Ray cluster and the process joining it run different versions",
    category=Category.STARTUP,
    check=c.on_phrase(VERSION_MISMATCH, _mismatch_finding),
    needs=("events",),
    page=RulePage(
        checks="Ray's `Version mismatch: The cluster was started with:` (with each side's `Ray: … Python: …` when "
        "the text carries them).",
        why="Ray refuses a process whose Ray or Python version is not the running cluster's.",
        example="gpustack/gpustack#1640: a custom vLLM 0.7.2 environment (Ray 2.44.1) joining a cluster on Ray 2.43.0.",
        fix="The cluster's Ray (and Python) installed in vLLM's environment, or the cluster restarted from it.",
        limits="A paste cut after the first line names neither version.",
        references=["https://github.com/gpustack/gpustack/issues/1640"],
    ),
)

RULES: list[Rule] = [RULE]
