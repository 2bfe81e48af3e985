"""An Alertmanager notification of servops's own alerts, pasted back: what the page said.

At 3 a.m. the page is what the on-call engineer holds: an email, a PagerDuty incident or a chat message that
Alertmanager wrote with its default templates (template/default.tmpl): the subject
`[FIRING:2] <grouping label values> (<the other common label values>)` and, in the text body, each alert's
`Labels:` and `Annotations:` as ` - name = value` lines and a `Source:` link to the Prometheus expression. The
pack's alerts (rules/alerts.py, `servops alerts export`) and its Alertmanager client (`--alertmanager`) both label
each alert with the servops rule it states (`rule = OP-5.2`), so the lines name the rule whose page is the
runbook. Any other line that holds one of the pack's alert names (`amtool alert query`, a chat message, a Grafana
panel's title) is read as that alert.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Pattern, wording
from rules.alerts import CLIENT_ALERT_PREFIX, DEAD_MANS_SWITCH
from rules.catalog import ALL_RULES, FAMILIES
from rules.events import LogEventKind as K

# The labels and annotations servops's alerts carry that say which alert, which server and what it measured.
LABELS = ("alertname", "rule", "instance", "target", "model_name", "severity", "summary", "description", "runbook_url")
# Every name an alert of servops's can fire under: the pack's, its dead-man's switch, the client's one per rule.
PACK_NAMES = tuple(sorted({alert.name for rule in ALL_RULES for alert in rule.alerts} | {DEAD_MANS_SWITCH}))
_NAMES = "|".join(map(re.escape, PACK_NAMES)) + rf"|{CLIENT_ALERT_PREFIX}(?:{'|'.join(FAMILIES)})\d+(?:_\d+)?"

PATTERNS: tuple[Pattern, ...] = (
    wording(  # the subject: its status, then the label values the notification's alerts have in common
        ("[FIRING", "[RESOLVED"),
        K.ALERT_NOTICE,
        r"\[(?P<status>FIRING|RESOLVED)(?::\d+)?\]\s+(?P<values>\S.*)",
        lambda m: {"label": "subject", "message": m["values"].strip(), "alert_status": m["status"].lower()},
    ),
    wording(  # the chat templates' (Telegram, Discord) headings over the firing and the resolved alerts
        ("Alerts Firing:", "Alerts Resolved:"),
        K.ALERT_NOTICE,
        r"^\s*Alerts (?P<status>Firing|Resolved):\s*$",
        lambda m: {"label": "section", "alert_status": m["status"].lower()},
    ),
    wording(  # one label or annotation of an alert, as the text body lists them
        tuple(f"{name} = " for name in LABELS),
        K.ALERT_NOTICE,
        rf"^\s*-\s+(?P<name>{'|'.join(LABELS)}) = (?P<value>\S.*)$",
        lambda m: {"label": m["name"], "message": m["value"].strip()},
    ),
    wording(  # the link to the expression in Prometheus that fired (the alert's generatorURL): Prometheus' address
        ("Source: http",),
        K.ALERT_NOTICE,
        r"^\s*Source: (?P<base>https?://[^/\s?#]+)",
        lambda m: {"label": "source", "message": m["base"]},
    ),
    wording(  # one of servops's alert names on any other line
        (*PACK_NAMES, CLIENT_ALERT_PREFIX),
        K.ALERT_NOTICE,
        rf"\b(?P<name>{_NAMES})\b",
        lambda m: {"label": "alertname", "message": m["name"]},
    ),
)
