"""Every alert of the pack, as Alertmanager's own default templates write its notification, read back by triage.

The real amtool renders the notification (`amtool template render` with Alertmanager's template/default.tmpl,
the file its notifiers use when a receiver sets no template of its own): the subject that email, Slack, PagerDuty
and OpsGenie show, and the text body's label and annotation lines. The alerts' labels and annotations are the
ones `servops alerts export` writes (rules_file), with Prometheus' templating of the description filled in as a
firing alert would have it. Triage must name, for each, the rule the alert states and the server it fired on.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from advisor.cli.main import main
from advisor.collect.logs import parse_lines
from advisor.oncall.alert_pack import PackSettings, rules_file
from rules.alerts import DEAD_MANS_SWITCH
from rules.evaluate import evaluate
from rules.facts import Facts

pytestmark = pytest.mark.integration

AMTOOL = shutil.which("amtool")
# Where Debian's prometheus-alertmanager package installs Alertmanager's default notification templates.
DEFAULT_TEMPLATES = Path("/usr/share/prometheus/alertmanager/default.tmpl")
needs_amtool = pytest.mark.skipif(
    AMTOOL is None or not DEFAULT_TEMPLATES.exists(),
    reason="amtool or Alertmanager's default.tmpl not installed: scripts/install.sh installs Debian's "
    "prometheus-alertmanager",
)
INSTANCE, MODEL, TARGET = "10.0.0.5:8000", "Qwen/Qwen2.5-7B-Instruct", "http://10.0.0.5:8000"
PROMETHEUS = "http://prometheus.monitoring:9090"
# A pager's text: the subject, then every alert's labels and annotations (the email body's text part).
PAGE = '{{ template "__subject" . }}\n{{ template "__text_alert_list" .Alerts }}'
SUBJECT = '{{ template "pagerduty.default.description" . }}'


def _pack_entries() -> list[dict]:
    pack = rules_file(PackSettings(runbook_base="https://runbooks.example/servops/docs"))
    return [entry for group in pack["groups"] for entry in group["rules"]]


def _filled(text: str, labels: dict[str, str]) -> str:
    """Prometheus' templating of an annotation, as a firing alert renders it: labels, and a measured value."""
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m[1], ""), text)
    return re.sub(r"\{\{ \$value[^}]*\}\}", "0.97", text)


def _data(entry: dict, status: str) -> dict:
    """Alertmanager's template data for one alert of `entry`, grouped by alertname (its common route)."""
    server = {"target": TARGET} if entry["alert"] == DEAD_MANS_SWITCH else {"instance": INSTANCE, "model_name": MODEL}
    labels = {"alertname": entry["alert"], **entry["labels"], **server}
    annotations = {key: _filled(value, labels) for key, value in entry["annotations"].items()}
    alert = {
        "status": status,
        "labels": labels,
        "annotations": annotations,
        "startsAt": "2026-12-01T03:00:00Z",
        "endsAt": "2026-12-01T03:20:00Z" if status == "resolved" else "0001-01-01T00:00:00Z",
        "generatorURL": f"{PROMETHEUS}/graph?g0.expr=up&g0.tab=1",
        "fingerprint": "0123456789abcdef",
    }
    return {
        "receiver": "oncall",
        "status": status,
        "alerts": [alert],
        "groupLabels": {"alertname": entry["alert"]},
        "commonLabels": labels,
        "commonAnnotations": annotations,
        "externalURL": "http://alertmanager.monitoring:9093",
    }


def _render(template: str, data: dict, tmp_path: Path) -> str:
    data_file = tmp_path / "data.json"
    data_file.write_text(json.dumps(data))
    done = subprocess.run(
        [
            AMTOOL,
            "template",
            "render",
            f"--template.glob={DEFAULT_TEMPLATES}",
            f"--template.data={data_file}",
            f"--template.text={template}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def _read_back(text: str):
    return [f for f in evaluate(Facts(events=parse_lines(text.splitlines()).events)).findings if f.rule == "AL-1"]


@needs_amtool
@pytest.mark.parametrize("entry", _pack_entries(), ids=lambda entry: entry["alert"])
def test_every_alert_of_the_pack_is_read_back_from_its_notification(entry, tmp_path):
    page = _render(PAGE, _data(entry, "firing"), tmp_path)
    assert page.startswith(f"[FIRING:1] {entry['alert']} (")  # Alertmanager's own subject, not ours
    [finding] = _read_back(page)
    if entry["alert"] == DEAD_MANS_SWITCH:
        assert finding.title.startswith(f"servops's scheduled triage of {TARGET} has not completed a run")
        return
    rule = entry["labels"]["rule"]
    assert finding.title.startswith(f"servops alert {entry['alert']} is firing on {INSTANCE}: {rule} ")
    assert (
        finding.severity.name == {"critical": "HIGH", "warning": "MEDIUM", "info": "LOW"}[entry["labels"]["severity"]]
    )
    assert f"--prometheus {PROMETHEUS} --selector '{{instance=\"{INSTANCE}\"}}'" in finding.actions[0]
    assert finding.actions[2] == f"Its runbook: {entry['annotations']['runbook_url']}."
    [from_subject] = _read_back(_render(SUBJECT, _data(entry, "firing"), tmp_path))  # what PagerDuty shows
    assert from_subject.title == finding.title


@needs_amtool
def test_a_resolved_notification_and_the_cli_path(tmp_path):
    entry = next(e for e in _pack_entries() if e["alert"] == "VllmKvCacheFull")
    page = tmp_path / "page.txt"
    page.write_text(_render(PAGE, _data(entry, "resolved"), tmp_path))
    assert page.read_text().startswith("[RESOLVED] VllmKvCacheFull (")
    out = tmp_path / "triage.json"
    assert main(["triage", "--logs", str(page), "--json", str(out)]) == 0
    [top] = json.loads(out.read_text())["findings"][:1]
    assert top["rule"] == "AL-1" and top["severity"] == "info"
    assert top["title"].startswith(f"servops alert VllmKvCacheFull has resolved on {INSTANCE} (OP-5.2 ")
