"""AL-1: an alert of servops's own, pasted back from the page that announced it.

Why a rule of its own: on call, the first text about an incident is the notification Alertmanager sent (an email,
a PagerDuty incident, a chat message). Every alert servops's pack and its Alertmanager client send carries the
code of the rule it states (the `rule` label) and a name the catalog knows, so the notification says which rule
fired: its page is the runbook, and its fix is the first thing to try. What the notification cannot hold is the
server's state now, which a triage of it (live, or over the alert's window in Prometheus) reads with the numbers
a flag change needs; the finding says how, with the server's address and Prometheus' as the notification gives
them. Alertmanager's default templates (template/default.tmpl) write the subject as
`[FIRING:n] <grouping label values> (<other common label values>)` and each alert's labels and annotations as
` - name = value` lines, with a `Source:` link to the expression in Prometheus.

Built over the catalog it reads (`notice_rule`), so the alerts it knows are the catalog's alerts and no list is
kept twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from rules.alerts import DEAD_MANS_SWITCH, DEAD_MANS_SWITCH_RULE, client_alert_name
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

CODE = "AL-1"
CATEGORY = Category.RELIABILITY
MAX_ALERTS = 5  # findings for one paste: a grouped notification can list many alerts of the same rule
# The `severity` label as the pack writes it (rules/alerts.py: alert_severity), back to a finding's severity.
_SEVERITY = {"critical": Severity.HIGH, "warning": Severity.MEDIUM, "info": Severity.LOW}
_HOST_PORT = re.compile(r"^[\w.-]+:\d{2,5}$")


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


@dataclass
class _Alert:
    """One alert of a notification, from the lines that came together."""

    status: str = "firing"
    name: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    lines: list[LogEvent] = field(default_factory=list)


def _alerts(events: list[LogEvent], names: set[str], codes: set[str]) -> list[_Alert]:
    """The alerts the lines hold, in order: an alert name starts one (unless it repeats the subject's), labels join
    the alert before them; the subject's status holds for every alert of its notification."""
    alerts: list[_Alert] = []
    status = "firing"
    for event in events:
        value = event.message or ""
        if event.label == "subject":
            status = event.alert_status or status
            alerts.append(_from_subject(event, value, status, names, codes))
        elif event.label == "section":  # the alerts under it are firing, or resolved, whatever the subject said
            status = event.alert_status or status
        elif event.label == "alertname":
            current = alerts[-1] if alerts else None
            if current is None or (current.name not in (None, value) or len(current.lines) > 1):
                alerts.append(_Alert(status=status))
            alerts[-1].name = value
            alerts[-1].lines.append(event)
        else:
            if not alerts:
                alerts.append(_Alert(status=status))
            alerts[-1].labels.setdefault(event.label or "", value)
            alerts[-1].lines.append(event)
    return alerts


def _from_subject(event: LogEvent, values: str, status: str, names: set[str], codes: set[str]) -> _Alert:
    """The subject lists label values without their names: the server's address is told by its shape, the alert's
    name and the rule's code by the catalog's."""
    tokens = [t.strip("(),") for t in values.split()]
    alert = _Alert(status=status, name=next((t for t in tokens if t in names), None), lines=[event])
    instance = next((t for t in tokens if _HOST_PORT.match(t)), None)
    if instance:
        alert.labels["instance"] = instance
    target = next((t for t in tokens if _is_url(t)), None)
    if target:  # the client's alerts and the dead-man's switch name the triaged target by its URL
        alert.labels["target"] = target
    code = next((t for t in tokens if t in codes), None)
    if code:
        alert.labels["rule"] = code
    return alert


@dataclass(frozen=True)
class _Catalog:
    """What AL-1 knows of the catalog it reads back: each rule by its code and by its alerts' names."""

    by_code: dict[str, Rule]
    by_name: dict[str, Rule]

    @property
    def names(self) -> set[str]:
        return {*self.by_name, DEAD_MANS_SWITCH}


def _check(catalog: _Catalog, facts: Facts) -> list[Finding]:
    notices = facts.events_of(LogEventKind.ALERT_NOTICE)
    if not notices:
        return []
    prometheus = next((e.message for e in notices if e.label == "source" and e.message), None)
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for alert in _alerts(notices, catalog.names, set(catalog.by_code)):
        label = alert.labels.get("rule")
        if alert.name == DEAD_MANS_SWITCH or label == DEAD_MANS_SWITCH_RULE:
            finding = _stale_triage(alert)
        else:
            rule = catalog.by_code.get(label or "") or catalog.by_name.get(alert.name or "")
            finding = _fired(alert, rule, prometheus) if rule is not None else None
        where = alert.labels.get("instance") or alert.labels.get("target") or ""
        if finding is not None and (finding.title, where) not in seen:
            seen.add((finding.title, where))
            findings.append(finding)
    return findings[:MAX_ALERTS]


PAGE = RulePage(
    checks="An Alertmanager notification of servops's alerts (`servops alerts export`'s pack, or "
    "`--alertmanager`'s findings): the subject `[FIRING:1] VllmKvCacheFull (…)` or `[RESOLVED] …`, the "
    "body's ` - alertname = …`, ` - rule = OP-5.2`, ` - instance = …`, ` - description = …` lines and its "
    "`Source:` link, or one of the pack's alert names on any other line (`amtool alert query`, a chat "
    "message).",
    why="The page is the first text of an incident an on-call engineer has. The alert names the rule it "
    "states, whose page is the runbook; the server's state now, with the numbers a flag change needs, is in "
    "a triage of the server the alert names.",
    example="`[FIRING:1] VllmKvCacheFull (10.0.0.5:8000 Qwen/Qwen2.5-7B-Instruct OP-5.2 warning)`: OP-5.2's "
    "fix, and `servops triage --endpoint http://10.0.0.5:8000` for the change to make.",
    fix="The alerted rule's own fix, after a triage of the server it names (live, or over the alert's "
    "window with --prometheus).",
    limits="Reads servops's alerts only: another pack's names say nothing of which rule they state. The "
    "notification holds no flag values, so no change is proposed from it alone; a resolved alert is "
    "reported at the lowest severity.",
    references=[
        "https://prometheus.io/docs/alerting/latest/notifications/",
        "https://github.com/prometheus/alertmanager/blob/main/template/default.tmpl",
    ],
)


def notice_rule(catalog: Sequence[Rule]) -> Rule:
    """AL-1 over `catalog`: the rules whose alerts it reads back (by their codes, their alerts' names in the
    pack, and the names the Alertmanager client posts them under)."""
    known = _Catalog(
        by_code={rule.code: rule for rule in catalog},
        by_name={alert.name: rule for rule in catalog for alert in rule.alerts}
        | {client_alert_name(rule.code): rule for rule in catalog},
    )
    return Rule(
        code=CODE,
        title="an alert of servops's own fired (its notification, pasted)",
        category=CATEGORY,
        check=partial(_check, known),
        needs=("events",),
        page=PAGE,
    )


def _fired(alert: _Alert, rule: Rule, prometheus: str | None) -> Finding:
    name = alert.name or next((a.name for a in rule.alerts), None) or client_alert_name(rule.code)
    instance, target = alert.labels.get("instance"), alert.labels.get("target")
    where = f" on {instance or target}" if instance or target else ""
    resolved = alert.status == "resolved"
    said = alert.labels.get("description")
    title = (
        f"servops alert {name} has resolved{where} ({rule.code} {rule.title}): nothing to do unless it fires again"
        if resolved
        else f"servops alert {name} is firing{where}: {rule.code} {rule.title}"
    )
    declared = next(
        (a.severity for a in rule.alerts if a.name == name), rule.alerts[0].severity if rule.alerts else None
    )
    severity = _SEVERITY.get(alert.labels.get("severity", ""), declared or Severity.MEDIUM)
    return _finding(
        Severity.INFO if resolved else severity,
        title,
        summary=(f"The alert says: {said.rstrip('.')}. " if said else "")
        + f"{rule.page.why} The notification is Prometheus' measurement over the alert's window; a triage of the "
        "server reads whether it still holds, with the numbers a change needs.",
        evidence=[c.log_evidence(alert.lines[0], name="alert", value=name)]
        + [c.log_evidence(e, name="alert description") for e in alert.lines if e.label == "description"][:1],
        actions=_actions(alert, rule, prometheus),
        confidence=0.6 if resolved else 0.7,
    )


def _actions(alert: _Alert, rule: Rule, prometheus: str | None) -> list[str]:
    """`prometheus`: Prometheus' address, from the alert's Source link."""
    instance, target = alert.labels.get("instance"), alert.labels.get("target")
    actions = []
    if instance:
        window = (
            f", or over the alert's window: `servops triage --prometheus {prometheus} --selector "
            f"'{{instance=\"{instance}\"}}'`"
            if prometheus
            else ""
        )
        actions.append(f"Triage the server now: `servops triage --endpoint http://{instance}`{window}.")
    elif target and _is_url(target):
        actions.append(f"Triage the server now: `servops triage --endpoint {target}` (the target the alert names).")
    else:
        actions.append("Triage the server the alert names: `servops triage --endpoint http://<host:port>`.")
    actions.append(f"{rule.code}'s fix: {rule.page.fix}")
    runbook = alert.labels.get("runbook_url")
    actions.append(f"Its runbook: {runbook}." if runbook else f"Its runbook: `servops rules explain {rule.code}`.")
    return actions


def _stale_triage(alert: _Alert) -> Finding:
    target = alert.labels.get("target")
    of = f" of {target}" if target else ""
    resolved = alert.status == "resolved"
    return _finding(
        Severity.INFO if resolved else Severity.MEDIUM,
        f"servops's scheduled triage{of} has run again: its findings are current"
        if resolved
        else f"servops's scheduled triage{of} has not completed a run: its findings (and alerts) are stale",
        summary="The pack's dead-man's switch: the triage serving its metrics (`--every` with `--serve-metrics`) "
        "last succeeded too long ago, so the findings it exports, and the alerts built on them, describe an old "
        "state. Nothing is known of the server itself from this alert.",
        evidence=[c.log_evidence(alert.lines[0], name="alert", value=DEAD_MANS_SWITCH)],
        actions=[
            "Check the process running `servops triage --every … --serve-metrics …`: is it running, and what did "
            "its last run print (an unreachable server or Prometheus, a bad flag)?",
            "Until it runs again, triage the server by hand: `servops triage --endpoint http://<host:port>`.",
        ],
        confidence=0.7,
    )


def _finding(severity: Severity, title: str, **fields) -> Finding:
    """A finding of AL-1: the alerted rule is named in its title, the code it carries is AL-1's."""
    return Finding(rule=CODE, severity=severity, category=CATEGORY, title=title, **fields)
