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


RECORDED = (
    "recorded-triage-tiny",
    "recorded-ramp-tiny",
    "recorded-demo-tiny",
    "recorded-tune-tiny",
    "recorded-advise-l4",
    "recorded-demo-smollm2",
)


@pytest.fixture(scope="session")
def rendered_recorded() -> dict[str, str]:
    """name -> HTML of a fixture recorded from a real servops run (see fixtures README)."""
    return {name: render_html([load_fixture(name)]) for name in RECORDED}


def prediction_document(change: str = "--max-num-seqs 4") -> dict:
    """What `servops predict --json` writes for the recorded tiny ramp (concurrency 1, 2, 4 at
    --max-num-seqs 1) and `change`: the real performance model, calibrated on that real ramp."""
    from advisor.collect.server_args import parse_command
    from advisor.perf.measured import measured_ramp
    from advisor.perf.whatif import FlagChanges, ServerContext, what_if

    command = load_fixture("recorded-demo-tiny")["before"]["command"]  # the launch that ramp measured
    source = "recorded-ramp-tiny.json"
    server = ServerContext(command=parse_command(command, flag="--server-args"))
    prediction = what_if(
        measured_ramp(load_fixture("recorded-ramp-tiny"), source), source, server, FlagChanges.parse([change])
    )
    return json.loads(prediction.model_dump_json())


def tune_with_predictions() -> dict:
    """recorded-tune-tiny.json with the fields `servops tune` now records per round, computed by the real
    performance model as advisor/tune/loop.py does: calibrated on the ramp the round started from, the round's
    applied change predicted (`predicted`, `predicted_decision`), the other candidates ranked from the
    triage that proposed it, and the prediction's errors against the round's measured ramp."""
    from advisor.perf.criterion import TuneCriterion, decide
    from advisor.perf.ranking import compact, figure_errors, rank_changes
    from advisor.perf.whatif import FlagChanges
    from benchmarks.fitting import fitted

    doc = load_fixture("recorded-tune-tiny")
    criterion = TuneCriterion(**{k: v for k, v in doc["criterion"].items() if k != "description"})
    kept = doc["baseline"]
    for rnd in doc["rounds"]:
        forecaster = fitted(kept["ramp"], "kept", rnd["command_before"])
        applied = rnd["change"]["changes"][0]
        prediction = forecaster.predict(FlagChanges.of({applied["flag"]: str(applied["proposed"])}))
        before, after, helps, decision = decide(criterion, _ramp_of(forecaster.baseline), _ramp_of(prediction))
        decision = decision.replace("kept:", "predicted to help:").replace("rolled back:", "not predicted to help:")
        tried = {
            "rule": rnd["change"]["rule"],
            "title": rnd["change"]["title"],
            "changes": [applied],
            "criterion_before": before,
            "criterion_after": after,
            "helps": helps,
            "decision": decision,
            "prediction": compact(prediction),
            "rejected": None if helps else decision,
        }
        others = [c.model_dump(mode="json") for c in rank_changes(forecaster, criterion, kept["triage"], set())]
        rnd["predicted"] = tried["prediction"]
        rnd["predicted_decision"] = decision
        rnd["candidates"] = [tried, *(c for c in others if c["changes"][0]["proposed"] != applied["proposed"])]
        rnd["prediction_error"] = figure_errors(rnd["predicted"], rnd["ramp"])
        if rnd["kept"]:
            kept = rnd
    return json.loads(json.dumps(doc))


def _ramp_of(predicted) -> dict:
    return {
        "steps": [s.model_dump(mode="json") for s in predicted.steps],
        "safe_operating_point": (
            predicted.safe_operating_point.model_dump() if predicted.safe_operating_point else None
        ),
    }


def demo_with_prediction() -> dict:
    """recorded-demo-tiny.json with the `predicted` block a demo may record beside its after-ramp: the real
    model calibrated on the before-ramp, predicting the applied change, and its errors against the after-ramp."""
    from advisor.perf.ranking import compact, figure_errors
    from advisor.perf.whatif import FlagChanges
    from benchmarks.fitting import fitted

    doc = load_fixture("recorded-demo-tiny")
    forecaster = fitted(doc["before"]["ramp"], "before", doc["before"]["command"])
    change = doc["applied_change"]
    doc["predicted"] = compact(forecaster.predict(FlagChanges.of({change["flag"]: str(change["proposed"])})))
    doc["prediction_error"] = figure_errors(doc["predicted"], doc["after"]["ramp"])
    return json.loads(json.dumps(doc))
