"""The alert pack `servops alerts export` writes, checked and tested with the real promtool.

- `promtool check rules` on both forms (the PrometheusRule's `spec` extracted, as promtool needs);
- `promtool test rules` on situations recorded from real vLLM 0.32 (tests/fixtures/vllm_cpu) and the
  hand-made windows of newer and older versions (tests/fixtures/vllm), turned into input series by
  tests.helpers.alert_replays: at 50 minutes each alert fires on the situation its rule was written
  for, with exactly its labels, and stays silent on the others; its JUnit report goes to
  $SERVOPS_JUNIT_DIR when set (CI keeps it);
- the coverage: alerts with at least one firing and one silent test.

The expectations are the recordings' confirmed triage (each manifest's `top_rule`/`also`) and their
readings (KV usage 1.0 with 9 waiting; prefix-cache hits 0 of 1802 queries), written before the run:
an alert fires where its rule's finding is expected.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
import yaml

from advisor.cli.main import main
from advisor.oncall.alert_pack import PackSettings, pack_alerts, rules_file
from rules.alerts import alert_severity
from tests.helpers.alert_replays import Situation, promtool_tests

pytestmark = pytest.mark.integration

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed: scripts/install.sh installs Debian's prometheus package"
)
FIXTURES = Path(__file__).parents[2] / "fixtures"
CPU, OTHER = FIXTURES / "vllm_cpu", FIXTURES / "vllm"
EVAL_MIN = 50

TTFT, ITL, FAILING = "VllmTimeToFirstTokenHigh", "VllmInterTokenLatencyHigh", "VllmRequestsFailing"
QUEUE, KV_FULL, PREEMPT = "VllmRequestsQueueing", "VllmKvCacheFull", "VllmPreemptions"
PREFIX, STALL, CORRUPT = "VllmPrefixCacheHitRateLow", "VllmEngineStalled", "VllmCorruptedRequests"
QWEN = "Qwen/Qwen3-8B"


def _cpu(name: str, interval_s: float, expect: set[str], frozen: bool = False, label: str | None = None) -> Situation:
    return Situation(
        name=label or f"vllm 0.32 cpu {name}",
        before=CPU / f"{name}_before.prom",
        after=CPU / f"{name}_after.prom",
        interval_s=interval_s,
        expect=expect,
        frozen=frozen,
    )


def _other(name: str, expect: set[str], model: str = QWEN) -> Situation:
    return Situation(
        name=name,
        before=OTHER / f"{name}_before.prom",
        after=OTHER / f"{name}_after.prom",
        interval_s=10,
        expect=expect,
        model_name=model,
    )


SITUATIONS = [
    _cpu("idle", 8, set()),
    # healthy, but random prompts share nothing: 0 hits in 1802 queries is OP-4.1's low (info) finding
    _cpu("moderate", 8, {PREFIX}),
    _cpu("saturated", 8, {ITL, TTFT, PREFIX}),  # manifest: OP-5.4, also OP-5.1
    _cpu("saturated_steady", 30, {ITL, PREFIX}),  # manifest: OP-5.4
    # OP-5.3, also OP-5.2; KV 1.0 with 9 waiting. The symptoms are felt too: a request queues behind 7
    # running ones at ~4.7 engine steps/s (the recording's ramp), so TTFT p99 passes 2 s, and a step of 7
    # decodes is over 100 ms, so ITL p99 passes 0.1 s. (Written first as the manifest's rules only; the
    # symptom alerts page on the symptom whatever its cause, where OP-5.1 and OP-5.4 name one cause each.
    # Read straight from the two scrapes' bucket counts, neither promtool nor servops involved: no first
    # token of the window came within 5 s, the p99 lies in TTFT's (20, 40] s bucket; 18 of 667 gaps
    # were over 0.15 s, ITL's p99 lies in (0.5, 0.75]. Float32: TTFT (20, 40], ITL (2.5, 5]. v0.33's
    # preempting window: TTFT (5, 7.5].)
    _cpu("preempting", 8, {PREEMPT, QUEUE, KV_FULL, PREFIX, TTFT, ITL}),
    _cpu("preempting_float32", 8.035, {PREEMPT, QUEUE, KV_FULL, ITL, PREFIX, TTFT}),  # also OP-5.4; KV 0.93
    _cpu("chunked", 10, {TTFT, ITL, PREFIX}),  # OP-5.1, also OP-5.4
    # the stall HL-1 was written for: the steady 32-stream window with every counter still
    _cpu("saturated_steady", 30, {STALL}, frozen=True, label="engine stalled with 32 requests in it"),
    # three requests answered from NaN logits in the 8 s window (a checkpoint with a NaN norm weight): HL-8. The
    # prompts (about 10 tokens) fill no 128-token block, so no prefix is ever hit: OP-4.1's low rate too.
    _cpu("nan_logits", 8.006, {CORRUPT, PREFIX}),
    _other("v0_33_healthy", set()),
    # OP-5.3, also OP-5.2; hit rate 0.2; 14 requests queue behind a full cache: TTFT over 2 s as above
    _other("v0_33_preempting", {PREEMPT, QUEUE, KV_FULL, PREFIX, TTFT}),
    _other("v0_15_itl_load", {ITL}),  # OP-5.4; hit rate 0.4
    _other("v0_10_2_prefill", {TTFT, PREFIX}),  # OP-5.1, both metric spellings; hit rate 0.1
]


def _junit_flag(path: Path) -> list[str]:
    """`--junit PATH` where this promtool has it (Debian bookworm's 2.42 does not)."""
    usage = subprocess.run([PROMTOOL, "test", "rules", "--help"], capture_output=True, text=True, timeout=60)
    return ["--junit", str(path)] if "--junit" in usage.stdout + usage.stderr else []


def _write_junit(path: Path, names: list[str]) -> None:
    """A JUnit report of a promtool run that passed: every situation a passed case."""
    cases = "".join(f'  <testcase classname="promtool.alerts" name="{escape(name)}"/>\n' for name in names)
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="promtool test rules" tests="{len(names)}" '
        f'failures="0">\n{cases}</testsuite>\n'
    )


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@needs_promtool
def test_both_forms_pass_promtool_check_rules(tmp_path: Path):
    plain, resource = tmp_path / "pack.yml", tmp_path / "resource.yml"
    assert main(["alerts", "export", "-o", str(plain)]) == 0
    assert main(["alerts", "export", "--format", "prometheusrule", "--label", "release=kps", "-o", str(resource)]) == 0
    document = yaml.safe_load(resource.read_text())
    assert document["kind"] == "PrometheusRule" and document["metadata"]["labels"]["release"] == "kps"
    assert document["spec"] == yaml.safe_load(plain.read_text())  # one source, two forms
    spec = tmp_path / "spec.yml"
    spec.write_text(yaml.safe_dump(document["spec"]))
    for path in (plain, spec):
        done = _promtool("check", "rules", str(path), cwd=tmp_path)
        assert done.returncode == 0 and f"SUCCESS: {len(pack_alerts()) + 1} rules found" in done.stdout, done.stdout


