"""Rendering result JSON into one self-contained HTML page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from reports.errors import ReportInputError
from reports.render import format_number, render_html

from .conftest import RECORDED, load_fixture

KINDS = ("triage", "ramp", "advise", "demo", "tune")


class _Collector(HTMLParser):
    """Tags with their attributes, and text, to assert on page structure."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data):
        self.text.append(data)


def _parse(html_text: str) -> _Collector:
    collector = _Collector()
    collector.feed(html_text)
    return collector


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_renders_without_any_external_reference(rendered, kind):
    page = rendered[kind]
    assert not re.search(r"https?://(?!127\.0\.0\.1)", page), "no URL except the measured target's text"
    parsed = _parse(page)
    for tag, attrs in parsed.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed", "img")
        for name in ("src", "href"):
            assert not attrs.get(name, "#").strip() or attrs.get(name, "#").startswith("#"), (tag, attrs)
    assert "@import" not in page


def test_chart_ids_are_unique_across_one_page(rendered):
    ids = re.findall(r'\bid="([^"]+)"', rendered["demo"])
    assert len(ids) == len(set(ids))


def test_triage_findings_keep_rank_order_with_severity_badges(rendered):
    page = rendered["triage"]
    order = [page.index(rule) for rule in ("OP-5.1", "AP-2", "OP-4.1")]
    assert order == sorted(order)
    assert 'class="badge critical"' in page and 'class="badge medium"' in page and 'class="badge info"' in page


def test_triage_shows_evidence_value_beside_threshold(rendered):
    text = " ".join(_parse(rendered["triage"]).text)
    assert "vllm:num_requests_waiting" in text
    row = re.search(r"vllm:num_requests_waiting</code></td>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>", rendered["triage"])
    assert row and row.group(1).strip() == "31" and row.group(2).strip() == "&gt; 1"


def test_triage_shows_proposed_command_as_flag_diff(rendered):
    page = rendered["triage"]
    assert '<div class="removed">- --max-num-seqs 1</div>' in page
    assert '<div class="added">+ --max-num-seqs 32</div>' in page


def test_triage_embeds_rule_page_and_points_to_explain_when_absent(rendered):
    page = rendered["triage"]
    assert "What it checks: requests wait while running" in page
    assert "servops rules explain OP-4.1" in page


def test_triage_without_current_command_rebuilds_it_from_the_changes():
    doc = load_fixture("triage")
    del doc["current_command"]
    page = render_html([doc])
    assert '<div class="removed">- --max-num-seqs 1</div>' in page
    assert (
        '<div class="added">+ --enable-prefix-caching</div>' not in page
        or "--enable-prefix-caching" in doc["proposed_command"]
    )


def test_ramp_table_has_one_row_per_step_and_greys_invalid_steps(rendered):
    doc = load_fixture("ramp")
    parsed = _parse(rendered["ramp"])
    rows = [attrs for tag, attrs in parsed.tags if tag == "tr" and "class" in attrs]
    invalid = [r for r in rows if "invalid" in r["class"].split()]
    assert len(invalid) == sum(not s["valid"] for s in doc["steps"])
    reason = next(s["invalid_reason"] for s in doc["steps"] if not s["valid"])
    assert reason in " ".join(parsed.text)


def test_ramp_marks_knee_and_safe_operating_point_in_table_and_charts(rendered):
    page = rendered["ramp"]
    assert re.search(r'<tr class="[^"]*\bknee\b', page)
    assert re.search(r'<tr class="[^"]*\bsafe\b', page)
    assert "knee (4)" in page and "safe operating point (2)" in page  # chart legends


def test_ramp_draws_latency_throughput_and_server_charts(rendered):
    page = rendered["ramp"]
    assert page.count("<svg") == 4
    for title in ("TTFT (p50 dashed, p99 solid)", "ITL and TPOT", "Throughput", "Server KV usage"):
        assert title in page


def test_ramp_lists_metric_formulas_with_the_documents_own_first(rendered):
    page = rendered["ramp"]
    assert "first streamed content token time − request send time, per request" in page
    assert "goodput_rps" in page


def test_ramp_latencies_are_shown_in_milliseconds(rendered):
    assert "<td>210</td>" in rendered["ramp"]  # step 0 TTFT p50 = 0.21 s


def test_advise_shows_fit_failure_and_memory_split(rendered):
    page = rendered["advise"]
    assert "does not fit" in page
    assert "models&#39;s max seq len (131072)" in page
    assert "kv_bytes_per_token" in page and "131,072" in page
    assert 'class="bar"' in page


