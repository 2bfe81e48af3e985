"""`promtool test rules` files made from recorded /metrics: each alert of the pack against real windows.

Why from recordings: an alert that never met the series a real vLLM exposes can be wrong forever
(both public packs' preemption alert queries a series vLLM never had). The recorded situations
(tests/fixtures/vllm_cpu: vLLM 0.32 on CPU, two scrapes `interval_s` apart) are turned into
promtool's input series: every counter (a `_total`, or a histogram's `_bucket`/`_sum`/`_count`)
grows at the rate the two scrapes measured, every gauge holds its second scrape's value, for
DURATION_MIN minutes at one sample per SCRAPE_S (what a Prometheus scraping that server would have
stored had the situation held that long). `frozen=True` keeps every counter still: the engine-stall
situation (requests in the server, no step, no token), made from a loaded recording.

Each series gets the labels a scrape adds (`instance`, `job`), so the pack's `by (instance,
model_name)` sees one server.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SCRAPE_S = 15
DURATION_MIN = 60
INSTANCE = "vllm-0:8000"
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)")


@dataclass
class Situation:
    """A recorded window as promtool input: its name, the two scrapes and the seconds between them."""

    name: str
    before: Path
    after: Path
    interval_s: float
    frozen: bool = False
    expect: set[str] = field(default_factory=set)  # alerts that must fire at the evaluation time
    model_name: str = "smol"


def input_series(situation: Situation) -> list[dict[str, str]]:
    """promtool `input_series` entries for every vllm: sample of the situation."""
    types = _types(situation.after.read_text())
    before = _samples(situation.before.read_text())
    after = _samples(situation.after.read_text())
    steps = DURATION_MIN * 60 // SCRAPE_S
    out = []
    for key, value in sorted(after.items()):
        name, labels = key
        if not name.startswith("vllm:"):
            continue
        start = before.get(key, value)
        if _is_counter(name, types) and not situation.frozen:
            growth = max(0.0, value - start) * SCRAPE_S / situation.interval_s
            values = f"{_plain(start)}+{_plain(growth)}x{steps}"
        else:
            held = start if situation.frozen and _is_counter(name, types) else value
            values = f"{_plain(held)}+0x{steps}"
        series_labels = f'{labels},instance="{INSTANCE}",job="vllm"' if labels else f'instance="{INSTANCE}",job="vllm"'
        out.append({"series": f"{name}{{{series_labels}}}", "values": values})
    return out


def promtool_tests(
    rule_file: str, situations: list[Situation], alert_labels: dict[str, dict[str, str]], eval_min: int
) -> dict:
    """One promtool test file: a test per situation, asserting at `eval_min` minutes, for every alert of
    the pack (`alert_labels`: its name -> its severity and rule labels), that it fires with exactly its
    labels where the situation expects it and stays silent elsewhere."""
    tests = []
    for situation in situations:
        server = {"instance": INSTANCE, "model_name": situation.model_name}
        checks = [
            {
                "eval_time": f"{eval_min}m",
                "alertname": alert,
                "exp_alerts": [{"exp_labels": {**labels, **server}}] if alert in situation.expect else [],
            }
            for alert, labels in alert_labels.items()
        ]
        tests.append(
            {
                "name": situation.name,
                "interval": f"{SCRAPE_S}s",
                "input_series": input_series(situation),
                "alert_rule_test": checks,
            }
        )
    return {"rule_files": [rule_file], "evaluation_interval": "30s", "tests": tests}


def _plain(value: float) -> str:
    """A number in plain decimals: promtool's `a+bxn` reads the `+` of an exponent as its own."""
    return f"{value:.9f}".rstrip("0").rstrip(".") or "0"


def _types(text: str) -> dict[str, str]:
    return {parts[2]: parts[3] for line in text.splitlines() if (parts := line.split()) and line.startswith("# TYPE")}


def _is_counter(name: str, types: dict[str, str]) -> bool:
    for suffix in ("_bucket", "_sum", "_count", "_total", "_created"):
        if name.endswith(suffix) and types.get(name.removesuffix(suffix)) in ("histogram", "counter"):
            return True
    return types.get(name) == "counter"


def _samples(text: str) -> dict[tuple[str, str], float]:
    samples = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or line.startswith("#"):
            continue
        value = float(match["value"])
        if math.isfinite(value) and not match["name"].endswith("_created"):
            samples[(match["name"], match["labels"] or "")] = value
    return samples


def fast_pack(path: Path) -> None:
    """The exported pack at `path`, rewritten for a live test: every `for:` at 5 s and the groups evaluated
    every second. The expressions stay as exported; only the waiting is shortened, so a test does not sit
    five minutes through a situation that holds from its first second."""
    pack = yaml.safe_load(path.read_text())
    for group in pack["groups"]:
        group["interval"] = "1s"
        for rule in group["rules"]:
            rule["for"] = "5s"
    path.write_text(yaml.safe_dump(pack, sort_keys=False))
