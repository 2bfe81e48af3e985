"""AL-1: an alert of servops's own, read back from the notification an on-call engineer pastes.

The notification texts are Alertmanager's default templates as they render (template/default.tmpl: the subject,
`__text_alert_list`); tests/integration/oncall/test_alert_notice.py renders every alert of the pack with the real
amtool and reads each back.
"""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import get_rule
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts
from rules.model import Severity

KV_FULL_PAGE = """\
[FIRING:1] VllmKvCacheFull (10.0.0.5:8000 Qwen/Qwen2.5-7B-Instruct OP-5.2 warning)
Labels:
 - alertname = VllmKvCacheFull
 - instance = 10.0.0.5:8000
 - model_name = Qwen/Qwen2.5-7B-Instruct
 - rule = OP-5.2
 - severity = warning
Annotations:
 - description = 10.0.0.5:8000 (Qwen/Qwen2.5-7B-Instruct): KV cache 97.3% used (>= 90%) with requests waiting.
 - runbook_url = https://runbooks.example.com/servops/rule-pages.md#op-52-requests-queue-saturation
 - summary = OP-5.2 requests queue (saturation)
Source: http://prometheus.monitoring:9090/graph?g0.expr=avg+by+%28instance%29&g0.tab=1
"""


def _findings(text: str):
    return evaluate(Facts(events=parse_lines(text.splitlines()).events)).findings


def test_a_pasted_page_names_the_rule_the_server_and_both_triages_to_run():
    [finding] = _findings(KV_FULL_PAGE)
    assert finding.rule == "AL-1" and finding.severity is Severity.MEDIUM  # the alert's severity label: warning
    assert (
        finding.title == "servops alert VllmKvCacheFull is firing on 10.0.0.5:8000: OP-5.2 requests queue (saturation)"
    )
    assert "KV cache 97.3% used" in finding.summary and get_rule("OP-5.2").page.why in finding.summary
    assert finding.actions[0] == (
        "Triage the server now: `servops triage --endpoint http://10.0.0.5:8000`, or over the alert's window: "
        "`servops triage --prometheus http://prometheus.monitoring:9090 --selector '{instance=\"10.0.0.5:8000\"}'`."
    )
    assert finding.actions[1] == f"OP-5.2's fix: {get_rule('OP-5.2').page.fix}"
    assert finding.actions[2].startswith("Its runbook: https://runbooks.example.com/")
    assert not finding.changes  # a notification holds no flag values to change
    assert [e.location.rsplit(":", 1)[1] for e in finding.evidence] == ["1", "9"]


def test_the_subject_alone_is_enough():
    """PagerDuty's and OpsGenie's default description is the subject: label values without their names."""
    [finding] = _findings("[FIRING:1] VllmKvCacheFull (10.0.0.5:8000 Qwen/Qwen2.5-7B-Instruct OP-5.2 warning)")
    assert finding.title.startswith("servops alert VllmKvCacheFull is firing on 10.0.0.5:8000: OP-5.2")
    assert finding.actions[0] == "Triage the server now: `servops triage --endpoint http://10.0.0.5:8000`."


def test_a_resolved_alert_is_said_so_at_the_lowest_severity():
    [finding] = _findings("[RESOLVED] VllmKvCacheFull (10.0.0.5:8000 Qwen/Qwen2.5-7B-Instruct OP-5.2 warning)")
    assert finding.severity is Severity.INFO
    assert finding.title.endswith("(OP-5.2 requests queue (saturation)): nothing to do unless it fires again")


def test_an_alert_name_on_any_line_takes_the_severity_the_pack_gives_it():
    """`amtool alert query` prints a table of names, start times and summaries: no labels to read."""
    [finding] = _findings("VllmEngineStalled   2026-12-01 03:12:44 UTC   HL-1 engine hung (no progress)")
    stall = next(a for a in get_rule("HL-1").alerts if a.name == "VllmEngineStalled")
    assert finding.title == "servops alert VllmEngineStalled is firing: HL-1 engine hung (no progress)"
    assert finding.severity is stall.severity


def test_the_alertmanager_clients_names_are_read_back_to_their_rule():
    [finding] = _findings("[FIRING:1] ServopsOP5_3 (OP-5.3 warning http://10.0.0.5:8000)")
    assert finding.title.startswith("servops alert ServopsOP5_3 is firing on http://10.0.0.5:8000: OP-5.3")
    assert finding.actions[0].startswith("Triage the server now: `servops triage --endpoint http://10.0.0.5:8000`")


def test_the_dead_mans_switch_says_the_findings_are_stale_not_the_server():
    [finding] = _findings("[FIRING:1] ServopsTriageNotSucceeding (http://10.0.0.5:8000 servops-triage warning)")
    assert finding.title == (
        "servops's scheduled triage of http://10.0.0.5:8000 has not completed a run: its findings (and alerts) are "
        "stale"
    )
    assert "--serve-metrics" in finding.actions[0]


def test_a_grouped_notification_reads_each_alert_with_its_own_labels_and_status():
    """Discord's and Telegram's default message: the firing alerts, then the resolved ones, under headings."""
    text = """\
Alerts Firing:
Labels:
 - alertname = VllmRequestsQueueing
 - instance = 10.0.0.5:8000
 - rule = OP-5.2
 - severity = warning
Alerts Resolved:
Labels:
 - alertname = VllmTimeToFirstTokenHigh
 - instance = 10.0.0.6:8000
 - rule = OP-5.1
 - severity = critical
"""
    titles = [(f.severity, f.title) for f in _findings(text)]
    assert titles == [
        (
            Severity.MEDIUM,
            "servops alert VllmRequestsQueueing is firing on 10.0.0.5:8000: OP-5.2 requests queue (saturation)",
        ),
        (
            Severity.INFO,
            "servops alert VllmTimeToFirstTokenHigh has resolved on 10.0.0.6:8000 (OP-5.1 TTFT high "
            "while nothing queues (prefill-bound)): nothing to do unless it fires again",
        ),
    ]


def test_another_packs_alert_and_stray_labels_are_not_read_as_servops_alerts():
    text = "[FIRING:1] VLLMHighKVCacheUsage (vllm-0 critical)\n - severity = critical\n - instance = 10.0.0.5:8000\n"
    assert [e.kind for e in parse_lines(text.splitlines()).events] == [K.ALERT_NOTICE] * 3
    assert not [f for f in _findings(text) if f.rule == "AL-1"]
