"""Triage's changes with predicted latency and throughput, against a ramp whose truth is known."""

from advisor.collect.server_args import parse_command
from advisor.perf.ranking import ChangeForecast
from advisor.perf.whatif import ServerContext
from advisor.triage.forecast import ForecastRequest, forecast_findings, rejections
from loadtest.slo import SLO
from rules.model import Category, ConfigChange, Finding, Severity
from tests.unit.advisor.perf.test_calibrate_and_predict import _measured


def _finding(rule: str, severity: Severity, change: ConfigChange) -> Finding:
    return Finding(rule=rule, severity=severity, category=Category.SATURATION, title=rule, changes=[change])


def test_the_model_picks_the_batch_size_predicts_its_effect_and_rejects_a_change_that_does_not_help():
    ramp = _measured(2)  # 1-16 streams against --max-num-seqs 2: requests queue from 4 streams on
    raise_seqs = _finding(
        "OP-5.2", Severity.HIGH, ConfigChange(flag="--max-num-seqs", current="2", proposed="4", reason="double it")
    )
    shrink_budget = _finding(
        "OP-5.1",
        Severity.HIGH,
        ConfigChange(flag="--max-num-batched-tokens", current="2048", proposed="256", reason="smaller steps"),
    )
    memory_only = _finding(
        "AP-1", Severity.LOW, ConfigChange(flag="--kv-cache-dtype", current="auto", proposed="fp8", reason="more KV")
    )
    findings = [shrink_budget, raise_seqs, memory_only]
    as_given = [f.model_dump() for f in findings]
    server = ServerContext(command=parse_command("vllm serve m --max-num-seqs 2"), kv_cache_tokens=65536)
    slos = [SLO(metric="ttft", percentile="p99", bound_s=1.0)]
    valued = forecast_findings(findings, ForecastRequest.for_document(ramp, "ramp.json", server, slos))
    assert [f.model_dump() for f in findings] == as_given  # the rules' findings are not edited
    rejected, notes = valued.rejected, valued.notes
    by_rule = {f.rule: f for f in valued.findings}
    shrink_budget, raise_seqs, memory_only = by_rule["OP-5.1"], by_rule[raise_seqs.rule], by_rule["AP-1"]
    findings = valued.findings
    change = raise_seqs.changes[0]
    assert int(change.proposed) > 4  # the model's best value, not the rule's doubling
    assert change.reason.startswith("the value the performance model predicts best")
    figures = change.predicted_effect.figures
    assert figures["safe_operating_point_after"] > figures["safe_operating_point_before"]
    assert figures["ttft_p99_s_after"] < figures["ttft_p99_s_before"]
    assert figures["output_tokens_per_s_after"] > figures["output_tokens_per_s_before"]
    assert "at offered 16: TTFT p99" in change.predicted_effect.text
    # a smaller token budget cannot raise capacity here: rejected, with the predicted reason
    assert shrink_budget.changes == []
    assert [r.change.flag for r in rejected] == ["--max-num-batched-tokens"]
    assert "not predicted to help" in rejected[0].reason
    # a change the model does not cover keeps its place and gets no latency prediction
    assert memory_only.changes[0].predicted_effect is None
    assert findings.index(raise_seqs) < findings.index(shrink_budget)  # same severity: predicted gain first
    assert any("cost fitted" in note for note in notes)


def test_triage_ramp_puts_the_prediction_beside_real_vllm_findings(tmp_path):
    """The recorded vLLM 0.32 preemption corpus: a one-step ramp fits loosely (its error is stated), so the
    rule's --max-num-seqs stands and carries the predicted figures instead of being re-valued."""
    import json
    from pathlib import Path

    from advisor.cli.main import main

    corpus = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"
    out = tmp_path / "triage.json"
    code = main(
        [
            "triage",
            "--metrics",
            str(corpus / "preempting_before.prom"),
            "--metrics",
            str(corpus / "preempting_after.prom"),
            "--metrics-interval",
            "10",
            "--logs",
            str(corpus / "preempting.log"),
            "--ramp",
            str(corpus / "preempting_ramp.json"),
            "--json",
            str(out),
        ]
    )
    assert code == 0
    document = json.loads(out.read_text())
    op53 = next(f for f in document["findings"] if f["rule"] == "OP-5.3")
    change = next(c for c in op53["changes"] if c["flag"] == "--max-num-seqs")
    figures = change["predicted_effect"]["figures"]
    assert {"output_tokens_per_s_before", "output_tokens_per_s_after", "relative_error"} <= set(figures)
    assert figures["relative_error"] > 0.25 and change["proposed"] == "3"
    assert any("rules' changes stand as proposed" in note for note in document["notes"])