def test_every_alert_carries_its_rules_labels_annotations_and_a_for_duration():
    pack = rules_file(PackSettings(runbook_base="https://runbooks.example/servops/docs"))
    alerts = [entry for group in pack["groups"] for entry in group["rules"]]
    assert {a["alert"] for a in alerts} >= {STALL, PREEMPT, TTFT, ITL, FAILING, QUEUE, KV_FULL, PREFIX}
    for rule, alert in pack_alerts():
        entry = next(a for a in alerts if a["alert"] == alert.name)
        assert entry["labels"] == {"severity": alert_severity(alert.severity), "rule": rule.code}
        assert entry["annotations"]["summary"] == f"{rule.code} {rule.title}"
        assert "{{ $value" in entry["annotations"]["description"]
        assert entry["annotations"]["runbook_url"].startswith("https://runbooks.example/servops/docs/rule-pages.md#")
        assert entry["for"] and "{slo_s}" not in entry["expr"]
    # symptoms page, causes do not
    severities = {a["alert"]: a["labels"]["severity"] for a in alerts}
    assert {severities[name] for name in (STALL, TTFT, ITL, FAILING)} == {"critical"}
    assert severities[PREEMPT] == severities[QUEUE] == severities[KV_FULL] == "warning"


def test_the_runbook_anchor_is_the_rule_pages_heading():
    text = (Path(__file__).parents[3] / "docs" / "rule-pages.md").read_text()
    for rule, _ in pack_alerts():
        assert f"## {rule.code}: {rule.title}\n" in text, rule.code


