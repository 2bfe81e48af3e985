"""Metric figures a person quoted in pasted text: a `/metrics` excerpt, a table copied from a dashboard,
or a figure in a sentence (`` `prefix_cache_hits_total` at exactly 0 ``, `` `vllm:num_requests_running == 0` ``).

Why: performance complaints arrive as text around a few figures, and the rules read metric snapshots, not
prose; a figure the person quoted is the evidence they are pointing at. Only names vLLM exposes are read
(advisor/catalog/vllm_metrics.py, every version's spelling), with or without the `vllm:` prefix, so a word
that merely looks like a metric never becomes one. Thousands separators (`442,227`) are removed; a
percentage of a `_perc` gauge becomes its fraction; a gauge said to grow without a figure ("climbs and never
drains") is read as at least 1. The figures are one reading at one moment: no rates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from advisor.catalog.vllm_metrics import FAMILIES, HISTOGRAM_SUFFIXES
from advisor.collect.metrics import VLLM_PREFIX

Sample = tuple[str, str, dict[str, str], float]  # (family type, series name, labels, value), as parse_exposition

_KIND_BY_NAME = {family.name.removeprefix(VLLM_PREFIX): family.kind for family in FAMILIES}
# Longest first, so `num_requests_waiting_by_reason` is not read as `num_requests_waiting`.
_NAMES = "|".join(re.escape(name) for name in sorted(_KIND_BY_NAME, key=len, reverse=True))
_SUFFIXES = "|".join(HISTOGRAM_SUFFIXES)
_SERIES = rf"`?(?:{re.escape(VLLM_PREFIX)})?(?P<name>{_NAMES})(?P<suffix>{_SUFFIXES})?\b(?P<labels>\{{[^{{}}]*\}})?`?"
_VALUE = r"`?(?P<value>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)(?P<percent>\s*%)?`?(?![\w.,]\d)"
# A sample line as /metrics prints it, in a table or a code block: the series, then its value alone.
_SAMPLE_LINE = re.compile(rf"^[\s>*|-]*{_SERIES}[\s|]+(?:==?\s*)?{_VALUE}[\s|]*$")
# A figure in a sentence: the series, a word or sign that says "is", an optional "exactly", the value.
_IN_PROSE = re.compile(
    rf"{_SERIES}\s*(?:==|=|:|\b(?:is|was|were|at|stays at|stayed at|stuck at|reads|read|shows|showed)\b)\s*"
    rf"(?:(?:exactly|only|just|still|a flat|flat at|constant at)\s+)*{_VALUE}",
    re.IGNORECASE,
)
# A gauge said to grow without a figure ("`vllm:num_requests_waiting` climbs and never drains"): at least 1.
_RISING = re.compile(
    rf"{_SERIES}\s*(?:keeps\s+|kept\s+)?(?:climbs|climbing|grows|growing|rises|rising|increases|increasing|"
    r"piles up|never drains)\b",
    re.IGNORECASE,
)
AT_LEAST_ONE = 1.0
_LABEL = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


@dataclass(slots=True)
class QuotedMetrics:
    """The figures read so far, the last quote of a series winning (a later paste is a later reading)."""

    samples: dict[tuple[str, tuple[tuple[str, str], ...]], Sample] = field(default_factory=dict)

    def read(self, text: str) -> int:
        """Read the figures `text` quotes; how many it held."""
        if "_" not in text:
            return 0
        line = _SAMPLE_LINE.match(text)
        matches = [line] if line else list(_IN_PROSE.finditer(text))
        rising = [] if line else [m for m in _RISING.finditer(text) if _KIND_BY_NAME[_name(m)] == "gauge"]
        for sample in map(_sample, matches):
            self.samples[_key(sample)] = sample
        for match in rising:  # a figure quoted for the same series says more
            sample = _sample(match, AT_LEAST_ONE)
            self.samples.setdefault(_key(sample), sample)
        return len(matches) + len(rising)

    def all(self) -> list[Sample]:
        return list(self.samples.values())


def _key(sample: Sample) -> tuple[str, tuple[tuple[str, str], ...]]:
    return sample[1], tuple(sorted(sample[2].items()))


def _name(match: re.Match[str]) -> str:
    """The series' base name as vLLM spells it (the patterns ignore case: a sentence may capitalise it)."""
    return match["name"].lower()


def _sample(match: re.Match[str], stated: float | None = None) -> Sample:
    """The sample a match quotes: its figure, or `stated` where the words gave none."""
    base = _name(match)
    kind = _KIND_BY_NAME[base]
    value = float(match["value"].replace(",", "")) if stated is None else stated
    if stated is None and match["percent"] and base.endswith("_perc"):
        value /= 100
    labels = dict(_LABEL.findall(match["labels"] or ""))
    return kind, VLLM_PREFIX + base + (match["suffix"] or "").lower(), labels, value
