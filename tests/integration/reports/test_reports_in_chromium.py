"""Every report kind opens in a real headless Chromium: no console error, no network request.

Screenshots land in the pytest tmp dir (path printed) so a reviewer can look at them;
SERVOPS_SCREENSHOT_DIR=<dir> keeps them somewhere of your choosing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reports.render import render_html

from .chromium import Chromium, find_chromium

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"
KINDS = (
    "triage",
    "ramp",
    "advise",
    "demo",
    "tune",
    "recorded-demo-tiny",
    "recorded-tune-tiny",
    "recorded-advise-l4",
    "recorded-demo-smollm2",
)
CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (apt-get install chromium, or run scripts/install.sh as root)"
)


@pytest.fixture(scope="module")
def browser():
    with Chromium(CHROMIUM, timeout_s=90) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def shot_dir(tmp_path_factory) -> Path:
    chosen = os.environ.get("SERVOPS_SCREENSHOT_DIR")
    path = Path(chosen) if chosen else tmp_path_factory.mktemp("report-screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@needs_chromium
@pytest.mark.parametrize("kind", KINDS)
def test_report_loads_with_no_console_errors_and_no_network_requests(browser, shot_dir, tmp_path, kind):
    doc = json.loads((FIXTURES / f"{kind}.json").read_text(encoding="utf-8"))
    page_path = tmp_path / f"{kind}.html"
    page_path.write_text(render_html([doc]), encoding="utf-8")
    load = browser.load(page_path)
    shot = shot_dir / f"{kind}-report.png"
    shot.write_bytes(load.screenshot_png)
    print(f"screenshot: {shot}")
    assert load.loaded
    assert load.console_errors == []
    assert load.network_requests == []
    assert load.title.startswith("servops report")
    assert load.screenshot_png.startswith(b"\x89PNG") and len(load.screenshot_png) > 20_000


@needs_chromium
def test_the_checker_does_catch_a_network_request_and_a_console_error(browser, tmp_path):
    """Guards the test above: a page that fetches and logs an error must be reported as such."""
    page_path = tmp_path / "leaky.html"
    page_path.write_text(
        "<html><head><title>leaky</title></head><body>"
        '<img src="http://127.0.0.1:9/pixel.png">'
        '<script>console.error("deliberate")</script></body></html>',
        encoding="utf-8",
    )
    load = browser.load(page_path, settle_s=1.0)
    assert load.network_requests == ["http://127.0.0.1:9/pixel.png"]
    assert any("deliberate" in e for e in load.console_errors)


@needs_chromium
def test_ramp_report_text_is_visible_in_the_rendered_page(browser, tmp_path):
    doc = json.loads((FIXTURES / "ramp.json").read_text(encoding="utf-8"))
    page_path = tmp_path / "ramp.html"
    page_path.write_text(render_html([doc]), encoding="utf-8")
    load = browser.load(page_path)
    assert "Per-step results" in load.text_sample
    assert next(s["invalid_reason"] for s in doc["steps"] if not s["valid"]) in load.text_sample
