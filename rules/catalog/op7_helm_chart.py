"""OP-7.136: Helm finds no chart of the name asked in the repository's index.

Why a rule of its own: `Error: INSTALLATION FAILED: chart "production-stack" matching not found in vllm index. (try
'helm repo update'): no chart name found` is Helm's: the repository added as `vllm` holds no chart of that name in
its index. Helm suggests an update, which helps only when the chart is newer than the local copy of the index; a
wrong name is the other cause. vLLM's production stack publishes its chart as `vllm-stack` (its Helm repository
https://vllm-project.github.io/production-stack), and a reporter following an older tutorial in
vllm-project/production-stack#37 installed `vllm/production-stack`; `vllm/vllm-stack` installed.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

PRODUCTION_STACK_CHART = "vllm-stack"  # the chart's name in vLLM's production-stack Helm repository


def _check_helm_chart(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.HELM_CHART_NOT_FOUND)
    if not seen:
        return []
    event = seen[0]
    chart, repo = event.message or "the chart", event.component or "the"
    actions = [
        f"`helm repo update {repo}` then `helm search repo {repo}/` lists the charts (and versions, with --versions) "
        "the index holds; install one of those names.",
    ]
    if "production-stack" in chart or "vllm" in repo:
        actions.insert(
            0,
            f"vLLM's production stack publishes its chart as {PRODUCTION_STACK_CHART}: `helm repo add vllm "
            f"https://vllm-project.github.io/production-stack` and `helm install <release> vllm/"
            f"{PRODUCTION_STACK_CHART} -f values.yaml` (vllm-project/production-stack#37).",
        )
    return [
        RULE.finding(
            Severity.HIGH,
            f"Helm found no chart named {chart} in the {repo} repository's index: a chart name (or version) the "
            "repository does not publish, or an index older than the chart",
            summary="Helm resolves `<repo>/<chart>` against its local copy of the repository's index; nothing was "
            "installed.",
            evidence=[c.log_evidence(event, name="the chart Helm could not find", value=f"{repo}/{chart}")],
            actions=actions,
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-7.136",
    title="a Helm chart name the repository does not publish",
    category=Category.STARTUP,
    check=_check_helm_chart,
    needs=("events",),
    page=RulePage(
        checks='Helm\'s `chart "<name>" matching not found in <repo> index`.',
        why="The repository's index has no chart of that name (or version); vLLM's production stack's is vllm-stack.",
        example="`helm install vllm vllm/production-stack` (vllm-project/production-stack#37: vllm/vllm-stack "
        "installs).",
        fix="`helm search repo <repo>/` for the names; vllm/vllm-stack for the production stack.",
        limits="Reads Helm's words only; a chart served from an OCI registry fails in other words.",
        references=["https://github.com/vllm-project/production-stack/issues/37"],
    ),
)

RULES: list[Rule] = [RULE]
