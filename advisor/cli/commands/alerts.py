"""`servops alerts export`: the rule catalog as a Prometheus alert pack.

On-call teams are paged by Alertmanager from Prometheus rules and follow the alert's runbook_url;
this writes those rules from servops's own catalog (advisor/oncall/alert_pack.py), as a plain rules
file or as the Prometheus Operator's PrometheusRule, so a vLLM fleet gets servops's thresholds and
pages without anyone running triage by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from advisor.catalog.vllm_metrics import NEWEST, version_text
from advisor.catalog.vllm_versions import OLDEST_VLLM, parse_version
from advisor.cli.output import print_json, say
from advisor.cli.output_paths import check_output_file, write_or_rescue
from advisor.errors import EXIT_FINDINGS, UserError
from advisor.oncall.alert_pack import DEFAULT_RUNBOOK_BASE, PackSettings, alert_slos, prometheus_rule, rules_file
from advisor.oncall.rules_lint import lint_file
from loadtest.slo import parse_slos
from rules.catalog.common import DEFAULT_ITL_SLO_S, DEFAULT_TTFT_SLO_S

FORMATS = ("rules", "prometheusrule")
# The latency SLO terms the pack can alert on: the p99 of TTFT and of ITL, as the rules read them.
SLO_TERMS = {("ttft", "p99"): "ttft_slo_s", ("itl", "p99"): "itl_slo_s"}


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "alerts",
        help="export the rule catalog as a Prometheus alert pack (rules file or PrometheusRule)",
        description="Alerts for the on-call stack, generated from the rule catalog.",
    )
    actions = parser.add_subparsers(dest="alerts_action", metavar="ACTION")
    _add_export(actions)
    _add_lint(actions)
    return parser


def _add_export(actions: Any) -> None:
    """`servops alerts export`: the pack, as a rules file or a PrometheusRule, with the team's SLOs and runbooks."""
    export = actions.add_parser(
        "export",
        help="write the alert pack",
        description=(
            "Write every alert the rule catalog states over vLLM's /metrics series: the engine stall (HL-1), "
            "TTFT and ITL p99 over the SLO, failed and aborted requests (these page: severity critical), "
            "queueing, a full KV cache, preemptions (warning) and a low prefix-cache hit rate (info). Each "
            "alert carries the labels severity and rule (the servops code) and the annotations summary, "
            "description (with the measured value) and runbook_url (the rule's page). Expressions accept the "
            "old and the new names of renamed vLLM metrics, and stay silent on idle servers. Check it with "
            "`promtool check rules FILE`."
        ),
    )
    export.add_argument(
        "--format",
        choices=FORMATS,
        default="rules",
        help="rules: a Prometheus rules file (groups:) for rule_files, promtool, Thanos or Mimir; "
        "prometheusrule: the Prometheus Operator's custom resource with the same groups under spec "
        "(default: rules)",
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write the pack here (default: stdout)")
    export.add_argument(
        "--slo",
        help=f"latency targets the symptom alerts page on, e.g. ttft_p99=2s,itl_p99=100ms "
        f"(default: TTFT p99 {DEFAULT_TTFT_SLO_S:g} s, ITL p99 {DEFAULT_ITL_SLO_S * 1000:g} ms, the rules' own)",
    )
    export.add_argument(
        "--runbook-base",
        default=DEFAULT_RUNBOOK_BASE,
        metavar="URL",
        help="where your team serves servops's docs/ folder; each alert links to its rule's heading in "
        f"rule-pages.md there (default: {DEFAULT_RUNBOOK_BASE}, the folder in this repository)",
    )
    export.add_argument("--name", default="servops-vllm", help="prometheusrule: metadata.name (default: servops-vllm)")
    export.add_argument("--namespace", help="prometheusrule: metadata.namespace (default: none, the kubectl context's)")
    export.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="prometheusrule: a metadata label the Prometheus ruleSelector matches, e.g. "
        "release=kube-prometheus-stack (repeatable)",
    )
    export.add_argument("--json", action="store_true", help="print the pack as JSON instead of YAML")


