"""Read /metrics text into {(sample name, labels): value} with prometheus_client's own parser."""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    """The one sample called `name` whose labels include `labels` (0.0 if absent)."""
    for (sample_name, sample_labels), sample_value in samples(text).items():
        if sample_name == name and set(labels.items()) <= sample_labels:
            return sample_value
    return 0.0


def wait_until(server, predicate: Callable[[str], bool], timeout_s: float = 30.0) -> str:
    """Poll /metrics until predicate(text) holds (bounded); returns the last text."""
    deadline = time.monotonic() + timeout_s
    text = server.metrics_text()
    while not predicate(text) and time.monotonic() < deadline:
        time.sleep(0.2)
        text = server.metrics_text()
    return text
