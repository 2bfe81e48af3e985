"""Before/after figures from two ramp results, and the criteria `servops tune` decides by.

Why here and not in reports: a comparison is a measurement result (it goes into the demo
and tune JSON, and a keep/roll-back decision rests on it); reports only display it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["Comparison", "compare_ramps", "safe_point", "p99_at", "common_top_load"]


class Comparison(BaseModel):
    name: str
    before: float | None
    after: float | None
    ratio: float | None  # after / before
    better: Literal["higher", "lower"]
    definition: str


def compare_ramps(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Comparison]:
    """Headline figures: safe operating point, and latency/throughput at the top common load."""
    rows = [
        _row(
            "safe operating point (offered load)",
            safe_point(before),
            safe_point(after),
            "higher",
            "highest valid step meeting the SLOs (loadtest's safe_operating_point)",
        )
    ]
    load = common_top_load(before, after)
    if load is not None:
        for metric, label, better in (
            ("ttft_s", "TTFT p99 (s)", "lower"),
            ("itl_s", "ITL p99 (s)", "lower"),
            ("e2e_s", "E2E p99 (s)", "lower"),
        ):
            rows.append(
                _row(
                    f"{label} at offered {load:g}",
                    p99_at(before, metric, load),
                    p99_at(after, metric, load),
                    better,
                    f"p99 of {metric} in the step with offered load {load:g}",
                )
            )
        for key, label in (("output_tokens_per_s", "output tokens/s"), ("goodput_rps", "goodput req/s")):
            rows.append(
                _row(
                    f"{label} at offered {load:g}",
                    _figure_at(before, key, load),
                    _figure_at(after, key, load),
                    "higher",
                    f"{key} of the step with offered load {load:g}",
                )
            )
    return rows


def safe_point(ramp: Mapping[str, Any] | None) -> float | None:
    safe = (ramp or {}).get("safe_operating_point")
    return float(safe["offered"]) if isinstance(safe, Mapping) and safe.get("offered") is not None else None


def common_top_load(before: Mapping[str, Any], after: Mapping[str, Any]) -> float | None:
    """The highest offered load that both ramps measured validly."""
    loads = _valid_loads(before) & _valid_loads(after)
    return max(loads) if loads else None


def p99_at(ramp: Mapping[str, Any] | None, metric: str, load: float) -> float | None:
    step = _step_at(ramp, load)
    block = step.get(metric) if step else None
    value = block.get("p99") if isinstance(block, Mapping) else None
    return float(value) if value is not None else None


def _figure_at(ramp: Mapping[str, Any], key: str, load: float) -> float | None:
    step = _step_at(ramp, load)
    return float(step[key]) if step and step.get(key) is not None else None


def _step_at(ramp: Mapping[str, Any] | None, load: float) -> Mapping[str, Any] | None:
    for step in (ramp or {}).get("steps") or []:
        if step.get("valid") and abs(float(step.get("offered", -1)) - load) < 1e-9:
            return step
    return None


def _valid_loads(ramp: Mapping[str, Any]) -> set[float]:
    return {float(s["offered"]) for s in ramp.get("steps") or [] if s.get("valid") and s.get("ok_requests", 1)}


def _row(
    name: str, before: float | None, after: float | None, better: Literal["higher", "lower"], definition: str
) -> Comparison:
    ratio = after / before if (before not in (None, 0) and after is not None) else None
    return Comparison(name=name, before=before, after=after, ratio=ratio, better=better, definition=definition)
