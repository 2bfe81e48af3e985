"""Rendered fixture reports, built once per test session (charts take ~1 s each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.render import render_html

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"


def load_fixture(kind: str) -> dict:
    return json.loads((FIXTURES / f"{kind}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def rendered() -> dict[str, str]:
    """kind -> HTML of that fixture rendered alone."""
    return {kind: render_html([load_fixture(kind)]) for kind in ("triage", "ramp", "advise", "demo", "tune")}


RECORDED = ("recorded-triage-tiny", "recorded-ramp-tiny", "recorded-demo-tiny", "recorded-tune-tiny",
            "recorded-advise-l4", "recorded-demo-smollm2")


@pytest.fixture(scope="session")
def rendered_recorded() -> dict[str, str]:
    """name -> HTML of a fixture recorded from a real servops run (see fixtures README)."""
    return {name: render_html([load_fixture(name)]) for name in RECORDED}
