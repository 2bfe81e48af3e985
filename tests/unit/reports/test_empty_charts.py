"""A chart with nothing to draw says in words why, and draws no empty SVG (reports/charts.py).

Every case is one way a result file lacks a figure at every step: a target without /metrics,
a ramp where every request failed, one-token answers (no gaps), a ramp with no steps, a side
of a before/after or predicted/measured comparison that has no steps. The words are computed
in reports from what the JSON lacks (ramp_view.absence); the chart helper is the one place that
turns them into the note shown instead of the chart.
"""

from __future__ import annotations

import copy
import html
import re

from reports.charts import Series, line_chart
from reports.render import render_html

from .conftest import load_fixture

NO_METRICS = "the target exposed no /metrics during the ramp"


def _text(page: str) -> str:
    """The page's text with tags dropped and entities decoded, to search for sentences."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _without_metrics(ramp: dict) -> dict:
    for step in ramp["steps"]:
        step["server"] = None
    return ramp


def _ramp_where_every_request_failed() -> dict:
    ramp = load_fixture("ramp")
    for step in ramp["steps"]:
        step.update(ok_requests=0, errors={"http_500": step["requests"]}, output_tokens_per_s=0.0, goodput_rps=0.0)
        for key in ("ttft_s", "itl_s", "tpot_s", "e2e_s"):
            step[key] = dict.fromkeys(("p50", "p90", "p95", "p99"))
    return ramp


def test_the_helper_gives_words_and_no_svg_when_no_series_has_a_value():
    series = [
        Series("KV cache usage", [1, 2], [None, None], missing=NO_METRICS),
        Series("waiting", [1, 2], [None, None], missing=NO_METRICS),
    ]
    out = line_chart("Server KV usage", "load", "fraction", series, subject="server KV usage")
    assert "<svg" not in out
    assert _text(out) == f"No server KV usage: {NO_METRICS}."


def test_the_helper_names_each_series_it_leaves_out_under_a_drawn_chart():
    series = [Series("TTFT p50", [1, 2], [10.0, 20.0]), Series("TPOT p50", [1, 2], [None, None], missing="no tpot")]
    out = line_chart("Latency", "load", "ms", series)
    assert out.count("<svg") == 1 and "TPOT p50" not in out.split("</svg>")[0]  # not in the legend
    assert _text(out.split("</svg>", 1)[1]) == "Not drawn: TPOT p50 (no tpot)."


def test_the_helper_with_no_series_at_all_still_says_so():
    out = line_chart("Throughput", "load", "tokens/s", [])
    assert "<svg" not in out and _text(out) == "No throughput: no step has a value for it."


def test_a_ramp_against_a_target_without_metrics_says_so_instead_of_an_empty_server_chart():
    page = render_html([_without_metrics(load_fixture("ramp"))])
    assert f"No server KV usage, queue or preemptions: {NO_METRICS}." in _text(page)
    assert page.count("<svg") == 3  # latency, ITL/TPOT and throughput are still drawn
    assert "Server KV usage, queue and preemptions" not in page  # the empty chart's title never appears


def test_a_ramp_where_every_request_failed_says_so_instead_of_empty_latency_charts():
    page = render_html([_ramp_where_every_request_failed()])
    text = _text(page)
    assert "No TTFT: no request of the ramp succeeded." in text
    assert "No ITL and TPOT: no request of the ramp succeeded." in text
    assert page.count("<svg") == 2  # throughput (zeros are data) and server state


def test_one_token_answers_say_there_are_no_gaps_between_tokens():
    ramp = load_fixture("ramp")
    for step in ramp["steps"]:
        step["itl_s"] = step["tpot_s"] = dict.fromkeys(("p50", "p90", "p95", "p99"))
    text = _text(render_html([ramp]))
    assert (
        "No ITL and TPOT: no successful request of the ramp streamed more than one token, "
        "so there are no gaps between tokens."
    ) in text


def test_a_figure_an_older_file_lacks_is_named_under_the_chart_that_is_drawn():
    ramp = load_fixture("ramp")
    for step in ramp["steps"]:
        del step["tpot_s"]
    page = render_html([ramp])
    assert page.count("<svg") == 4
    assert "Not drawn: TPOT p50, TPOT p99 (the ramp records no tpot_s (an older or partial file))." in _text(page)


def test_a_ramp_without_steps_says_why_once_and_draws_nothing():
    page = render_html([{"kind": "ramp", "steps": [], "stopped_early": "every request of step 0 failed"}])
    assert "<svg" not in page
    assert "No charts: the ramp has no steps (stopped early: every request of step 0 failed)." in _text(page)


def test_demo_after_ramp_without_metrics_and_without_gaps_is_said_in_words():
    doc = load_fixture("demo")
    _without_metrics(doc["after"]["ramp"])
    for step in doc["after"]["ramp"]["steps"]:
        step["itl_s"] = dict.fromkeys(("p50", "p90", "p95", "p99"))
    page = render_html([doc])
    text = _text(page)
    assert f"No server KV usage, queue or preemptions: {NO_METRICS}." in text
    assert (
        "Not drawn: ITL p99 (after) (no successful request of the after ramp streamed more than one token, "
        "so there are no gaps between tokens)."
    ) in text
    assert page.count("<svg") == 3 + 4 + 3  # overlays (ITL: before only) + before's 4 + after's 3


def test_demo_whose_after_ramp_has_no_steps_says_so_in_the_overlays():
    doc = load_fixture("demo")
    doc["after"]["ramp"]["steps"] = []
    text = _text(render_html([doc]))
    assert "Not drawn: TTFT p99 (after) (the after ramp has no steps)." in text
    assert "Not drawn: output tokens/s (after) (the after ramp has no steps)." in text


def test_tune_round_ramp_without_metrics_says_so_in_its_section():
    doc = copy.deepcopy(load_fixture("tune"))
    _without_metrics(doc["rounds"][0]["ramp"])
    page = render_html([doc])
    section = _text(page[page.index('id="round-1"') : page.index('id="round-2"')])
    assert f"No server KV usage, queue or preemptions: {NO_METRICS}." in section


def test_prediction_without_steps_and_with_one_side_missing_is_said_in_words():
    assert "No charts: the prediction has no steps." in _text(render_html([{"kind": "prediction"}]))
    predicted = {
        "kind": "prediction",
        "steps": [
            {"offered": 1, "ttft_s": {"p99": 0.1}, "itl_s": {"p99": 0.01}, "output_tokens_per_s": 10.0},
            {"offered": 2, "ttft_s": {"p99": 0.2}, "itl_s": {"p99": 0.02}, "output_tokens_per_s": 18.0},
        ],
    }
    page = render_html([predicted])
    assert page.count("<svg") == 3
    assert "Not drawn: TTFT p99 (baseline) (the baseline ramp has no steps)." in _text(page)


def test_tune_round_predicted_but_not_measured_says_the_measured_ramp_has_no_steps():
    doc = {
        "kind": "tune",
        "rounds": [
            {
                "round": 1,
                "predicted": {
                    "steps": [
                        {"offered": 1, "ttft_s": {"p50": 0.1}, "itl_s": {"p50": 0.01}, "output_tokens_per_s": 10.0}
                    ]
                },
            }
        ],
    }
    text = _text(render_html([doc]))
    assert "Not drawn: TTFT p50 (measured) (the measured ramp has no steps)." in text


def test_triage_and_advise_pages_draw_no_chart_that_could_be_empty():
    """The survey behind the helper: only ramp-shaped data is charted; triage and advise have tables and a bar."""
    for kind in ("triage", "advise"):
        assert "<svg" not in render_html([load_fixture(kind)])
