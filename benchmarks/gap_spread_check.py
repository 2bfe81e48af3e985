"""Real vLLM's ITL tail against the replay, with and without the measured spread of token gaps (not a test)

    .venv/bin/python -m benchmarks.gap_spread_check \
        "tests/fixtures/vllm_cpu/queue_seqs1_ramp.json=--max-num-seqs 1" \
        "tests/fixtures/vllm_cpu/layout_1_ramp.json=" \
        "tests/fixtures/vllm_cpu/data_parallel_1_ramp.json=--enforce-eager" \
        "tests/fixtures/vllm_cpu/moderate_ramp.json=" [--json OUT.json]

Each argument is a recorded ramp and the server args it ran with. The baseline is the measured ramp
(same run); at every step the model replays three ways, each fitted on that ramp:

- without spread: the gaps are the replayed engine steps (the model before advisor/perf/gap_spread.py);
- with its own spread: measured on this ramp's tail-free steps (what `servops predict` does; at those
  steps the check is in-sample);
- with the others' spread: the median of the other ramps' spreads, this ramp's own not used (out of
  sample: does one server's spread carry to another recording of the same engine?).

Ratios are measured / predicted ITL p99 per step; the steps the spread was measured on are marked.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from advisor.cli.result_files import load_result
from advisor.errors import UserError
from advisor.perf.forecast import predict_ramp
from advisor.perf.whatif import Forecaster
from benchmarks.data_parallel_check import finish
from benchmarks.fitting import fitted

ENGINE = "vllm-cpu"


def _ramp(text: str) -> tuple[str, dict, str]:
    path, _, server_args = text.partition("=")
    return Path(path).stem.removesuffix("_ramp"), load_result(Path(path)), server_args


def _p99s(forecaster: Forecaster, spread: list[float]) -> dict[int, float | None]:
    cost = forecaster.cost.model_copy(update={"gap_spread": spread})
    replayed = predict_ramp(forecaster.ramp, forecaster.limits, cost, forecaster.workload, with_bands=False)
    return {s.step: s.itl_s.p99 for s in replayed.steps}


def compare(ramps: list[tuple[str, dict, str]]) -> dict:
    """Per ramp: its spread, the steps it was measured on, and per step the measured ITL p50/p99 against the
    three replays."""
    fits = {name: fitted(document, name, args, engine=ENGINE) for name, document, args in ramps}
    spreads = {name: f.cost.gap_spread for name, f in fits.items()}
    out = []
    for name, document, _ in ramps:
        forecaster = fits[name]
        others = [s for other, s in spreads.items() if other != name and s]
        pooled = [statistics.median(column) for column in zip(*others, strict=True)] if others else []
        readings = {
            "without": _p99s(forecaster, []),
            "own": _p99s(forecaster, spreads[name]),
            "others": _p99s(forecaster, pooled),
        }
        on = forecaster.gap_spread.steps if forecaster.gap_spread else []
        rows = []
        for step in document["steps"]:
            real = step["itl_s"]
            if not real.get("p99") or not step.get("valid", True):
                continue
            row = {"offered": step["offered"], "measured_p50": real["p50"], "measured_p99": real["p99"]}
            row["spread_measured_here"] = step["offered"] in on
            for key, p99s in readings.items():
                predicted = p99s.get(step["step"])
                row[f"{key}_p99"] = predicted
                row[f"{key}_ratio"] = real["p99"] / predicted if predicted else None
            rows.append(row)
        out.append({"ramp": name, "spread": spreads[name], "others_spread": pooled, "rows": rows})
    return {"ramps": out}


def _print(result: dict) -> None:
    def ms(value: float | None) -> str:
        return "–" if value is None else f"{value * 1e3:.0f}"

    def ratio(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    for ramp in result["ramps"]:
        spread = "/".join(f"{r:.2f}" for r in ramp["spread"]) or "not measured"
        others = "/".join(f"{r:.2f}" for r in ramp["others_spread"]) or "none"
        print(f"{ramp['ramp']}: spread p90/p95/p99 {spread} (the others': {others})")
        print("  streams | ITL p50 / p99 ms | without | own spread | others' spread   (measured / predicted p99)")
        for row in ramp["rows"]:
            mark = " *" if row["spread_measured_here"] else "  "
            print(
                f"  {row['offered']:>7g}{mark}| {ms(row['measured_p50']):>5} / {ms(row['measured_p99']):>5}    | "
                f"{ms(row['without_p99']):>5} ({ratio(row['without_ratio'])}) | "
                f"{ms(row['own_p99']):>5} ({ratio(row['own_ratio'])}) | "
                f"{ms(row['others_p99']):>5} ({ratio(row['others_ratio'])})"
            )
    print("  * the spread was measured on this step (in-sample for 'own spread')")


def main() -> None:
    parser = argparse.ArgumentParser(prog="gap_spread_check", description=__doc__.splitlines()[0])
    parser.add_argument("ramps", nargs="+", metavar="RAMP.json=SERVER_ARGS")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT.json")
    args = parser.parse_args()

    def work() -> dict:
        try:
            return compare([_ramp(text) for text in args.ramps])
        except (OSError, ValueError) as exc:
            raise UserError(str(exc)) from exc

    finish(parser, work, _print, args.json)


if __name__ == "__main__":
    main()