def test_the_report_lists_the_changes_the_model_rejected():
    from reports.render import render_html

    document = {
        "kind": "triage",
        "findings": [],
        "rejected_changes": [
            {
                "rule": "OP-5.1",
                "reason": "not predicted to help: safe operating point unchanged at 4",
                "change": {
                    "flag": "--max-num-batched-tokens",
                    "current": "2048",
                    "proposed": "<b>256</b>",
                    "reason": "x",
                },
            }
        ],
    }
    page = render_html([document])
    assert "Changes the performance model rejected" in page and "safe operating point unchanged at 4" in page
    assert "&lt;b&gt;256&lt;/b&gt;" in page


def test_a_value_below_what_the_server_runs_says_why_and_what_throughput_it_costs():
    """An ITL target that 32 running sequences miss: the model's best cap is below the 32 the server runs
    successfully, so the change names the predicted gain and the tokens/s it gives up."""
    ramp = _measured(32)  # ITL p99 24 ms at 1 stream, 181 ms at 16
    cap = _finding(
        "OP-5.4",
        Severity.HIGH,
        ConfigChange(flag="--max-num-seqs", current="32", proposed="16", reason="cap the batch"),
    )
    server = ServerContext(command=parse_command("vllm serve m --max-num-seqs 32"), kv_cache_tokens=65536)
    slos = [SLO(metric="itl", percentile="p99", bound_s=0.12)]
    [cap] = forecast_findings([cap], ForecastRequest.for_document(ramp, "ramp.json", server, slos)).findings
    [change] = cap.changes
    assert int(change.proposed) < 32
    assert "below the 32 the server runs now because safe operating point" in change.reason
    figures = change.predicted_effect.figures
    assert figures["output_tokens_per_s_after"] < figures["output_tokens_per_s_before"]
    assert (
        f"throughput {figures['output_tokens_per_s_before']:.0f} → {figures['output_tokens_per_s_after']:.0f}"
        in change.cost
    )


def _verdict(value: str, helps: bool, nominal: bool, decision: str) -> ChangeForecast:
    change = {"flag": "--max-num-seqs", "current": "2", "proposed": value, "reason": "searched"}
    return ChangeForecast(
        rule="OP-5.2",
        changes=[change],
        helps=helps,
        helps_at_nominal_ranks=nominal,
        decision=decision,
        prediction={"steps": []},
    )


def test_a_rejected_change_lists_the_models_closest_value_beside_it_when_one_came_near():
    """No value of the flag helps at every reading; 8 helps at the percentiles' nominal ranks but not a
    half-point away. The rule's 4 is rejected with its own figures, and 8 is listed beside it as the
    model's closest value, each with the command that gives its figures."""
    finding = _finding(
        "OP-5.2", Severity.HIGH, ConfigChange(flag="--max-num-seqs", current="2", proposed="4", reason="double it")
    )
    ranked = [
        _verdict("8", helps=False, nominal=True, decision="safe point 2 -> 4 at nominal ranks, 2 at p99.5"),
        _verdict("4", helps=False, nominal=False, decision="predicted not to help: safe point 2 -> 2"),
        _verdict("16", helps=False, nominal=False, decision="predicted not to help: safe point 2 -> 1"),
    ]
    listed = rejections(finding, finding.changes[0], ranked, lambda f: f"predict {f.changes[0]['proposed']}")
    assert [(r.change.proposed, r.reason, r.command) for r in listed] == [
        ("4", "predicted not to help: safe point 2 -> 2", "predict 4"),
        ("8", "the model's closest value: safe point 2 -> 4 at nominal ranks, 2 at p99.5", "predict 8"),
    ]
    # The closest value is the rule's own: listed once.
    ranked[0].changes[0]["proposed"] = "4"
    assert len(rejections(finding, finding.changes[0], ranked[:1], lambda f: None)) == 1
    # Its own value never predicted: the flag's worst loser gives the reason.
    assert rejections(finding, finding.changes[0], ranked[2:], lambda f: None)[0].reason.endswith("2 -> 1")