@needs_promtool
def test_each_alert_fires_on_its_situation_and_stays_silent_on_the_others(tmp_path: Path):
    # promtool compares annotations too, and a description holds the measured value: the firing tests
    # compare the labels of a copy without annotations (their text is tested above).
    pack = rules_file(PackSettings())
    for group in pack["groups"]:
        for entry in group["rules"]:
            entry.pop("annotations")
    (tmp_path / "pack.yml").write_text(yaml.safe_dump(pack, sort_keys=False))
    labels = {a.name: {"severity": alert_severity(a.severity), "rule": rule.code} for rule, a in pack_alerts()}
    tests = promtool_tests("pack.yml", SITUATIONS, labels, EVAL_MIN)
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    junit = Path(os.environ.get("SERVOPS_JUNIT_DIR", tmp_path)) / "promtool-alert-tests.xml"
    junit.parent.mkdir(parents=True, exist_ok=True)
    done = _promtool("test", "rules", *_junit_flag(junit), "tests.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    if not junit.exists():  # promtool before 2.47 has no --junit: the same verdicts, one case per situation
        _write_junit(junit, [s.name for s in SITUATIONS])
    fired = {name for s in SITUATIONS for name in s.expect}
    silent = {name for name in labels if any(name not in s.expect for s in SITUATIONS)}
    covered = sorted(fired & silent)
    print(f"\nalert coverage: {len(covered)} of {len(labels)} alerts have a firing and a silent test: {covered}")
    assert covered == sorted(set(labels) - {FAILING}), "every alert but the failing-requests one has both"


@needs_promtool
def test_the_public_packs_preemption_alert_never_fires_where_ours_does(tmp_path: Path):
    """vLLM's example pack (examples/online_serving/prometheus_grafana/k8s-monitoring/prometheusrule.yaml)
    and llm-d's query `vllm:num_preemptions`; vLLM exposes `vllm:num_preemptions_total`. On the
    recorded preempting server the public expression stays silent where the pack's fires."""
    public = {
        "groups": [
            {
                "name": "public",
                "rules": [
                    {"alert": "PublicPreemptions", "expr": "rate(vllm:num_preemptions[5m]) > 0", "for": "3m"},
                ],
            }
        ]
    }
    (tmp_path / "public.yml").write_text(yaml.safe_dump(public))
    preempting = next(s for s in SITUATIONS if s.name == "vllm 0.32 cpu preempting")
    tests = promtool_tests("public.yml", [preempting], {"PublicPreemptions": {}}, EVAL_MIN)
    tests["tests"][0]["alert_rule_test"][0]["exp_alerts"] = []  # it cannot fire: no such series
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    assert _promtool("test", "rules", "tests.yml", cwd=tmp_path).returncode == 0


@needs_promtool
def test_the_dead_mans_switch_fires_on_a_triage_that_stopped_succeeding(tmp_path: Path):
    """`ServopsTriageNotSucceeding`: a scheduled triage whose last success stays at minute 0 fires by
    minute 50; one that succeeds every 15 s stays silent."""
    (tmp_path / "pack.yml").write_text(yaml.safe_dump(rules_file(PackSettings()), sort_keys=False))
    name, labels = "ServopsTriageNotSucceeding", {"severity": "warning", "rule": "servops-triage"}
    series = 'servops_triage_last_success_timestamp_seconds{{target="{}",instance="servops:9109",job="servops"}}'
    stuck = {  # the annotations too: here the value, 50 minutes, is known
        "exp_labels": {**labels, "target": "stuck"},
        "exp_annotations": {
            "summary": "servops triage has not completed a run",
            "description": "The scheduled triage of stuck last succeeded 50m 0s ago; its findings "
            "(servops_triage_finding) are stale.",
            "runbook_url": "docs/oncall.md#findings-as-metrics",
        },
    }
    tests = {
        "rule_files": ["pack.yml"],
        "evaluation_interval": "30s",
        "tests": [
            {
                "interval": "15s",
                "input_series": [
                    {"series": series.format("stuck"), "values": "0+0x240"},
                    {"series": series.format("healthy"), "values": "0+15x240"},
                ],
                "alert_rule_test": [{"eval_time": "50m", "alertname": name, "exp_alerts": [stuck]}],
            }
        ],
    }
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    done = _promtool("test", "rules", "tests.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
