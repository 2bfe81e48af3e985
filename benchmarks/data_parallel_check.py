"""A real two-engine vLLM against what servops states and predicts from one engine (not a test)

    .venv/bin/python -m benchmarks.data_parallel_check \
        tests/fixtures/vllm_cpu/data_parallel_1_ramp.json tests/fixtures/vllm_cpu/data_parallel_2_ramp.json \
        [--engines 2] [--json OUT.json]

Both ramps are of the same host, the same flags and the same closed-loop load (recorded by
`tests/fixtures/vllm_cpu/record.py --only data_parallel`): the first of one vLLM engine, the second of
`--data-parallel-size N`. Three readings of the N-engine server, each against its measured ramp
(the baseline, same run):

- stated: the one-engine ramp written as N engines behind one front end
  (`benchmarks.two_engines.behind_one_front`, the inverse of `advisor.perf.measured.one_replica`),
  at the levels both ramps ran;
- predicted: the performance model fitted on the one-engine ramp, its replay at each level's busiest
  engine's streams, times the engines that had work (the fleet triage's replica count quotes);
- read back: the model fitted on the N-engine ramp as one engine's share (what `servops predict
  --server-args "... --data-parallel-size N"` does), its replay against the lone engine's measured
  ramp at the same per-engine load.

Ratios are measured / stated (or predicted) per level, for output tok/s, TTFT p50 and ITL p50.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path

from advisor.cli.result_files import load_result
from advisor.errors import UserError
from advisor.perf.forecast import figure
from advisor.perf.measured import measured_ramp
from benchmarks.fitting import fitted
from benchmarks.two_engines import behind_one_front

FIGURES = ("output_tokens_per_s", "ttft_p50", "itl_p50")
# Latencies do not add over engines; throughputs do.
TOTALS = ("output_tokens_per_s",)
ENGINE = "vllm-cpu"


def compare(one: dict, many: dict, engines: int, server_args: str = "--enforce-eager") -> dict:
    """Rows per level of the N-engine ramp: measured, stated, predicted, with their ratios; and the
    read-back rows per engine level."""
    measured = {s.offered: s for s in measured_ramp(many, "the N-engine ramp").usable_steps}
    stated = {s.offered: s for s in measured_ramp(behind_one_front(one, engines), "stated").usable_steps}
    alone = fitted(one, "the one-engine ramp", server_args, engine=ENGINE)
    replay = {s.offered: s for s in alone.baseline.steps}
    rows = []
    for level, step in sorted(measured.items()):
        busy, share = min(level, engines), math.ceil(level / engines)
        row: dict = {"streams": level, "per_engine": share, "measured": figures_of(step)}
        if level in stated:
            row["stated"] = figures_of(stated[level])
        if share in replay:
            row["predicted"] = {
                k: v * busy if k in TOTALS else v for k, v in figures_of(replay[share]).items() if v is not None
            }
        for kind in ("stated", "predicted"):
            if kind in row:
                row[f"measured/{kind}"] = ratios(row["measured"], row[kind])
        rows.append(row)
    shared = fitted(many, "the N-engine ramp", f"{server_args} --data-parallel-size {engines}", engine=ENGINE)
    lone = {s.offered: s for s in measured_ramp(one, "the one-engine ramp").usable_steps}
    back = []
    for step in shared.baseline.steps:
        if step.offered in lone and not any(b["per_engine"] == step.offered for b in back):
            pair = {"per_engine": step.offered, "lone_measured": figures_of(lone[step.offered])}
            pair["read_back"] = figures_of(step)
            pair["lone_measured/read_back"] = ratios(pair["lone_measured"], pair["read_back"])
            back.append(pair)
    return {
        "engines": engines,
        "rows": rows,
        "read_back": back,
        "fits": {"one_engine": alone.calibration.model_dump(), "n_engines": shared.calibration.model_dump()},
        "summary": _summary(rows, back),
    }


def figures_of(step) -> dict:
    """A step's FIGURES by name (shared with benchmarks/layouts_check.py)."""
    return {name: figure(step, name) for name in FIGURES}


def ratios(measured: dict, other: dict) -> dict:
    """measured / other, figure by figure, where both have it."""
    return {k: measured[k] / other[k] for k in FIGURES if measured.get(k) and other.get(k)}


def _summary(rows: list[dict], back: list[dict]) -> dict:
    out = {}
    for key, items in (("measured/stated", rows), ("measured/predicted", rows), ("lone_measured/read_back", back)):
        for name in FIGURES:
            values = [r[key][name] for r in items if key in r and name in r[key]]
            if values:
                out[f"{key} {name}"] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def _print(result: dict) -> None:
    n = result["engines"]
    print(f"{n} engines, measured against the one-engine ramp stated as {n} engines and against the model")
    print("streams | per engine | tok/s measured / stated / predicted | TTFT p50 ms | ITL p50 ms")
    for row in result["rows"]:
        m, s, p = row["measured"], row.get("stated", {}), row.get("predicted", {})

        def cell(name: str, scale: float = 1.0, m=m, s=s, p=p) -> str:
            return " / ".join("–" if d.get(name) is None else f"{d[name] * scale:.1f}" for d in (m, s, p))

        print(
            f"{row['streams']:g} | {row['per_engine']:g} | {cell('output_tokens_per_s')} | "
            f"{cell('ttft_p50', 1000)} | {cell('itl_p50', 1000)}"
        )
    print("read back as one engine's share: per engine | lone engine measured tok/s / read back")
    for pair in result["read_back"]:
        print(
            f"{pair['per_engine']:g} | {pair['lone_measured']['output_tokens_per_s']:.1f} / "
            f"{pair['read_back']['output_tokens_per_s']:.1f}"
        )
    for key, value in result["summary"].items():
        print(f"{key}: median {value['median']:.2f} (min {value['min']:.2f}, max {value['max']:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("one", type=Path, help="`servops ramp --json` of the one-engine server")
    parser.add_argument("many", type=Path, help="the same ramp of the --data-parallel-size N server")
    parser.add_argument("--engines", type=int, default=2, help="N, the second server's engines (default 2)")
    parser.add_argument("--json", type=Path, help="write the comparison here")
    args = parser.parse_args()
    if args.engines < 2:
        parser.error(f"--engines {args.engines}: the second server has 2 or more engines")
    finish(parser, lambda: compare(load_result(args.one), load_result(args.many), args.engines), _print, args.json)


def finish(
    parser: argparse.ArgumentParser, work: Callable[[], dict], show: Callable[[dict], None], out: Path | None
) -> None:
    """Run a comparison, print it and write its JSON; a bad input is one line and exit 2 (also
    benchmarks/layouts_check.py)."""
    try:
        result = work()
    except UserError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    show(result)
    if out:
        out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