def test_advise_memory_table_keeps_the_order_the_document_gives():
    # The report holds no list of the memory keys of its own: the advise JSON's order (the budget's) is the table's.
    doc = load_fixture("recorded-advise-l4")
    page = render_html([doc])
    scalar_keys = [k for k, v in doc["memory"].items() if not isinstance(v, (dict, list))]
    where = [page.index(f'<th class="text"><code>{k}</code></th>') for k in scalar_keys]
    assert len(scalar_keys) > 5 and where == sorted(where)


def test_demo_puts_before_and_after_side_by_side_with_comparison(rendered):
    page = rendered["demo"]
    side = page.index('class="side-by-side"')
    assert page.index("<h3>Before</h3>", side) < page.index("<h3>After</h3>", side)
    assert "safe operating point (req/s)" in page
    assert "Triage of the" in page
    assert page.count("<svg") == 3 + 2 * 4  # overlays + both ramps


def test_tune_shows_every_round_with_its_decision(rendered):
    doc = load_fixture("tune")
    page = rendered["tune"]
    for rnd in doc["rounds"]:
        assert f'id="round-{rnd["round"]}"' in page
        assert rnd["decision"].replace("≥", "≥") in page
    assert 'class="kept"' in page and 'class="rolled-back"' in page


def test_several_documents_share_one_page_with_a_table_of_contents():
    page = render_html([load_fixture("triage"), load_fixture("advise")])
    assert page.count("<html") == 1
    assert 'href="#triage-1"' in page and 'href="#advise-2"' in page


def test_minimal_documents_with_optional_fields_missing_still_render():
    page = render_html(
        [
            {"kind": "ramp", "steps": [{"offered": 1}]},
            {"kind": "triage"},
            {"kind": "advise"},
            {"kind": "demo"},
            {"kind": "tune"},
        ]
    )
    assert "none found within the ramp" in page
    assert "no findings" in page


def test_text_from_results_is_escaped_not_interpreted():
    doc = {"kind": "triage", "findings": [{"rule": "X-1", "severity": "warning", "title": "<script>alert(1)</script>"}]}
    page = render_html([doc])
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_unknown_kind_is_a_user_facing_error_naming_the_kind():
    with pytest.raises(ReportInputError, match="'profile'") as info:
        render_html([{"kind": "profile"}])
    assert info.value.user_facing is True


def test_no_documents_is_a_user_facing_error():
    with pytest.raises(ReportInputError):
        render_html([])


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_results_render_self_contained(rendered_recorded, name):
    page = rendered_recorded[name]
    assert "<script" not in page and not re.search(r"(src|href)=\"https?://", page)
    assert page.count("<html") == 1


def test_recorded_ramp_shows_every_measured_step_and_its_server_figures(rendered_recorded):
    doc = load_fixture("recorded-ramp-tiny")
    page = rendered_recorded["recorded-ramp-tiny"]
    assert page.count('<tr class="') == len(doc["steps"])
    assert "offered load (concurrent streams)" in page
    waiting = doc["steps"][-1]["server"]["waiting_mean"]
    assert f"<td>{format_number(waiting)}</td>" in page  # loadtest's *_mean spelling is read


def test_recorded_tune_lists_each_round_with_its_flag_change(rendered_recorded):
    doc = load_fixture("recorded-tune-tiny")
    page = rendered_recorded["recorded-tune-tiny"]
    for rnd in doc["rounds"]:
        change = rnd["change"]["changes"][0]
        assert f"<code>{change['flag']}</code> {change['current']} → <b>{change['proposed']}</b>" in page


def test_recorded_demo_comparison_rows_show_before_after_and_ratio(rendered_recorded):
    doc = load_fixture("recorded-demo-tiny")
    page = rendered_recorded["recorded-demo-tiny"]
    for row in doc["comparison"]:
        assert row["name"] in page


def test_recorded_advise_shows_memory_as_requested_and_with_the_recommended_command(rendered_recorded):
    doc = load_fixture("recorded-advise-l4")
    page = rendered_recorded["recorded-advise-l4"]
    assert "<h4>As requested</h4>" in page and "<h4>With the recommended command</h4>" in page
    assert f"Model <code>{doc['model']['name']}</code> on <code>{doc['gpu']['name']}</code>" in page
    assert "does not fit" in page


def test_ramp_column_headers_carry_their_formula(rendered):
    doc = load_fixture("ramp")
    assert f'<th title="{doc["metric_definitions"]["ttft_s"]}">TTFT p99</th>' in rendered["ramp"]