def _add_lint(actions: Any) -> None:
    """`servops alerts lint`: other people's rules and dashboards checked against vLLM's series."""
    lint = actions.add_parser(
        "lint",
        help="check rules files or Grafana dashboards that query vLLM against what vLLM exposes",
        description=(
            "Check Prometheus rules files, PrometheusRule resources and Grafana dashboard JSON that query vllm: "
            "series against the families each vLLM version exposes: series that do not exist (a counter without "
            "_total, a histogram by its base name), renamed or removed series, rate() over a gauge, "
            "histogram_quantile over anything but _bucket, thresholds between two bucket bounds, alerts without "
            "for: and without a runbook_url (or with a local one that is not there). One line per problem with "
            "its fix; exit 1 when there is any, 0 when clean, 2 for a file it cannot read."
        ),
    )
    lint.add_argument("files", nargs="+", metavar="FILE", help="rules YAML, PrometheusRule YAML or dashboard JSON")
    newest = version_text(NEWEST)
    lint.add_argument(
        "--vllm-version",
        metavar="VERSION",
        help=f"the vLLM your servers run, e.g. {newest} (default: any {OLDEST_VLLM}–{newest})",
    )


def run(args: argparse.Namespace) -> int:
    if args.alerts_action == "lint":
        return _lint(args)
    if args.alerts_action != "export":
        raise UserError("give an action: `servops alerts export` or `servops alerts lint` (see --help)")
    check_output_file(args.output, "--output")
    settings = PackSettings(runbook_base=args.runbook_base, **_slo_targets(args.slo))
    for metric, (given, alerted) in alert_slos(settings).items():
        if alerted != given:
            say(
                f"note: the {metric.upper()} target {given:g} s lies between two bucket bounds of vLLM's histogram; "
                f"the alert reads p99 > {alerted:g} s, the bound above it (a quantile is exact only at a bound)",
                sys.stderr,
            )
    pack = (
        rules_file(settings)
        if args.format == "rules"
        else prometheus_rule(settings, args.name, args.namespace, _labels(args.label))
    )
    text = _json(pack) if args.json else yaml.safe_dump(pack, sort_keys=False, width=120, allow_unicode=True)
    if not args.output:
        print_json(text)
        return 0
    path = write_or_rescue(args.output, text, "--output")
    alerts = sum(len(group["rules"]) for group in rules_file(settings)["groups"])
    say(f"wrote {alerts} alerts ({args.format}) to {path}; check it with `promtool check rules`")
    return 0


def _lint(args: argparse.Namespace) -> int:
    version = parse_version(args.vllm_version, newest=version_text(NEWEST)) if args.vllm_version else None
    checked = [lint_file(Path(name), version) for name in args.files]
    problems = [problem for result in checked for problem in result.problems]
    for problem in problems:
        say(problem.line())
    queries = sum(result.queries for result in checked)
    say(f"{len(problems)} problem(s) in {queries} vLLM queries of {len(checked)} file(s)", sys.stderr)
    return EXIT_FINDINGS if problems else 0


def _slo_targets(text: str | None) -> dict[str, float]:
    """--slo as the pack's latency targets; a term the pack cannot alert on is named, not ignored."""
    targets: dict[str, float] = {}
    for slo in parse_slos(text):
        field = SLO_TERMS.get((slo.metric, slo.percentile))
        if field is None:
            known = ", ".join(f"{metric}_{pct}" for metric, pct in SLO_TERMS)
            raise UserError(f"--slo {slo.metric}_{slo.percentile}: the pack alerts on {known}; give those")
        targets[field] = slo.bound_s
    return targets


def _labels(pairs: list[str]) -> dict[str, str]:
    labels = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--label {pair!r}: give KEY=VALUE, e.g. release=kube-prometheus-stack")
        labels[key.strip()] = value.strip()
    return labels


def _json(pack: dict) -> str:
    return json.dumps(pack, indent=2) + "\n"
