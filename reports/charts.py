"""Server-side SVG charts for ramp reports, drawn with matplotlib.

Why SVG rendered here and not a JavaScript chart library: the report must open offline,
years later, with no network and no script runtime to keep alive. An SVG string inlined
in the HTML is just markup. Text stays text (`svg.fonttype: none`): small, searchable and
drawn by any sans-serif font the reader has.

Every chart takes plain series (x = offered load) and returns an SVG fragment whose ids
carry a unique prefix, so several charts can live in one HTML document without their
`<clipPath>`/`<defs>` ids colliding.

A series with no value at any step is never drawn as an empty line on a meaningless axis:
`line_chart` leaves it out and says in words why (the series' `missing`, which the views
compute from what the JSON lacks, e.g. "the target exposed no /metrics during the ramp").
A chart with nothing to draw is those words alone, with no SVG. This is the one place that
decision is made, for the ramp, demo, tune and prediction views alike.
"""

from __future__ import annotations

import html
import io
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

__all__ = ["Marker", "Series", "line_chart", "no_data", "svg_from_figure"]


@cache
def _matplotlib():
    """matplotlib, imported on first use: it costs about a second, and every `servops`
    command imports this module when the CLI registers `report`, `demo` and `tune`."""
    import matplotlib

    matplotlib.use("Agg")  # no display, ever: reports render on headless CI and servers
    import matplotlib.pyplot as plt

    return matplotlib, plt


_chart_ids = itertools.count(1)

# Colour-blind-safe palette (Okabe–Ito), so p50/p99 pairs stay distinguishable in print.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
INVALID_COLOUR = "#b0b0b0"


@dataclass(slots=True)
class Series:
    """One line on a chart. `None` values are gaps (a step that has no figure)."""

    label: str
    x: Sequence[float]
    y: Sequence[float | None]
    valid: Sequence[bool] | None = None  # per point; invalid points are drawn grey and hollow
    dashed: bool = False
    secondary_axis: bool = False
    colour: str | None = None  # default: the next palette colour
    band: tuple[Sequence[float | None], Sequence[float | None]] | None = None  # (low, high), shaded
    missing: str = ""  # why no step has a value, said in words when the series is left out

    @property
    def has_data(self) -> bool:
        return any(v is not None for v in self.y)


@dataclass(slots=True)
class Marker:
    """A vertical line at an x value (the knee, the safe operating point)."""

    x: float
    label: str
    colour: str = "#d62728"
    style: str = "--"


def line_chart(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    markers: Sequence[Marker] = (),
    y2_label: str | None = None,
    width_in: float = 6.4,
    height_in: float = 4.0,
    subject: str | None = None,
) -> str:
    """Draw series against a shared x axis and return an inline-ready SVG fragment.

    The legend sits under the plot so it never hides a point; invalid steps get one
    shared legend entry ("invalid step") however many series have them. Series without a
    value are left out and named under the chart with their `missing` reason; when none has
    a value the result is only the words "No `subject` (default: the title): why", no SVG.
    """
    # Colours follow the series' places, so a series left out does not recolour the others.
    coloured = [(one, one.colour or colour) for colour, one in zip(itertools.cycle(PALETTE), series)]
    drawn = [(one, colour) for one, colour in coloured if one.has_data]
    left_out = _by_reason(one for one in series if not one.has_data)
    if not drawn:
        reason = (
            next(iter(left_out), "")
            if len(left_out) <= 1
            else "; ".join(f"{', '.join(labels)}: {why}" for why, labels in left_out.items())
        )
        return no_data(subject or title, reason)
    note = "; ".join(f"{', '.join(labels)} ({why})" for why, labels in left_out.items())
    svg = _draw(title, x_label, y_label, drawn, markers, y2_label, width_in, height_in)
    return svg + (f'<p class="chart-note" role="note">Not drawn: {html.escape(note)}.</p>' if note else "")


def no_data(subject: str, reason: str) -> str:
    """The words shown instead of a chart that would have nothing to draw (HTML, escaped)."""
    if subject[1:2].islower():  # "Throughput" reads "No throughput"; "TTFT" stays as it is
        subject = subject[:1].lower() + subject[1:]
    return (
        f'<p class="chart-empty" role="note"><b>No {html.escape(subject)}</b>: {html.escape(reason or _NO_VALUE)}.</p>'
    )


_NO_VALUE = "no step has a value for it"


