"""Layouts of one host under the same ramp, against the first (not a test)

    .venv/bin/python -m benchmarks.layouts_check \
        "one engine=tests/fixtures/vllm_cpu/layout_1_ramp.json=" \
        "2 data-parallel engines=tests/fixtures/vllm_cpu/layout_dp2_ramp.json=--data-parallel-size 2" \
        "2 pipeline stages=tests/fixtures/vllm_cpu/layout_pp2_ramp.json=--pipeline-parallel-size 2"

Each argument is LABEL=RAMP=SERVER_ARGS: a `servops ramp --json` result and the flags of the server it
measured (recorded by `tests/fixtures/vllm_cpu/record.py --only layouts`: the same closed-loop load
against each). The first is the baseline: every other layout's output tok/s, TTFT p50 and ITL p50 are
printed beside it at each level, with the ratio. Each ramp is also fitted as `servops predict --ramp
RAMP --server-args SERVER_ARGS` fits it, and the fit's in-sample error is printed: how well the
performance model describes that layout as it reads it (a data-parallel ramp as one engine's share, a
pipelined one as one engine).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from advisor.cli.result_files import load_result
from advisor.errors import UserError
from advisor.perf.measured import measured_ramp
from benchmarks.data_parallel_check import ENGINE, figures_of, finish, ratios
from benchmarks.fitting import fitted


def compare(layouts: list[tuple[str, dict, str]]) -> dict:
    """{label: per-level figures, ratios to the first layout, the fit's error}."""
    base_label, base_doc, _ = layouts[0]
    base = {s.offered: s for s in measured_ramp(base_doc, base_label).usable_steps}
    out: dict = {"baseline": base_label, "layouts": {}}
    for label, document, server_args in layouts:
        steps = {s.offered: s for s in measured_ramp(document, label).usable_steps}
        fit = fitted(document, label, server_args, engine=ENGINE).calibration
        rows = []
        for level, step in sorted(steps.items()):
            row = {"streams": level, **figures_of(step)}
            if level in base:
                row["ratio"] = ratios(row, figures_of(base[level]))
            rows.append(row)
        out["layouts"][label] = {
            "server_args": server_args,
            "rows": rows,
            "fit_rms": fit.cost.relative_error if fit else None,
            "fit_worst": max((abs(r.error) for r in fit.rows), default=0.0) if fit else None,
        }
    return out


def _print(result: dict) -> None:
    print(f"baseline: {result['baseline']}")
    for label, layout in result["layouts"].items():
        print(
            f"{label} ({layout['server_args'] or 'no flags'}): fit in-sample RMS {layout['fit_rms']:.0%}, "
            f"worst {layout['fit_worst']:.0%}"
        )
        for row in layout["rows"]:
            ratio = row.get("ratio", {})
            cells = [
                f"{row['output_tokens_per_s']:.1f} tok/s (x{ratio.get('output_tokens_per_s', float('nan')):.2f})",
                f"TTFT p50 {row['ttft_p50'] * 1000:.0f} ms (x{ratio.get('ttft_p50', float('nan')):.2f})",
                f"ITL p50 {row['itl_p50'] * 1000:.1f} ms (x{ratio.get('itl_p50', float('nan')):.2f})",
            ]
            print(f"  {row['streams']:g} streams: " + ", ".join(cells))


def _layout(text: str) -> tuple[str, dict, str]:
    parts = text.split("=", 2)
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise UserError(f"{text!r}: give LABEL=RAMP.json=SERVER_ARGS (SERVER_ARGS may be empty: 'one engine=r.json=')")
    label, path, server_args = parts
    return label, load_result(Path(path)), server_args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("layouts", nargs="+", help="LABEL=RAMP.json=SERVER_ARGS; the first is the baseline")
    parser.add_argument("--json", type=Path, help="write the comparison here")
    args = parser.parse_args()
    finish(parser, lambda: compare([_layout(text) for text in args.layouts]), _print, args.json)


if __name__ == "__main__":
    main()
