"""Predictions in the report: `servops predict` documents, and tune/demo rounds checked against measurement.

The documents come from the real performance model run on recorded ramps (see conftest), so the report
is tested against the fields advisor.perf and advisor.perf.ranking actually write.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from markupsafe import escape  # the report's own escaper (Jinja's)

from advisor.cli.main import main
from reports.render import format_number, format_percent, render_html

from .conftest import (
    demo_with_prediction,
    load_fixture,
    prediction_document,
    tune_with_predictions,
)


@pytest.fixture(scope="module")
def prediction() -> dict:
    return prediction_document()


@pytest.fixture(scope="module")
def prediction_page(prediction) -> str:
    return render_html([prediction])


@pytest.fixture(scope="module")
def tune() -> dict:
    return tune_with_predictions()


@pytest.fixture(scope="module")
def tune_page(tune) -> str:
    return render_html([tune])


def _ms(seconds: float) -> str:
    return format_number(seconds * 1000.0)


def _assert_self_contained(page: str) -> None:
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert not re.search(r"https?://(?!127\.0\.0\.1)", page), "no URL except the measured target's text"
    assert not re.search(r"(src|href)=\"(?!#)", page)
    assert page.count("<html") == 1


def test_prediction_document_renders_self_contained(prediction_page):
    _assert_self_contained(prediction_page)
    assert "Performance prediction (what-if)" in prediction_page


def test_prediction_shows_the_change_as_a_flag_diff(prediction_page):
    assert '<div class="removed">- --max-num-seqs 1</div>' in prediction_page
    assert '<div class="added">+ --max-num-seqs 4</div>' in prediction_page


def test_prediction_table_puts_baseline_beside_predicted_with_the_band(prediction, prediction_page):
    table = prediction_page[prediction_page.index('<table class="steps prediction">') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr class=") == len(prediction["steps"])
    top, base, band = prediction["steps"][-1], prediction["baseline"]["steps"][-1], prediction["bands"][-1]
    ttft = (
        f"<td>{_ms(base['ttft_s']['p99'])}</td><td><b>{_ms(top['ttft_s']['p99'])}</b><br>"
        f'<span class="muted band"[^>]*>{_ms(band["ttft_p99"]["low"])}–{_ms(band["ttft_p99"]["high"])}</span>'
    )
    assert re.search(ttft, table)
    assert f"<b>{format_number(top['output_tokens_per_s'])}</b>" in table


def test_prediction_shows_knee_and_safe_point_measured_baseline_and_predicted(prediction, prediction_page):
    section = prediction_page[prediction_page.index("<h3>Knee and safe operating point</h3>") :]
    knee_row = re.search(r"<th class=\"text\">knee</th>(.*?)</tr>", section, re.DOTALL).group(1)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", knee_row)
    expected = [prediction["measured"]["knee"], prediction["baseline"]["knee"], prediction["knee"]]
    assert cells == [format_number(k["offered"]) if k else "none" for k in expected]
    assert f'title="{prediction["knee"]["reason"]}"' in section  # the reason on hover


def test_prediction_lists_the_calibrations_in_sample_error_per_row(prediction, prediction_page):
    section = prediction_page[prediction_page.index("Calibration: in-sample fit") :]
    rows = prediction["calibration"]["rows"]
    assert section.count("<tr><td>") == len(rows)
    for row in rows:
        assert f"<td>{format_percent(row['fitted'] / row['measured'] - 1)}</td>" in section
    assert f"±{format_percent(prediction['cost']['relative_error'], signed=False)}" in prediction_page


def test_prediction_lists_its_notes(prediction, prediction_page):
    for note in prediction["notes"]:  # as the page escapes them (a note may say "the fit's ±19%")
        assert f"<li>{escape(note)}</li>" in prediction_page


def test_prediction_overlays_baseline_and_predicted_charts_with_the_band(prediction_page):
    assert prediction_page.count("<svg") == 3
    for title in (
        "TTFT p99, baseline vs predicted",
        "ITL p99, baseline vs predicted",
        "Output throughput, baseline vs predicted",
    ):
        assert title in prediction_page
    assert "(predicted, shaded: uncertainty)" in prediction_page


def test_servops_report_accepts_a_prediction_file(prediction, tmp_path):
    source = tmp_path / "prediction.json"
    source.write_text(json.dumps(prediction), encoding="utf-8")
    out = tmp_path / "report.html"
    assert main(["report", str(source), "-o", str(out)]) == 0
    assert "from <code>prediction.json</code>" in out.read_text(encoding="utf-8")


def test_tune_round_shows_each_figure_predicted_measured_and_error(tune, tune_page):
    rnd = tune["rounds"][0]
    section = tune_page[tune_page.index('id="round-1"') : tune_page.index('id="round-2"')]
    guess, real = rnd["predicted"]["steps"][0], rnd["ramp"]["steps"][0]
    error = rnd["prediction_error"]["steps"][0]["ttft_p50"]["error"]
    cells = (
        rf"<td>{_ms(guess['ttft_s']['p50'])}<br><span class=\"muted band\"[^>]*>[^<]*</span></td>"
        rf"<td>{_ms(real['ttft_s']['p50'])}</td><td>{re.escape(format_percent(error))}</td>"
    )
    assert re.search(cells, section), "predicted | measured | error, error as tune recorded it"


def test_tune_round_shows_the_recorded_median_errors_knee_and_safe_point(tune, tune_page):
    rnd = tune["rounds"][0]
    section = tune_page[tune_page.index('id="round-1"') : tune_page.index('id="round-2"')]
    medians = rnd["prediction_error"]["median_abs_error"]
    assert f"TTFT p50 {format_percent(medians['ttft_p50'], signed=False)}" in section
    assert f"output throughput {format_percent(medians['output_tokens_per_s'], signed=False)}" in section
    safe = re.search(r"safe operating point</th>\s*<td[^>]*>([^<]*)</td>\s*<td[^>]*>([^<]*)</td>", section)
    points = rnd["prediction_error"]["safe_operating_point"]
    assert safe.groups() == (format_number(points["predicted"]), format_number(points["measured"]))


def test_tune_round_charts_overlay_prediction_dashed_and_measurement(tune_page):
    section = tune_page[tune_page.index('id="round-1"') : tune_page.index('id="round-2"')]
    assert "TTFT p50, predicted vs measured" in section and "Output throughput, predicted vs measured" in section
    assert "TTFT p50 (predicted, shaded: uncertainty)" in section


def test_tune_rounds_table_shows_predicted_beside_measured_criterion_and_both_decisions(tune, tune_page):
    assert "<th>predicted after</th><th>measured after</th>" in tune_page
    rnd = tune["rounds"][0]
    assert f"<b>Predicted:</b> {rnd['predicted_decision']}" in tune_page
    assert f"<b>Measured:</b> {rnd['decision']}" in tune_page
    assert f"<b>Stopped:</b> {tune['stopped_reason']}" in tune_page


def test_tune_candidates_mark_the_tried_change_and_give_each_rejection_its_reason(tune):
    doc = copy.deepcopy(tune)
    rejected = {
        "rule": "OP-2",
        "title": "KV cache in fp8",
        "helps": False,
        "changes": [{"flag": "--kv-cache-dtype", "current": "auto", "proposed": "fp8"}],
        "rejected": "the performance model does not predict --kv-cache-dtype, so its effect is unknown",
    }
    doc["rounds"][0]["candidates"].append(rejected)
    page = render_html([doc])
    section = page[page.index('id="round-1"') : page.index('id="round-2"')]
    table = section[section.index("Candidate changes the model weighed") :]
    assert table.index('<span class="kept">tried</span>') < table.index("--kv-cache-dtype")
    assert '<span class="rolled-back">rejected</span>' in table
    assert rejected["rejected"] in table


def test_old_tune_document_without_prediction_fields_still_renders():
    doc = load_fixture("recorded-tune-tiny")
    assert "predicted" not in doc["rounds"][0]
    page = render_html([doc])
    _assert_self_contained(page)
    assert "Predicted vs measured" not in page and "Candidate changes" not in page
    assert "<th>criterion after</th>" in page and "predicted after" not in page
    assert page.count("TTFT (p50 dashed, p99 solid)") == 1 + len(doc["rounds"])  # baseline and each round's ramp


def test_demo_with_a_predicted_block_shows_the_after_ramp_predicted_vs_measured():
    doc = demo_with_prediction()
    page = render_html([doc])
    _assert_self_contained(page)
    section = page[page.index("<h3>After: predicted vs measured</h3>") :]
    assert "TTFT p50, predicted vs measured" in section
    medians = doc["prediction_error"]["median_abs_error"]
    assert f"ITL p50 {format_percent(medians['itl_p50'], signed=False)}" in section


def test_minimal_prediction_and_partial_round_fields_render_with_gaps():
    page = render_html(
        [
            {"kind": "prediction"},
            {
                "kind": "tune",
                "rounds": [
                    {
                        "round": 1,
                        "predicted": {"steps": [{"offered": 1}]},
                        "candidates": [{}],
                        "prediction_error": {"median_abs_error": None},
                    }
                ],
            },
            {"kind": "demo", "predicted": {"steps": "not a list"}},
        ]
    )
    assert "Performance prediction (what-if)" in page and "Predicted vs measured" in page


def test_hostile_strings_in_prediction_and_tune_fields_are_escaped(prediction, tune):
    hostile = "<script>alert(1)</script>"
    doc = copy.deepcopy(prediction)
    doc["notes"].append(hostile)
    doc["changes"] = [hostile]
    doc["knee"] = {"offered": 4, "reason": f'"{hostile}'}
    doc["calibration"]["rows"][0]["figure"] = hostile
    rounds = copy.deepcopy(tune)
    rounds["rounds"][0]["predicted_decision"] = hostile
    rounds["rounds"][0]["candidates"][0]["rejected"] = hostile
    rounds["rounds"][0]["candidates"][0]["rule"] = hostile
    page = render_html([doc, rounds])
    assert "<script" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 7
    assert 'title="&#34;&lt;script&gt;' in page  # an attribute's quote is escaped too


def test_errors_are_shown_as_signed_percentages():
    assert format_percent(0.123) == "+12%"
    assert format_percent(-0.054) == "-5.4%"
    assert format_percent(0.5, signed=False) == "50%"
    assert format_percent(None) == "–"


def test_prediction_shows_the_safe_point_at_each_quantile_edge(prediction, prediction_page):
    """The safe point with every percentile read half a rank either side, baseline and predicted: a
    gain that differs between the readings rests on a cliff in the tail."""
    section = prediction_page[prediction_page.index("<h3>Knee and safe operating point</h3>") :]
    assert [e["shift_points"] for e in prediction["edges"]] == [-0.5, 0.5]
    for edge, base in zip(prediction["edges"], prediction["baseline"]["edges"], strict=True):
        label = f"safe operating point, percentiles read {edge['shift_points']:+g} ranks"
        row = re.search(rf"<th class=\"text\">{re.escape(label)}[^<]*</th>(.*?)</tr>", section, re.DOTALL).group(1)
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        expected = [base["safe_operating_point"], edge["safe_operating_point"]]
        assert cells[1:] == [format_number(p["offered"]) if p else "none" for p in expected]
