"""Scheduled triage's findings posted to Alertmanager, for teams without Prometheus rules.

Alertmanager's v2 API (`POST /api/v2/alerts`) takes a list of alerts, each identified by its labels;
a client re-sends the alerts still active on every run and gives each an `endsAt` beyond the next
run, so one that stops being sent resolves by itself, and sends a finding that is gone with
`endsAt` now, so it resolves at once. Labels and annotations are the alert pack's: `alertname`,
`rule` and `severity` (mapped as the pack maps them), the server as `target`; `summary`, a
`description` holding the finding's title with its measured value, and `runbook_url`. Every text
goes through the one redaction.

Prometheus recommends alerting rules over clients that post alerts (`servops alerts export`); this
is for where no Prometheus evaluates rules.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from advisor.errors import UserError
from advisor.oncall.alert_pack import runbook_url, summary
from advisor.redact import redact
from rules.alerts import alert_severity, client_alert_name
from rules.catalog import UnknownRuleError, get_rule
from rules.model import Finding

# An alert stays active this many run intervals after its last post (a run that is late or fails
# once does not resolve it; one that stops finding it does, at once).
VALID_FOR_RUNS = 3


class AlertmanagerClient:
    """Posts each run's findings; remembers what it posted so a finding that is gone resolves."""

    def __init__(self, url: str, runbook_base: str, every_s: float, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.runbook_base = runbook_base
        self.valid_for = timedelta(seconds=VALID_FOR_RUNS * every_s)
        self.timeout_s = timeout_s
        self.active: dict[tuple[str, str], dict] = {}  # (rule, target) -> the alert last posted

    def check(self) -> None:
        """Alertmanager answers at `url`, or one line naming it and the fix (before the first run)."""
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/status", timeout=self.timeout_s) as response:
                json.loads(response.read() or b"{}")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise UserError(
                f"--alertmanager {self.url}: no Alertmanager answers at {self.url}/api/v2/status ({reason}); "
                "start it or fix the URL (e.g. http://127.0.0.1:9093)"
            ) from None

    def post(self, findings: Iterable[Finding], target: str) -> str | None:
        """Send this run's findings and resolve the ones gone; the error text when Alertmanager did not
        take them (the schedule goes on, and the next run sends them again)."""
        now = datetime.now(timezone.utc)
        current = {(f.rule, target): self._alert(f, target, now) for f in findings}
        for key, alert in current.items():
            if key in self.active:
                alert["startsAt"] = self.active[key]["startsAt"]
        resolved = [{**alert, "endsAt": now.isoformat()} for key, alert in self.active.items() if key not in current]
        body = json.dumps([*current.values(), *resolved]).encode()
        request = urllib.request.Request(
            f"{self.url}/api/v2/alerts", data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s):
                pass
        except (urllib.error.URLError, OSError) as exc:
            return f"Alertmanager {self.url} did not take {len(current)} alert(s): {getattr(exc, 'reason', exc)}"
        self.active = current
        return None

    def _alert(self, finding: Finding, target: str, now: datetime) -> dict:
        try:
            rule = get_rule(finding.rule)
            title, runbook = summary(rule), runbook_url(rule, self.runbook_base)
        except UnknownRuleError:
            title, runbook = finding.rule, self.runbook_base
        return {
            "labels": {
                "alertname": client_alert_name(finding.rule),
                "rule": finding.rule,
                "severity": alert_severity(finding.severity),
                "target": redact(target),
            },
            "annotations": {
                "summary": title,
                "description": redact(finding.title),
                "runbook_url": runbook,
            },
            "startsAt": now.isoformat(),
            "endsAt": (now + self.valid_for).isoformat(),
        }