def _by_reason(series: Iterable[Series]) -> dict[str, list[str]]:
    """Labels of the series left out, grouped by why (each reason said once)."""
    grouped: dict[str, list[str]] = {}
    for one in series:
        grouped.setdefault(one.missing or _NO_VALUE, []).append(one.label)
    return grouped


def _draw(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[tuple[Series, str]],
    markers: Sequence[Marker],
    y2_label: str | None,
    width_in: float,
    height_in: float,
) -> str:
    _, plt = _matplotlib()
    fig, ax = plt.subplots(figsize=(width_in, height_in))
    ax2 = ax.twinx() if any(one.secondary_axis for one, _ in series) else None
    try:
        handles = []
        any_invalid = False
        for one, colour in series:
            target = ax2 if (one.secondary_axis and ax2 is not None) else ax
            line, had_invalid = _plot_series(target, one, colour)
            handles.append(line)
            any_invalid = any_invalid or had_invalid
        if any_invalid:
            handles.append(ax.scatter([], [], facecolors="none", edgecolors=INVALID_COLOUR, s=36, label="invalid step"))
        for marker in markers:
            handles.append(
                ax.axvline(marker.x, color=marker.colour, linestyle=marker.style, linewidth=1.2, label=marker.label)
            )
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(True, alpha=0.3)
        if ax2 is not None:
            ax2.set_ylabel(y2_label or "")
        rows = max(1, (len(handles) + 2) // 3)
        legend_in = 0.22 * rows + 0.15
        fig.set_size_inches(width_in, height_in + legend_in)
        bottom = (0.55 + legend_in) / (height_in + legend_in)
        # Fixed margins instead of tight_layout: same look for our labels, a third faster.
        fig.subplots_adjust(
            left=0.12, right=0.87 if ax2 is not None else 0.97, bottom=bottom, top=1 - 0.35 / (height_in + legend_in)
        )
        if handles:
            fig.legend(
                handles=handles, fontsize=8, loc="lower center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 0.0)
            )
        return svg_from_figure(fig)
    finally:
        plt.close(fig)


def svg_from_figure(fig) -> str:
    """Serialise a figure to an SVG fragment with unique ids and no XML prologue."""
    buffer = io.StringIO()
    matplotlib, _ = _matplotlib()
    with matplotlib.rc_context({"svg.hashsalt": "servops", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return _make_inline(buffer.getvalue(), prefix=f"c{next(_chart_ids)}-")


def _plot_series(ax, one: Series, colour: str):
    """Plot one series; invalid points are drawn hollow and grey. Returns (line, had_invalid)."""
    xs = list(one.x)
    ys = [float("nan") if v is None else float(v) for v in one.y]
    linestyle = "--" if one.dashed else "-"
    (line,) = ax.plot(xs, ys, color=colour, linestyle=linestyle, linewidth=1.6, label=one.label)
    if one.band is not None:  # a prediction's uncertainty: the range its stated error allows
        low, high = ([float("nan") if v is None else float(v) for v in edge] for edge in one.band)
        ax.fill_between(xs, low, high, color=colour, alpha=0.15, linewidth=0)
        if len(xs) == 1:  # a one-step ramp has no area to shade: draw the range as a bar
            ax.vlines(xs, low, high, color=colour, alpha=0.3, linewidth=8)
    valid = list(one.valid) if one.valid is not None else [True] * len(xs)
    good = [(x, y) for x, y, ok in zip(xs, ys, valid, strict=False) if ok]
    bad = [(x, y) for x, y, ok in zip(xs, ys, valid, strict=False) if not ok]
    if good:
        ax.scatter(*zip(*good, strict=True), color=colour, s=18, zorder=3)
    if bad:
        ax.scatter(*zip(*bad, strict=True), facecolors="none", edgecolors=INVALID_COLOUR, s=36, zorder=4)
    return line, bool(bad)


_PROLOGUE = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
# Namespace declarations are identifiers, not links, but an HTML parser does not need them
# for inline SVG, and leaving no "http" in the file makes "no external URL" checkable by grep.
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_ID = re.compile(r'\bid="([^"]+)"')
_URL_REF = re.compile(r"url\(#([^)]+)\)")
_HREF_REF = re.compile(r'href="#([^"]+)"')


def _make_inline(svg: str, prefix: str) -> str:
    svg = _PROLOGUE.sub("", svg)
    svg = _METADATA.sub("", svg)
    svg = _XMLNS.sub("", svg)
    svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = _URL_REF.sub(lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = _HREF_REF.sub(lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    return svg.strip()
