"""OP-7.167: a package that older vLLM releases need through one of their dependencies is no longer served by PyPI.

Why a rule of its own: the installer's words (`No matching distribution found for pyairports`, uv's `Because
pyairports was not found in the package registry`, pip's `outlines 0.0.46 depends on pyairports` under `Cannot
install vllm because these package versions have conflicting dependencies`) read like a typo or an unreachable index
(OP-7.55), and no flag or version of the package itself helps: the fix is the vLLM release, or a copy of the package
from elsewhere. Read from the wheels' METADATA on PyPI (2026-12-06): vLLM 0.5.0 to 0.6.4.post1 require `outlines
>=0.0.43` (`<0.1` from 0.5.2), outlines 0.0.43 to 0.0.46 require `pyairports`, outlines 0.1 and later `airportsdata`
instead, and vLLM 0.6.5 pins outlines 0.1.11. PyPI stopped serving pyairports in 2025 (`from versions: none` in
vllm#23983 and Simplified-Reasoning/LUFFY#32, August 2025; uv's `not found in the package registry` in
zeroQiaoba/AffectGPT#21, whose reporter moved to vLLM 0.8.5.post1). Since 2025-09-25 the name holds a 0.0.1 source
distribution by another uploader that installs a package named `sample` and a `byted-wandb` command, and no module
named pyairports: an install "succeeds" and outlines then fails with `No module named 'pyairports'`.
"""

from __future__ import annotations

from pydantic import BaseModel

from rules.catalog import common as c
from rules.catalog.op7_feature_modules import MISSING
from rules.catalog.op7_pip_conflicts import distribution_name
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


class WithdrawnPackage(BaseModel):
    """A package PyPI no longer serves as the project it was: who needs it, which vLLM releases, what to do."""

    needed_by: str
    successor: str
    vllm_releases: str
    newer_release: str
    source: str
    on_pypi_now: str


WITHDRAWN: dict[str, WithdrawnPackage] = {
    "pyairports": WithdrawnPackage(
        needed_by="outlines 0.0.43 to 0.0.46",
        successor="outlines 0.1 and later take airportsdata instead",
        vllm_releases="vLLM 0.5.0 to 0.6.4.post1",
        newer_release="vLLM 0.6.5 or later pins outlines 0.1.11, whose airport codes come from airportsdata, which "
        "PyPI serves",
        source="`pip install git+https://github.com/ozeliger/pyairports` (the source a commenter points to in "
        "VITA-MLLM/VITA#131)",
        on_pypi_now="since 2025-09-25 PyPI's pyairports is a 0.0.1 by another uploader that installs a package named "
        "`sample` and a `byted-wandb` command, not the module outlines imports (read 2026-12-06)",
    ),
}


def _withdrawn_named(facts: Facts) -> tuple[LogEvent, str] | None:
    """The first installer line or missing-module error naming a package of the table."""
    for event in facts.events_of(LogEventKind.PIP_NO_DISTRIBUTION):
        name = distribution_name(event.component or event.message or "")
        if name in WITHDRAWN:
            return event, name
    found = c.first_match(facts, MISSING)
    if found is not None and found[1]["module"] in WITHDRAWN:
        return found[0], found[1]["module"]
    return None


def _check(facts: Facts) -> list[Finding]:
    found = _withdrawn_named(facts)
    if found is None:
        return []
    event, name = found
    package = WITHDRAWN[name]
    at_run_time = event.kind != LogEventKind.PIP_NO_DISTRIBUTION
    title = (
        f"{name} is missing: {package.needed_by} import it, and what PyPI now serves under that name "
        "installs no such module"
        if at_run_time
        else f"{name} is no longer installable from PyPI: {package.needed_by} need it, and "
        f"{package.vllm_releases} require those"
    )
    return [
        RULE.finding(
            Severity.HIGH,
            title,
            summary=f"{package.vllm_releases} require {package.needed_by} ({package.successor}); "
            f"{package.on_pypi_now}. No index setting or version pin of the package helps: the vLLM release decides.",
            evidence=[c.log_evidence(event, name="package PyPI no longer serves", value=name)],
            actions=[
                f"Move to a newer release: {package.newer_release}.",
                f"Keeping the older vLLM: install {name} from its source first, {package.source}, then vLLM.",
                f"Do not take {name} from PyPI ({package.on_pypi_now}); `pip uninstall {name}` if it is installed.",
            ],
            confidence=0.9,
        )
    ]


RULE = Rule(
    code="OP-7.167",
    title="a package older vLLM releases need through a dependency is no longer served by PyPI",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="The installer finding no distribution of a package the table names (pip's `No matching distribution "
        "found for`, uv's `not found in the package registry`, pip's `X 1.0 depends on <package>` under `Cannot "
        "install … because these package versions have conflicting dependencies`), or Python's `No module named` "
        "for it.",
        why="These read like a typo or an unreachable index, but the package left PyPI (and its name now holds "
        "something else): only another vLLM release, or a copy of the package from its source, installs.",
        example="`ERROR: No matching distribution found for pyairports` installing vLLM 0.6.3 (vllm#23983): outlines "
        "0.0.43 to 0.0.46 require it; vLLM 0.6.5 pins outlines 0.1.11, which takes airportsdata.",
        fix="A vLLM release whose dependencies PyPI serves, or the package installed from its source before vLLM.",
        limits="Knows the packages of its table only (pyairports); other missing distributions are OP-7.55's.",
        references=[
            "https://github.com/vllm-project/vllm/issues/23983",
            "https://github.com/zeroQiaoba/AffectGPT/issues/21",
            "https://github.com/VITA-MLLM/VITA/issues/131",
            "https://pypi.org/project/pyairports/",
        ],
    ),
)

RULES: list[Rule] = [RULE]
